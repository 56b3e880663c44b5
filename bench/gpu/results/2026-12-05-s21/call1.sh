#!/usr/bin/env bash
# Stop 21, call 1: family gemm loading two K tiles ahead (B, default) against one ahead (A:
# -DLCG_PF2=0 through LOWCONV_CL_EXTRA_OPTIONS), own caches, interleaved: resnet34-112 suites b1
# f32/q8/q4 (2 rounds) and b32 f32, od96 and IResNet-34 b1 f32/q4 (300 runs, 2 rounds), IResNet's
# cold start; then with B: GPU tests of gemm/wino/gemmq, cuDNN suites, whole nets against PyTorch,
# the q4 GEMV and PyTorch's cuBLAS GEMV at the same bytes. Each step starts only if it fits END_S.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
b=$(cd .cl-debs/pb && pwd)
o=/tmp/c1; mkdir -p $o; t0=$(date +%s); end=$(( t0 + ${END_S:-560} ))
left() { echo $(( end - $(date +%s) )); }
go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
snap() { tar czf $OUT/c1.tgz -C $o . 2>/dev/null; cp $o/summary.txt $OUT/ 2>/dev/null; }
trap snap EXIT
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
export LOWCONV_CACHE_DIR=/tmp/lc-B
$lc devices | tee $o/devices.txt
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
AB() { local t=$1; shift; local x=""; [ $t = A ] && x="-DLCG_PF2=0"
  LOWCONV_CACHE_DIR=/tmp/lc-$t LOWCONV_CL_EXTRA_OPTIONS="$x" "$@"; }
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'])" $1; }
go 150 "A/B suites: resnet34-112 b1 f32/q8/q4, 2 rounds interleaved (A one tile ahead, B two)" && {
  for r in 1 2; do for w in f32 q8 q4; do for t in A B; do
    AB $t timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/ab_r34_b1_${w}_$t$r.jsonl 2>&1
  done; done; done; snap; }
go 60 "A/B suites: resnet34-112 b32 f32" && for t in A B; do
  AB $t timeout 60 $lc conv --suite resnet34-112 --mb 32 --device opencl --weights f32 --tune fast --json --repeat 20 --warmup 3 > $o/ab_r34_b32_f32_$t.jsonl 2>&1; done
python3 - "$o" <<'PY'
import json, sys, math, os
d = sys.argv[1]
def load(f): return {j['name']: j for j in (json.loads(l) for l in open(f) if l.startswith('{'))} if os.path.exists(f) else {}
for r in (1, 2):
  for t in 'AB':
    f = load(f'{d}/ab_r34_b1_f32_{t}{r}.jsonl')
    for w in ('q8', 'q4'):
      q = load(f'{d}/ab_r34_b1_{w}_{t}{r}.jsonl')
      if f and q and set(f) == set(q):
        g = math.exp(sum(math.log(q[k]['median_ms'] / f[k]['median_ms']) for k in f) / len(f))
        print(f'round {r} {t}: b1 {w} / f32 geomean {g:.3f}')
for w in ('f32', 'q8', 'q4'):
  a, b = load(f'{d}/ab_r34_b1_{w}_A2.jsonl'), load(f'{d}/ab_r34_b1_{w}_B2.jsonl')
  a1, b1 = load(f'{d}/ab_r34_b1_{w}_A1.jsonl'), load(f'{d}/ab_r34_b1_{w}_B1.jsonl')
  if a and b and a1 and b1:
    g = math.exp(sum(math.log(min(b[k]['median_ms'], b1[k]['median_ms']) / min(a[k]['median_ms'], a1[k]['median_ms'])) for k in a) / len(a))
    print(f'b1 {w}: B / A geomean (best of 2 rounds each) {g:.3f}')
    for k in a: print(f"   {w} {k:18s} A {a1[k]['median_ms']*1e3:6.1f} {a[k]['median_ms']*1e3:6.1f} us {a[k]['variant']:16s} B {b1[k]['median_ms']*1e3:6.1f} {b[k]['median_ms']*1e3:6.1f} us {b[k]['variant']}")
a, b = load(f'{d}/ab_r34_b32_f32_A.jsonl'), load(f'{d}/ab_r34_b32_f32_B.jsonl')
if a and b:
  g = math.exp(sum(math.log(b[k]['median_ms'] / a[k]['median_ms']) for k in a) / len(a))
  print(f'b32 f32: B / A geomean {g:.3f}')
PY
go 120 "A/B nets: od96 and IResNet-34 b1 f32/q4, 300 runs, 2 rounds interleaved" && {
  for t in A B; do for m in od96 ir34; do for w in f32 q4; do AB $t timeout 60 $lc bench /tmp/$m.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done; done; done
  for r in 1 2; do for m in od96 ir34; do for w in f32 q4; do for t in A B; do
    AB $t timeout 60 $lc bench /tmp/$m.onnx --device opencl --weights $w --repeat 300 --json > $o/${m}_${w}_$t$r.json 2>/dev/null
    echo "$m $w $t round $r: $(med $o/${m}_${w}_$t$r.json) ms"; done; done; done; done; snap; }
go 60 "GPU tests (B): test_cl_conv quick, families gemm, wino, gemmq" && for f in gemm wino gemmq; do
  LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | tail -1; done
go 40 "IResNet34-112 load to first result (B): empty lowconv and driver caches, then warm twice" && {
  export LOWCONV_CACHE_DIR=/tmp/lc-cold CUDA_CACHE_PATH=/tmp/cc-cold; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
  for s in cold warm1 warm2; do
    timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir34_$s.err > $o/ir34_$s.json
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('iresnet34 b1 $s start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" $o/ir34_$s.json
  done; unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-B; snap; }
go 25 "GEMV K=4096 N=14336 q4/q8 (B) and PyTorch cuBLAS GEMV at the same bytes" && {
  for w in q4 q8; do timeout 30 $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights $w --block 32 --json \
    --repeat 100 --check --tol 0.05 | tee $o/gemv_$w.jsonl | cut -c1-400; done
  timeout 60 python3 bench/gpu/torch_gemv.py | tee $o/torch_gemv.jsonl; snap; }
for mb in 1 32; do
  go 25 "cuDNN resnet34-112 b$mb" && timeout 60 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb $mb > $o/resnet34-112_b${mb}_cudnn_r1.jsonl
done
cp $o/ab_r34_b1_f32_B2.jsonl $o/resnet34-112_b1_f32_r1.jsonl; cp $o/ab_r34_b1_q8_B2.jsonl $o/resnet34-112_b1_q8.jsonl
cp $o/ab_r34_b1_q4_B2.jsonl $o/resnet34-112_b1_q4.jsonl; cp $o/ab_r34_b32_f32_B.jsonl $o/resnet34-112_b32_f32_r1.jsonl
python3 bench/gpu/summarize.py $o 2>&1 | head -60
go 60 "whole nets against PyTorch (IResNet-34 b1/b32, OCR-det-like neck 96)" &&
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/gpu/models.py --lowconv $lc --only iresnet34,ocr_det96 --reps 10 > $o/models.jsonl
cut -c1-600 $o/models.jsonl 2>/dev/null
} 2>&1 | tee $o/summary.txt
