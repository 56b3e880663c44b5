#!/usr/bin/env bash
# Stop 20, call 2: q8/q4 weights of families direct, dw and split dequantized once per work-group
# into local memory (B, default) against by every item (A: -DLCD_STAGE=0 -DLCDW_STAGE=0
# -DLCS_STAGE=0 through LOWCONV_CL_EXTRA_OPTIONS), own caches, interleaved: od96 and IResNet-34 b1
# (f32 as control), the resnet34-112 b1 suite at q8/q4/f32, od96 q4 per layer; the GPU's
# test_cl_conv (direct, dw, split).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c2; mkdir -p $o
for f in direct dw split; do echo "test_cl_conv $f: $(LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1)"; done
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
AB() { local t=$1; shift; local x=""; [ $t = A ] && x="-DLCD_STAGE=0 -DLCDW_STAGE=0 -DLCS_STAGE=0"
  LOWCONV_CACHE_DIR=/tmp/lc-$t LOWCONV_CL_EXTRA_OPTIONS="$x" "$@"; }
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'])" $1; }
for t in A B; do for m in od96 ir34; do for w in f32 q4; do AB $t timeout 120 $lc bench /tmp/$m.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done; done; done
for r in 1 2 3; do for m in od96 ir34; do for w in q4 f32; do for t in A B; do
  AB $t timeout 120 $lc bench /tmp/$m.onnx --device opencl --weights $w --repeat 300 --json > $o/${m}_${w}_$t$r.json 2>/dev/null
  echo "$m $w $t round $r: $(med $o/${m}_${w}_$t$r.json) ms"; done; done; done; done
for t in A B; do AB $t timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights q4 --per-layer --repeat 20 > $o/od96_q4_pl_$t.txt 2>&1; done
for t in A B; do for w in f32 q8 q4; do
  AB $t timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/r34_${w}_$t.jsonl 2>&1
done; done
python3 - "$o" <<'PY'
import json, sys, math
d = sys.argv[1]
def load(f): return {j['name']: j for j in (json.loads(l) for l in open(f) if l.startswith('{'))}
for t in 'AB':
  f = load(f'{d}/r34_f32_{t}.jsonl')
  for w in ('q8', 'q4'):
    q = load(f'{d}/r34_{w}_{t}.jsonl')
    g = math.exp(sum(math.log(q[k]['median_ms'] / f[k]['median_ms']) for k in f) / len(f))
    print(f'{t}: resnet34-112 b1 {w} / f32 geomean {g:.3f}')
for w in ('f32', 'q8', 'q4'):
  a = load(f'{d}/r34_{w}_A.jsonl'); b = load(f'{d}/r34_{w}_B.jsonl')
  g = math.exp(sum(math.log(b[k]['median_ms'] / a[k]['median_ms']) for k in a) / len(a))
  print(f'{w}: staged / unstaged geomean {g:.3f}')
  for k in a:
    if any(f in a[k]['variant'] + b[k]['variant'] for f in ('direct', 'split')):
      print(f"   {k:18s} A {a[k]['median_ms']*1e3:6.1f} us {a[k]['variant']:14s} B {b[k]['median_ms']*1e3:6.1f} us {b[k]['variant']}")
PY
tar czf $OUT/c2.tgz -C $o .
