#!/usr/bin/env bash
# Stop 27, call 4: why gemmq_quant takes ~7 us at batch 1 (call 3): the quantizer alone
# (LC_EXP_QONLY) at local sizes 32-256 (LC_EXP_QLWS), and an empty body (-DLC_EXP_QEMPTY): the
# floor of one launch between profiling events. Experiment build, timings only.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c4; mkdir -p $o/raw
lx=.cl-debs/pb/lowconv_exp
S() { local b=$1; shift; timeout 120 $b conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@"; }
export LOWCONV_CACHE_DIR=/tmp/lc-c4 LOWCONV_CL_FAMILY=gemmq LOWCONV_CL_VARIANT=64x64s LC_EXP_QONLY=1
{
for r in 1 2; do
for l in 32 64 128 256; do echo "== qonly lws $l r$r ($(date +%T))"; LC_EXP_QLWS=$l S $lx --weights q4 > $o/raw/q_l${l}_r$r.jsonl 2>/dev/null; done
echo "== qempty r$r"; LOWCONV_CL_EXTRA_OPTIONS=-DLC_EXP_QEMPTY S $lx --weights q4 > $o/raw/q_empty_r$r.jsonl 2>/dev/null
done
} 2>&1 | tee $o/summary.txt
cd $o && tar czf raw.tgz raw && rm -rf raw
