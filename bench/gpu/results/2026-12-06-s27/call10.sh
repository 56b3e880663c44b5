#!/usr/bin/env bash
# Stop 27, call 10: the tuner's host floor from the least host time per launch (not each candidate's
# own enqueue time): the b1 suites f32 / q8 / q4, three fresh tunings each with this tree, interleaved
# with the previous tip's binary (lowconv_base, d7a3caf), tuner debug kept; GPU tests of gemm / gemmq.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c10; mkdir -p $o/raw
lb=.cl-debs/pb/lowconv_base
S() { local b=$1; shift; timeout 60 $b conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@"; }
for fam in gemm gemmq; do
  LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=$fam LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 100 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1
done
for r in 1 2 3; do for b in new base; do bin=$lc; [ $b = base ] && bin=$lb; for w in f32 q8 q4; do
  rm -rf /tmp/lc-d; LOWCONV_CACHE_DIR=/tmp/lc-d LOWCONV_CL_DEBUG=1 S $bin --weights $w --tune fast > $o/raw/${b}_${w}_r$r.jsonl 2> $o/raw/${b}_${w}_r$r.err
done; done; done
cd $o && tar czf raw.tgz raw && rm -rf raw
