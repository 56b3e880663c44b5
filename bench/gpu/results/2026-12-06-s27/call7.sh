#!/usr/bin/env bash
# Stop 27, call 7: every issue 9/10 figure on this stop's tree (run_h200.sh final, families gemmq /
# wino / gemvq / gemm tested on the GPU), then two more rounds of the b1 suites: f32, q8 and q4 of
# this tree and q8 / q4 of the previous binary (lowconv_base), fresh tuning caches each.
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb FINAL_S=330 FAMS="gemmq wino gemvq gemm" bash bench/gpu/run_h200.sh final > /dev/null 2>&1
mv $OUT/summary.txt $OUT/final_summary.txt 2>/dev/null
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c7; mkdir -p $o/raw
lb=.cl-debs/pb/lowconv_base
S() { local b=$1 mb=$2; shift 2; timeout 60 $b conv --suite resnet34-112 --mb $mb --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
for r in 1 2; do
  for w in f32 q8 q4; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $lc 1 --weights $w --tune fast > $o/raw/b1_${w}_new_r$r.jsonl; done
  for w in q8 q4; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $lb 1 --weights $w --tune fast > $o/raw/b1_${w}_base_r$r.jsonl; done
done
cd $o && tar czf raw.tgz raw && rm -rf raw
