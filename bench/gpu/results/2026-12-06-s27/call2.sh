#!/usr/bin/env bash
# Stop 27, call 2: (1) the resnet34-112 b1 suites f32 / q8 / q4 (tuning fast, fresh cache) per layer;
# (2) what gemmq's input quantization costs at batch 1: family gemmq forced (64x64s, 32x32s) in an
# experiment build (.cl-debs/pb/lowconv_exp: LC_EXP_NOQUANT=1 skips gemmq_quant, LC_EXP_QONLY=1 runs
# only it; timings only, results wrong); (3) warm starts, plain and with LOWCONV_CL_TIMING, interleaved.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c2; mkdir -p $o
lx=.cl-debs/pb/lowconv_exp
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
S() { local b=$1; shift; timeout 120 $b conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
{
export LOWCONV_CACHE_DIR=/tmp/lc-c2
for r in 1 2; do for w in f32 q8 q4; do
  echo "== suite b1 $w round $r ($(date +%T))"; rm -rf /tmp/lc-c2; S $lc --weights $w --tune fast > $o/b1_${w}_r$r.jsonl
done; done
for v in 64x64s 32x32s 64x64; do for m in normal NOQUANT QONLY; do
  echo "== gemmq forced $v $m ($(date +%T))"
  ( [ $m = normal ] || export LC_EXP_$m=1; export LOWCONV_CL_FAMILY=gemmq LOWCONV_CL_VARIANT=$v
    S $lx --weights q4 --tune fast > $o/gq_${v}_$m.jsonl )
done; done
[ -n "$WARM" ] && {
export LOWCONV_CACHE_DIR=/tmp/lc-c2w
timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 >/dev/null 2>&1
echo "== warm starts, plain (p) and LOWCONV_CL_TIMING=1 (t) interleaved ($(date +%T))"
for k in 1 2 3 4 5; do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 --json > $o/ir.json 2>/dev/null
  echo "p $k start_ms $(python3 -c "import json; print(json.load(open('$o/ir.json'))['start_ms'])")"
  LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 --json > $o/ir.json 2>$o/t$k.txt
  echo "t $k start_ms $(python3 -c "import json; print(json.load(open('$o/ir.json'))['start_ms'])") $(grep -o 'platforms + devices [0-9.]* ms, context + queue [0-9.]* ms' $o/t$k.txt)"
done; }
} 2>&1 | tee $o/summary.txt
cd $o && tar czf raw.tgz *.jsonl t*.txt && rm -f *.jsonl t*.txt ir.json
