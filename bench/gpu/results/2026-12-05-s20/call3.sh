#!/usr/bin/env bash
# Stop 20, call 3 (the A/B planned as call 2, which found no device, and the figures in one call):
# q8/q4 weights of families direct, dw and split dequantized once per work-group into local memory
# (B, the default) against by every item (A: -DLCD_STAGE=0 -DLCDW_STAGE=0 -DLCS_STAGE=0 through
# LOWCONV_CL_EXTRA_OPTIONS), own caches, interleaved; then with B: the GPU tests of the changed
# families, the resnet34-112 suites against cuDNN (PyTorch, same call), IResNet-34's cold and warm
# start, whole nets against PyTorch, the q4 GEMV. Each step starts only if its time fits in END_S.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
b=$(cd .cl-debs/pb && pwd)
o=/tmp/c3; mkdir -p $o; t0=$(date +%s); end=$(( t0 + ${END_S:-500} ))
left() { echo $(( end - $(date +%s) )); }
go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
snap() { tar czf $OUT/c3.tgz -C $o . 2>/dev/null; cp $o/summary.txt $OUT/ 2>/dev/null; }
trap snap EXIT
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
export LOWCONV_CACHE_DIR=/tmp/lc-B
$lc devices | tee $o/devices.txt
for f in direct dw split; do go 20 "test_cl_conv quick, family $f, on the GPU" &&
  LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | tail -1; done
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
AB() { local t=$1; shift; local x=""; [ $t = A ] && x="-DLCD_STAGE=0 -DLCDW_STAGE=0 -DLCS_STAGE=0"
  LOWCONV_CACHE_DIR=/tmp/lc-$t LOWCONV_CL_EXTRA_OPTIONS="$x" "$@"; }
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'])" $1; }
go 200 "A/B: od96 and IResNet-34 b1 q4, 3 rounds interleaved (A unstaged, B staged)" && {
  for t in A B; do for m in od96 ir34; do AB $t timeout 60 $lc bench /tmp/$m.onnx --device opencl --weights q4 --repeat 5 >/dev/null 2>&1; done; done
  for r in 1 2 3; do for m in od96 ir34; do for t in A B; do
    AB $t timeout 60 $lc bench /tmp/$m.onnx --device opencl --weights q4 --repeat 300 --json > $o/${m}_q4_$t$r.json 2>/dev/null
    echo "$m q4 $t round $r: $(med $o/${m}_q4_$t$r.json) ms"; done; done; done
  for t in A B; do AB $t timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights q4 --per-layer --repeat 20 > $o/od96_q4_pl_$t.txt 2>&1; done
  for t in A B; do for w in q8 q4; do
    AB $t timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/ab_r34_${w}_$t.jsonl 2>&1
  done; done; snap; }
for mb in 1 32; do for w in f32 q8 q4; do
  n=resnet34-112_b${mb}_$w.jsonl; [ $w = f32 ] && n=resnet34-112_b${mb}_f32_r1.jsonl
  go 30 "resnet34-112 b$mb $w, tuning fast" && timeout 60 $lc conv --suite resnet34-112 --mb $mb --device opencl --weights $w \
    --tune fast --json --repeat 50 --warmup 3 > $o/$n 2>&1
  done
  go 25 "cuDNN resnet34-112 b$mb" && timeout 60 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb $mb > $o/resnet34-112_b${mb}_cudnn_r1.jsonl
  snap
done
python3 bench/gpu/summarize.py $o 2>&1 | head -80
python3 - "$o" <<'PY'
import json, sys, math, os
d = sys.argv[1]
def load(f): return {j['name']: j for j in (json.loads(l) for l in open(f) if l.startswith('{'))} if os.path.exists(f) else {}
f = load(f'{d}/resnet34-112_b1_f32_r1.jsonl')
for w in ('q8', 'q4'):
  a = load(f'{d}/ab_r34_{w}_A.jsonl'); b = load(f'{d}/ab_r34_{w}_B.jsonl')
  if not a or not b or not f: continue
  for t, x in (('A', a), ('B', b)):
    g = math.exp(sum(math.log(x[k]['median_ms'] / f[k]['median_ms']) for k in f) / len(f))
    print(f'A/B {t}: resnet34-112 b1 {w} / f32 geomean {g:.3f}')
  for k in a:
    print(f"   {w} {k:18s} A {a[k]['median_ms']*1e3:6.1f} us {a[k]['variant']:16s} B {b[k]['median_ms']*1e3:6.1f} us {b[k]['variant']:16s} f32 {f[k]['median_ms']*1e3:6.1f} {f[k]['variant']}")
PY
go 30 "IResNet34-112 load to first result: empty lowconv and driver caches, then warm twice" && {
  export LOWCONV_CACHE_DIR=/tmp/lc-cold CUDA_CACHE_PATH=/tmp/cc-cold; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
  for s in cold warm1 warm2; do
    timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir34_$s.err > $o/ir34_$s.json
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('iresnet34 b1 $s start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" $o/ir34_$s.json
  done; unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-B; snap; }
go 60 "whole nets against PyTorch (IResNet-34 b1/b32, OCR-det-like neck 96)" &&
  PYTHONUNBUFFERED=1 timeout $(left) python3 bench/gpu/models.py --lowconv $lc --only iresnet34,ocr_det96 --reps 10 > $o/models.jsonl
cut -c1-600 $o/models.jsonl 2>/dev/null
go 12 "GEMV K=4096 N=14336 q4" && timeout 30 $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights q4 --block 32 --json \
  --repeat 100 --check --tol 0.05 | tee $o/gemv_q4.jsonl | cut -c1-300
} 2>&1 | tee $o/summary.txt
