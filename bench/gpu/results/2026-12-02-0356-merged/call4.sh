# Session call 4: the merged tree. GPU tests, AVX-512 CPU tests on the host, cold/warm starts, b1 q/f32 samples.
ocl=/tmp/lc-ocl; mkdir -p $ocl/vendors; for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done; echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 LOWCONV_CACHE_DIR=/tmp/lcc
b=.cl-debs/pb; o=$OUT; lc=$b/lowconv
{
echo "== GPU tests $(date +%T)"; $lc devices | grep measured
for f in gemm gemmq wino gemv direct dw gemvq; do echo "family $f: $(LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | tail -1)"; done
for t in test_cl_gemv test_cl_inaff test_cl_ops test_cl_cache test_cl_faults; do echo "$t: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 $b/tests/$t 2>&1 | tail -1)"; done
echo "== host CPU tests ($(grep -m1 'model name' /proc/cpuinfo)) $(date +%T)"
for t in test_kernels test_vmath test_conv_qi8 test_conv_routes test_conv_winograd test_wino_qweights test_conv_quant test_conv_qgemv test_conv_direct test_conv_stem test_ops_spatial; do
  [ -x $b/tests/$t ] && echo "$t: $(cd tests && LC_TEST_QUICK=1 timeout 120 ../$b/tests/$t 2>&1 | tail -1)"; done
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== b1 suite cold then warm $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-s4 CUDA_CACHE_PATH=/tmp/cc-s4; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
for r in cold warm; do $lc conv --suite resnet34-112 --mb 1 --device opencl --tune fast --json --repeat 20 > $o/s_$r.jsonl 2>/dev/null
  python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]; print('$r create+prepare', round(sum(x.get('setup_ms',0) for x in r)), 'ms, compile', round(sum(x.get('compile_ms',0) for x in r)), 'ms')" $o/s_$r.jsonl; done
echo "== IResNet cold, builds one after another $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-ir4 CUDA_CACHE_PATH=/tmp/cc-ir4; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
mst() { timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir_$1.err > $o/ir_$1.json; python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('$1 start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'median_ms', j['median_ms'])" $o/ir_$1.json; }
LOWCONV_CL_TIMING=2 LOWCONV_CL_BUILD_THREADS=1 mst cold_serial; grep -h "built\|op init" $o/ir_cold_serial.err | sed 's/-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL //' | cut -c1-150
rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH; mst cold; mst warm1; mst warm2
echo "== IResNet warm with another process holding a CUDA context (GPU initialized) $(date +%T)"
python3 -c "import torch,time; torch.zeros(1).cuda(); time.sleep(40)" & hp=$!; sleep 12; mst warm_held1; mst warm_held2; mst warm_held3; kill $hp 2>/dev/null
unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-s5
echo "== b1 suites f32/q8/q4 twice (q/f32 samples) $(date +%T)"
for r in 1 2; do for w in f32 q8 q4; do $lc conv --suite resnet34-112 --mb 1 --device opencl --tune fast --weights $w --json --repeat 50 > $o/b1_${w}_$r.jsonl 2>/dev/null; done; done
python3 - $o <<'PY'
import json, math, sys
d = sys.argv[1]
L = lambda p: {r["desc"]: r["median_ms"] for r in map(json.loads, (l for l in open(p) if l.startswith("{"))) if r.get("median_ms")}
for r in (1, 2):
    f = L(f"{d}/b1_f32_{r}.jsonl")
    for w in ("q8", "q4"):
        q = L(f"{d}/b1_{w}_{r}.jsonl"); x = [q[k] / f[k] for k in q if k in f]
        print(f"round {r} {w}/f32 geomean {math.exp(sum(map(math.log, x)) / len(x)):.3f} max {max(x):.2f} over {len(x)}")
PY
} 2>&1 | tee $o/summary.txt
