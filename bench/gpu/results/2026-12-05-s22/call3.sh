#!/usr/bin/env bash
# Stop 22, call 3: gemm's q rows dequantized after the tile's FMAs (B, default) against at the stage
# between the barriers (A: -DLCG_DEQ_LATE=0 through LOWCONV_CL_EXTRA_OPTIONS), own caches, rounds
# interleaved: resnet34-112 b1 f32/q8/q4 suites (two rounds), b32 q8/q4 (one), IResNet-34 and od96
# q4 by `lowconv bench --repeat 300` (two rounds); the gemm family's GPU test first.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/dl; mkdir -p $o
T=$(cd .cl-debs/pb/tests && pwd)
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$lc devices | tail -1
LOWCONV_CACHE_DIR=/tmp/lc-t LC_TEST_QUICK=1 LOWCONV_CL_FAMILY=gemm LC_REQUIRE_OPENCL=1 timeout 100 $T/test_cl_conv 2>&1 | tail -1
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
AB() { local t=$1; shift; local x=""; [ $t = A ] && x="-DLCG_DEQ_LATE=0"; LOWCONV_CACHE_DIR=/tmp/lc-$t LOWCONV_CL_EXTRA_OPTIONS="$x" "$@"; }
for r in 1 2; do for w in f32 q8 q4; do for t in A B; do
  [ $w = f32 ] && [ $t = A ] && continue
  AB $t timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/r34_${w}_$t$r.jsonl 2>&1
done; done; done
for w in q8 q4; do for t in A B; do
  AB $t timeout 120 $lc conv --suite resnet34-112 --mb 32 --device opencl --weights $w --tune fast --json --repeat 20 --warmup 3 > $o/b32_${w}_$t.jsonl 2>&1
done; done
echo "== resnet34-112 per layer, us (A: dequantized at the stage; B: after the FMAs) $(date +%T)"
python3 - $o <<'PY'
import json, sys, math, glob
d = sys.argv[1]
def load(f):
    r = {}
    for l in open(f):
        if l.startswith("{"):
            j = json.loads(l); r[j["name"]] = j
    return r
R = {f.split("/")[-1][:-6]: load(f) for f in glob.glob(d + "/*.jsonl")}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
names = list(R["r34_f32_B1"])
for r in "12":
    f = R["r34_f32_B" + r]
    print(f"round {r}: layer  f32 | q8 A  q8 B | q4 A  q4 B  (B's kernels)")
    for n in names:
        g = lambda k: 1e3 * R[k][n]["median_ms"]
        print(f"  {n:16s} {g('r34_f32_B'+r):6.1f} | {g('r34_q8_A'+r):6.1f} {g('r34_q8_B'+r):6.1f} | {g('r34_q4_A'+r):6.1f} {g('r34_q4_B'+r):6.1f}  {R['r34_q8_B'+r][n].get('variant')} / {R['r34_q4_B'+r][n].get('variant')}")
    for w in ("q8", "q4"):
        print("  " + w + " / f32 geomean: " + ", ".join(f"{t} {gm([R['r34_'+w+'_'+t+r][n]['median_ms'] / f[n]['median_ms'] for n in names]):.3f}" for t in "AB"))
for w in ("q8", "q4"):
    a, b = R["b32_" + w + "_A"], R["b32_" + w + "_B"]
    print(f"b32 {w}: B / A geomean {gm([b[n]['median_ms'] / a[n]['median_ms'] for n in a]):.3f}, sum A {sum(a[n]['median_ms'] for n in a):.3f} B {sum(b[n]['median_ms'] for n in b):.3f} ms")
PY
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], j.get('kernels'))" $1; }
for m in ir34 od96; do for t in A B; do AB $t timeout 90 $lc bench /tmp/$m.onnx --device opencl --weights q4 --repeat 5 >/dev/null 2>&1; done; done
for r in 1 2; do for m in ir34 od96; do for t in A B; do
  AB $t timeout 60 $lc bench /tmp/$m.onnx --device opencl --weights q4 --repeat 300 --json > $o/${m}_$t$r.json 2>/dev/null
  echo "$m q4 $t round $r: $(med $o/${m}_$t$r.json) ms, kernels"
done; done; done
} 2>&1 | tee $o/summary.txt
tar czf $OUT/dl.tgz -C $o . 2>/dev/null
