# Session 13 call 4: the merged tree (helpers h19, h20) with background builds: GPU tests, IResNet cold/warm, models.
ocl=/tmp/lc-ocl; mkdir -p $ocl/vendors; for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done; echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1 LOWCONV_CACHE_DIR=/tmp/lcc
b=.cl-debs/pb; o=$OUT; lc=$b/lowconv
{
echo "== GPU tests $(date +%T)"; $lc devices | grep measured
for f in gemm wino gemmq direct; do echo "family $f: $(LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 $b/tests/test_cl_conv 2>&1 | tail -1)"; done
for t in test_cl_gemv test_cl_inaff test_cl_ops test_cl_cache test_cl_faults; do echo "$t: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 $b/tests/$t 2>&1 | tail -1)"; done
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
mst() { timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir_$1.err > $o/ir_$1.json; python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('$1 start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j.get('tune_ms'), 'median_ms', j['median_ms'])" $o/ir_$1.json; grep -h "op init" $o/ir_$1.err | cut -c1-170; }
echo "== IResNet cold (background builds), then warm; LOWCONV_CL_COLLECT=0 interleaved $(date +%T)"
for r in 1 2 3; do for c in 1 0; do export LOWCONV_CACHE_DIR=/tmp/lc-ir-$r-$c CUDA_CACHE_PATH=/tmp/cc-ir-$r-$c; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
  LOWCONV_CL_COLLECT=$c LOWCONV_CL_TIMING=1 mst cold_c${c}_$r; done; done
for r in 1 2; do export LOWCONV_CACHE_DIR=/tmp/lc-ir-1-1 CUDA_CACHE_PATH=/tmp/cc-ir-1-1; mst warm_$r; done
unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-m
echo "== models.py (IResNet b1/b32, OCR-det-like) $(date +%T)"
PYTHONUNBUFFERED=1 timeout 240 python3 bench/gpu/models.py --lowconv $lc --reps 10 > $o/models.jsonl 2>$o/models.err
python3 - $o/models.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    try: r = json.loads(l)
    except ValueError: continue
    if r.get("engine") == "pytorch-cudnn": print(r["net"], "b%s" % r.get("batch"), "pytorch eager %.3f graph %.3f ms" % (r.get("eager_ms", 0), r.get("graph_ms", 0)))
    elif r.get("median_ms"): print(r["net"], "b%s" % r.get("batch"), r.get("engine"), r.get("weights"), "median %.3f ms start %s ms" % (r["median_ms"], r.get("start_ms")))
PY
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
