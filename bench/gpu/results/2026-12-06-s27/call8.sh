#!/usr/bin/env bash
# Stop 27, call 8: the tuner's candidate times (LOWCONV_CL_DEBUG=1) for the b1 q4 suite with the
# fused gemmq tiles, two fresh tunings, and f32 once: why s4.conv1.first left gemmq 32x32s in call 7.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c8; mkdir -p $o/raw
S() { local b=$1; shift; timeout 60 $b conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@"; }
for r in 1 2; do for w in q4 f32; do
  [ $w = f32 ] && [ $r = 2 ] && continue
  rm -rf /tmp/lc-d; LOWCONV_CACHE_DIR=/tmp/lc-d LOWCONV_CL_DEBUG=1 S $lc --weights $w --tune fast > $o/raw/d_${w}_r$r.jsonl 2> $o/raw/d_${w}_r$r.err
done; done
cd $o && tar czf raw.tgz raw && rm -rf raw
