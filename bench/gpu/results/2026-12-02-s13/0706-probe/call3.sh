# Session 13 call 3: IResNet cold with CUDA_MODULE_LOADING=EAGER vs default (interleaved); od96 per layer after k16.
ocl=/tmp/lc-ocl; mkdir -p $ocl/vendors; for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done; echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1
b=.cl-debs/pb; o=$OUT; lc=$b/lowconv
{
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
mst() { timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/ir_$1.err > $o/ir_$1.json; python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('$1 start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j.get('tune_ms'), 'median_ms', j['median_ms'])" $o/ir_$1.json; grep -h "op init\|collect" $o/ir_$1.err | cut -c1-170; }
echo "== IResNet cold: CUDA_MODULE_LOADING default / EAGER $(date +%T)"
for r in 1 2; do for e in default EAGER; do export LOWCONV_CACHE_DIR=/tmp/lc-e-$r-$e CUDA_CACHE_PATH=/tmp/cc-e-$r-$e; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
  if [ $e = EAGER ]; then CUDA_MODULE_LOADING=EAGER LOWCONV_CL_TIMING=1 mst c_${e}_$r; else LOWCONV_CL_TIMING=1 mst c_${e}_$r; fi; done; done
unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-od
for w in f32 q4; do echo "== od96 $w per layer $(date +%T)"; timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 3 >/dev/null 2>&1
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_$w.txt 2>&1
  sed -n '/^op type/,/^$/p' $o/od_$w.txt | head -12; grep -h "device time" $o/od_$w.txt
  grep -E "^ *[0-9]+ " $o/od_$w.txt | sort -t' ' -k1,1n | awk '{print}' | sort -k7 -rn 2>/dev/null | head -0
  python3 - $o/od_$w.txt <<'PY'
import sys, re
rows = []
for l in open(sys.argv[1]):
    p = l.split()
    if len(p) > 8 and p[0].isdigit():
        try: rows.append((float(p[5]), l.rstrip()[:150]))
        except ValueError: pass
for ms, l in sorted(rows, reverse=True)[:14]: print(l)
PY
done
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
