# Session 13 call 5: main's head (53fa5bc): b1 q8/q4 vs f32 samples, IResNet cold twice.
ocl=/tmp/lc-ocl; mkdir -p $ocl/vendors; for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done; echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 LOWCONV_CACHE_DIR=/tmp/lc-s5
b=.cl-debs/pb; o=$OUT; lc=$b/lowconv
{
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
for r in 1 2; do export LOWCONV_CACHE_DIR=/tmp/lc-ic-$r CUDA_CACHE_PATH=/tmp/cc-ic-$r; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/dev/null > $o/ir_cold_$r.json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('cold $r start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'median_ms', j['median_ms'])" $o/ir_cold_$r.json
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/dev/null > $o/ir_warm_$r.json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('warm $r start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'median_ms', j['median_ms'])" $o/ir_warm_$r.json; done
unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-s5
for r in 1 2 3; do for w in f32 q8 q4; do $lc conv --suite resnet34-112 --mb 1 --device opencl --tune fast --weights $w --json --repeat 50 > $o/b1_${w}_$r.jsonl 2>/dev/null; done; done
python3 - $o <<'PY'
import json, math, sys
d = sys.argv[1]
L = lambda p: {r["desc"]: r["median_ms"] for r in map(json.loads, (l for l in open(p) if l.startswith("{"))) if r.get("median_ms")}
for r in (1, 2, 3):
    f = L(f"{d}/b1_f32_{r}.jsonl")
    for w in ("q8", "q4"):
        q = L(f"{d}/b1_{w}_{r}.jsonl"); x = [q[k] / f[k] for k in q if k in f]
        print(f"round {r} {w}/f32 geomean {math.exp(sum(map(math.log, x)) / len(x)):.3f} max {max(x):.2f} over {len(x)}")
PY
} 2>&1 | tee $o/summary.txt
