#!/usr/bin/env bash
# Stop 28, call 3: why q8 / q4 lose on resnet34-112's 1x1 stride-2 shortcuts (call 2: 1.07-1.21x of
# f32 over five tunings, family split). Each shortcut forced to split c4 / c8 at f32, q8, q4, the
# quantized ones with the staged weights (default) and without (-DLCS_STAGE=0), interleaved, three
# rounds; then every candidate's time from the tuner at level normal (LOWCONV_CL_DEBUG=1).
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c3; mkdir -p $o
D="mb1ic64ih112oc64oh56kh1sh2ph0 mb1ic64ih56oc128oh28kh1sh2ph0 mb1ic128ih28oc256oh14kh1sh2ph0 mb1ic256ih14oc512oh7kh1sh2ph0"
export LOWCONV_CACHE_DIR=/tmp/lc-c3
one() { timeout 30 env "$@" --device opencl --json --repeat 200 --warmup 5 --tune none 2>/dev/null | python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print('%.2f' % (j['median_ms']*1e3), end=' ')"; }
{
nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2 3; do for d in $D; do for v in c4 c8; do
  echo -n "r$r $d $v: "
  for w in f32 q8 q4; do echo -n "$w "; one LOWCONV_CL_FAMILY=split LOWCONV_CL_VARIANT=$v $lc conv $d --weights $w; done
  for w in q8 q4; do echo -n "${w}-nostage "; one LOWCONV_CL_EXTRA_OPTIONS=-DLCS_STAGE=0 LOWCONV_CL_FAMILY=split LOWCONV_CL_VARIANT=$v $lc conv $d --weights $w; done
  echo
done; done; done
for d in $D; do for w in f32 q8 q4; do
  echo "== tuner candidates $d $w"
  rm -rf /tmp/lc-c3t; LOWCONV_CACHE_DIR=/tmp/lc-c3t LOWCONV_CL_DEBUG=1 timeout 60 $lc conv $d --device opencl --weights $w --tune normal --json --repeat 100 2>&1 | grep -v "^{" | cut -c1-220 | head -40
done; done
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
