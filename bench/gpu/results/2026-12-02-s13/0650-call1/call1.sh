# Session 13 call 1: GPU tests; IResNet cold start with the plan-wide collect pass vs without (A/B,
# interleaved); gemm k16 tiles forced against their k8 siblings on resnet34-112 b1/b32; level normal vs fast.
ocl=/tmp/lc-ocl; mkdir -p $ocl/vendors; for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done; echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 LOWCONV_CACHE_DIR=/tmp/lcc
b=.cl-debs/pb; o=$OUT; lc=$b/lowconv
{
echo "== GPU tests $(date +%T)"; $lc devices | grep measured
for f in gemm gemmq wino gemv direct dw gemvq; do echo "family $f: $(LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 $b/tests/test_cl_conv 2>&1 | tail -1)"; done
for t in test_cl_gemv test_cl_inaff test_cl_ops test_cl_cache test_cl_faults; do echo "$t: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 $b/tests/$t 2>&1 | tail -1)"; done
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
m = iresnet34.build(112); onnx.save(m, '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
mst() { timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir_$1.err > $o/ir_$1.json; python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('$1 start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j.get('tune_ms'), 'median_ms', j['median_ms'])" $o/ir_$1.json; }
echo "== IResNet cold: collect pass on / off, interleaved, fresh lowconv + driver caches each $(date +%T)"
for r in 1 2; do for c in 1 0; do export LOWCONV_CACHE_DIR=/tmp/lc-ir-$r-$c CUDA_CACHE_PATH=/tmp/cc-ir-$r-$c; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
  LOWCONV_CL_COLLECT=$c LOWCONV_CL_TIMING=2 mst cold_c${c}_$r; grep -h "collect pass\|op init\|planning" $o/ir_cold_c${c}_$r.err | cut -c1-160; done; done
grep -h "built " $o/ir_cold_c1_1.err | sed 's/-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL //' | cut -c1-120
echo "== IResNet warm (caches of round 1), collect on / off $(date +%T)"
for r in 1 2; do for c in 1 0; do export LOWCONV_CACHE_DIR=/tmp/lc-ir-1-$c CUDA_CACHE_PATH=/tmp/cc-ir-1-$c; LOWCONV_CL_COLLECT=$c mst warm_c${c}_$r; done; done
unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-k16
echo "== gemm tiles forced: k16 vs k8, resnet34-112 f32 $(date +%T)"
for mb in 1 32; do for v in 32x32 32x32k16 64x64 64x64k16 32x32s 32x32k16s 64x64s 64x64k16s; do
  [ $mb = 32 ] && [ "${v%s}" != "$v" ] && continue
  LOWCONV_CL_FAMILY=gemm LOWCONV_CL_VARIANT=$v timeout 90 $lc conv --suite resnet34-112 --mb $mb --device opencl --json --repeat 30 --warmup 3 > $o/k_b${mb}_$v.jsonl 2>/dev/null; done; done
for v in 32x32 32x32k16 64x64s 64x64k16s; do LOWCONV_CL_FAMILY=gemm LOWCONV_CL_VARIANT=$v timeout 90 $lc conv --suite resnet34-112 --mb 1 --weights q4 --device opencl --json --repeat 30 --warmup 3 > $o/k_b1q4_$v.jsonl 2>/dev/null; done
python3 - $o <<'PY'
import json, math, sys, os
d = sys.argv[1]
L = lambda p: {r["desc"]: r["median_ms"] for r in map(json.loads, (l for l in open(p) if l.startswith("{"))) if r.get("median_ms")}
for tag, pairs in (("b1", [("32x32","32x32k16"),("64x64","64x64k16"),("32x32s","32x32k16s"),("64x64s","64x64k16s")]),
                   ("b32", [("32x32","32x32k16"),("64x64","64x64k16")]), ("b1q4", [("32x32","32x32k16"),("64x64s","64x64k16s")])):
    for a, b in pairs:
        pa, pb = f"{d}/k_{tag}_{a}.jsonl", f"{d}/k_{tag}_{b}.jsonl"
        if not (os.path.exists(pa) and os.path.exists(pb)): continue
        A, B = L(pa), L(pb); x = [B[k] / A[k] for k in A if k in B]
        if x: print(f"{tag} {b}/{a}: geomean {math.exp(sum(map(math.log, x)) / len(x)):.3f} min {min(x):.2f} max {max(x):.2f} over {len(x)}: " + " ".join(f"{v:.2f}" for v in x))
PY
echo "== b1 suite f32: tuning fast vs normal (normal offers the k16 tiles) $(date +%T)"
for lv in fast normal; do LOWCONV_CACHE_DIR=/tmp/lc-lv-$lv timeout 200 $lc conv --suite resnet34-112 --mb 1 --device opencl --tune $lv --json --repeat 50 > $o/lv_$lv.jsonl 2>/dev/null; done
python3 - $o <<'PY'
import json, math, sys
d = sys.argv[1]
L = lambda p: {r["desc"]: r for r in map(json.loads, (l for l in open(p) if l.startswith("{"))) if r.get("median_ms")}
f, n = L(f"{d}/lv_fast.jsonl"), L(f"{d}/lv_normal.jsonl"); x = []
for k in f:
    if k in n: x.append(n[k]["median_ms"] / f[k]["median_ms"]); print(f"{k[:36]:36s} fast {f[k]['median_ms']*1e3:6.1f} {f[k]['variant']:18s} normal {n[k]['median_ms']*1e3:6.1f} {n[k]['variant']}")
print(f"normal/fast geomean {math.exp(sum(map(math.log, x)) / len(x)):.3f} over {len(x)}")
PY
echo "== od96 fast vs normal (device time per run) $(date +%T)"
for lv in fast normal; do LOWCONV_CACHE_DIR=/tmp/lc-od-$lv timeout 150 $lc bench /tmp/od96.onnx --device opencl --tune $lv --repeat 20 > $o/od_$lv.txt 2>&1; grep -h "device time\|median" $o/od_$lv.txt | cut -c1-150; done
LOWCONV_CACHE_DIR=/tmp/lc-od-normal timeout 60 $lc bench /tmp/od96.onnx --device opencl --tune normal --repeat 20 --per-layer > $o/od_normal_layers.txt 2>&1
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
