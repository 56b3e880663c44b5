#!/usr/bin/env bash
# Stop 22, call 1: Winograd F(2x2)/F(4x4) for q8/q4 convs with U made from the codes in the GEMM's
# staging (conv_gemm.cl LCG_WQ). GPU test of family wino (f32 + q8/q4 shapes); resnet34-112 batch 1
# q8/q4 with the family (B, default) against without (A: LOWCONV_CL_SKIP=wino), f32 beside, two
# rounds interleaved, own caches; IResNet34 q8/q4 b1 the same way; the forced F(4x4) tiles at q4.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/wq; mkdir -p $o
T=$(cd .cl-debs/pb/tests && pwd)
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$lc devices | tail -2
echo "== test_cl_conv quick, family wino, on the GPU $(date +%T)"
LOWCONV_CACHE_DIR=/tmp/lc-t LC_TEST_QUICK=1 LOWCONV_CL_FAMILY=wino LC_REQUIRE_OPENCL=1 timeout 150 $T/test_cl_conv 2>&1 | grep -E "wino:|passed|FAIL" | head -8
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')" 2>&1 | tail -2
AB() { local t=$1; shift; local s=""; [ $t = A ] && s=wino; LOWCONV_CACHE_DIR=/tmp/lc-$t LOWCONV_CL_SKIP=$s "$@"; }
for r in 1 2; do for w in f32 q8 q4; do for t in A B; do
  [ $w = f32 ] && [ $t = A ] && continue
  AB $t timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/r34_${w}_$t$r.jsonl 2>&1
done; done; done
echo "== resnet34-112 b1 per layer (ms; A: no wino for q, B: with) $(date +%T)"
python3 - $o <<'PY'
import json, sys, math, glob
d = sys.argv[1]
def load(f):
    r = {}
    for l in open(f):
        if l.startswith("{"):
            j = json.loads(l); r[j["name"]] = j
    return r
R = {}
for f in glob.glob(d + "/r34_*.jsonl"):
    k = f.split("r34_")[1][:-6]; R[k] = load(f)
names = list(R["f32_B1"])
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
for r in "12":
    f = R["f32_B" + r]
    print(f"round {r}: layer  f32 | q8 A  q8 B | q4 A  q4 B   (B's kernel)")
    for n in names:
        g = lambda k: R[k][n]["median_ms"]
        print(f"  {n:16s} {g('f32_B'+r):.4f} | {g('q8_A'+r):.4f} {g('q8_B'+r):.4f} | {g('q4_A'+r):.4f} {g('q4_B'+r):.4f}  {R['q8_B'+r][n].get('variant')} / {R['q4_B'+r][n].get('variant')}")
    for w in ("q8", "q4"):
        for t in "AB":
            print(f"  {w} {t} / f32 geomean: {gm([R[w+'_'+t+r][n]['median_ms'] / f[n]['median_ms'] for n in names]):.3f}")
for r in "12":
    for w in ("q8", "q4"):
        print(f"{w} B/f32 round {r} worst: " + ", ".join(f"{n} {R[w+'_B'+r][n]['median_ms']/R['f32_B'+r][n]['median_ms']:.2f}" for n in names if R[w+'_B'+r][n]['median_ms'] / R['f32_B'+r][n]['median_ms'] > 1.05))
PY
echo "== IResNet34-112 b1 q8/q4 A/B (300 runs, medians) $(date +%T)"
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], j.get('kernels'))" $1; }
for t in A B; do for w in f32 q8 q4; do AB $t timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done; done
for r in 1 2; do for w in f32 q8 q4; do for t in A B; do
  AB $t timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights $w --repeat 300 --json > $o/ir_${w}_$t$r.json 2>/dev/null
  echo "ir34 $w $t round $r: $(med $o/ir_${w}_$t$r.json) ms"
done; done; done
echo "== forced F(4x4)/F(2x2) tiles at q4 on s1.conv1.first and s3.conv1.first $(date +%T)"
for desc in mb1ic64ih112oc64kh3ph1 mb1ic128ih28oc256kh3ph1; do for w in f32 q8 q4; do for v in f4x4_64x64 f4x4_32x32 f2x2_64x64; do
  LOWCONV_CACHE_DIR=/tmp/lc-f LOWCONV_CL_FAMILY=wino LOWCONV_CL_VARIANT=$v timeout 30 $lc conv $desc --device opencl --weights $w --json --repeat 100 --check 2>&1 | python3 -c "
import json,sys
for l in sys.stdin:
    if l.startswith('{'): j=json.loads(l); print('$desc $w $v', '%.4f' % j['median_ms'], 'err %.2e' % (j.get('max_rel_err') or 0), j.get('local_size'))
    elif 'rror' in l: print('$desc $w $v', l.strip()[:150])"
done; done; done
} 2>&1 | tee $o/summary.txt
tar czf $OUT/wq.tgz -C $o . 2>/dev/null
