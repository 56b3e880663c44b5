#!/usr/bin/env bash
# Stop 27, call 3: the tuner's candidate times (LOWCONV_CL_DEBUG=1) for the resnet34-112 b1 q4 and f32
# suites, three fresh tunings each, and call 2's gemmq experiment again, packed in one archive.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c3; mkdir -p $o/raw
lx=.cl-debs/pb/lowconv_exp
S() { local b=$1; shift; timeout 120 $b conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@"; }
export LOWCONV_CACHE_DIR=/tmp/lc-c3
{
for r in 1 2 3; do for w in q4 f32; do
  echo "== suite b1 $w round $r, tuner debug ($(date +%T))"; rm -rf /tmp/lc-c3
  LOWCONV_CL_DEBUG=1 S $lc --weights $w --tune fast > $o/raw/d_${w}_r$r.jsonl 2> $o/raw/d_${w}_r$r.err
done; done
for v in 64x64s 32x32s 64x64; do for m in normal NOQUANT QONLY; do
  echo "== gemmq forced $v $m ($(date +%T))"
  ( [ $m = normal ] || export LC_EXP_$m=1; export LOWCONV_CL_FAMILY=gemmq LOWCONV_CL_VARIANT=$v
    S $lx --weights q4 --tune fast > $o/raw/gq_${v}_$m.jsonl 2>/dev/null )
done; done
} 2>&1 | tee $o/summary.txt
cd $o && tar czf raw.tgz raw && rm -rf raw
