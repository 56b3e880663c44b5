# Session 14 call 2: family wide on the H200 (test, every candidate on the 9x9 convs, od96 per layer), IResNet cold x2.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
export LOWCONV_CACHE_DIR=/tmp/lc-c2
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
echo "== test_cl_conv wide (quick) $(date +%T)"
LC_TEST_QUICK=1 LOWCONV_CL_FAMILY=wide LC_REQUIRE_OPENCL=1 timeout 120 $b/test_cl_conv 2>&1 | tail -3
echo "== 9x9 convs: every candidate (heavy) $(date +%T)"
for d in mb1ic96ih160oc24kh9ph4 mb1ic24ih160oc24kh9ph4 mb1ic96ih80oc24kh9ph4 mb1ic24ih80oc24kh9ph4 mb1ic96ih40oc24kh9ph4; do for w in f32 q4; do
  echo "-- $d $w"; LOWCONV_CL_DEBUG=1 timeout 100 $lc conv $d --device opencl --weights $w --tune heavy --repeat 30 2>&1 | grep -E "tune: (gemm|wide)|variant|device time|GFLOP" | sort -t" " -k7 -g | head -12
done; done > $o/tune9.txt 2>&1
grep -A3 -E "^--" $o/tune9.txt | head -80
for w in f32 q4 q8; do echo "== od96 $w per layer $(date +%T)"; timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 >/dev/null 2>&1
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_$w.txt 2>&1
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 2>&1 | grep -h "median\|device time"
  grep -h "device time" $o/od_$w.txt; grep -E " (wide|gemm|gemmq) " $o/od_$w.txt | grep "x24x\|x1x" | cut -c1-120 | head -12
done
echo "== IResNet cold x2 $(date +%T)"
for r in 1 2; do LOWCONV_CACHE_DIR=/tmp/lc-cold$r CUDA_CACHE_PATH=/tmp/cc-cold$r LOWCONV_CL_TIMING=2 timeout 90 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/cold$r.json 2> $o/cold$r.err
python3 -c "import json; j=json.load(open('$o/cold$r.json')); print('start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j.get('tune_ms'), 'median_ms', j['median_ms'])"; done
grep -h "built\|op init" $o/cold1.err | cut -c1-150
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
