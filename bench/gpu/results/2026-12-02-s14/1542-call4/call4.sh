# Session 14 call 4: GPU tests (quick, every family: gemm_reduce moved to common.cl); IResNet cold, default
# vs one build thread (NVIDIA serializes builds: one thread builds in the init order); wide's tuned split;
# od96 f32/q8/q4 and PyTorch on it (models.py).
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
b=$(cd .cl-debs/pb && pwd)
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
echo "== IResNet cold: default / LOWCONV_CL_BUILD_THREADS=1, interleaved $(date +%T)"
for r in 1 2 3; do for t in def 1; do export LOWCONV_CACHE_DIR=/tmp/lc-c$r$t CUDA_CACHE_PATH=/tmp/cc-c$r$t
  if [ $t = 1 ]; then export LOWCONV_CL_BUILD_THREADS=1; else unset LOWCONV_CL_BUILD_THREADS; fi
  LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/c.json 2> /tmp/c$r$t.err
  python3 -c "import json; j=json.load(open('$o/c.json')); print('threads $t round $r: start_ms %.0f compile_ms %.0f tune_ms %.0f median_ms %.3f' % (j['start_ms'], j['compile_ms'], j.get('tune_ms'), j['median_ms']))"
done; done; unset LOWCONV_CL_BUILD_THREADS CUDA_CACHE_PATH
grep -h "op init" /tmp/c11.err /tmp/c1def.err | cut -c1-160
export LOWCONV_CACHE_DIR=/tmp/lc-c4
echo "== test_cl_conv quick, every family $(date +%T)"
LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 200 $b/test_cl_conv > $o/tcl.txt 2>&1; tail -4 $o/tcl.txt
echo "== wide on the 9x9 convs: best candidates (heavy) $(date +%T)"
for d in mb1ic96ih160oc24kh9ph4pw4 mb1ic24ih160oc24kh9ph4pw4 mb1ic96ih80oc24kh9ph4pw4 mb1ic24ih80oc24kh9ph4pw4 mb1ic96ih40oc24kh9ph4pw4; do for w in f32 q4; do
  echo "-- $d $w"; LOWCONV_CL_DEBUG=1 timeout 100 $lc conv $d --device opencl --weights $w --tune heavy --repeat 30 2>&1 | grep -E "tune: " | sort -t" " -k7 -g | head -4
done; done
for w in f32 q4 q8; do echo "== od96 $w $(date +%T)"; timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 >/dev/null 2>&1
  for r in 1 2; do timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 2>&1 | grep -h "median" | cut -c1-80; done
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_$w.txt 2>&1
  grep -h "device time" $o/od_$w.txt; grep -E "conv_1(29|30|39|31|40)" $o/od_$w.txt | cut -c1-110
done
echo "== models.py ocr_det96 $(date +%T)"
PYTHONUNBUFFERED=1 timeout 150 python3 bench/gpu/models.py --lowconv $lc --only ocr_det96 --reps 10 > $o/models_det.jsonl 2>$o/models_det.err
cut -c1-600 $o/models_det.jsonl; tail -3 $o/models_det.err
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
