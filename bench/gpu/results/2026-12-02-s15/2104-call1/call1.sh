# Session 15 call 1: diagnostics. od96 tune fast vs heavy (wall, per layer), profilers, IResNet warm breakdown.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT; b=$(cd $LC_PREBUILT && pwd)
{
date +%T; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
which nsys ncu nvprof 2>&1; ls -d /usr/local/cuda*/bin 2>&1 | head; ls /opt/nvidia 2>&1 | head
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
for lvl in fast heavy; do for w in f32 q4; do
  echo "== od96 $w tune $lvl $(date +%T)"
  export LOWCONV_CACHE_DIR=/tmp/lc-$lvl
  timeout 200 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune $lvl --repeat 3 2>&1 | grep -E "median|start" | cut -c1-200
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_${w}_$lvl.txt 2>&1
  for i in 1 2 3; do timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 100 2>&1 | grep -h "median"; done | cut -c1-90
done; done
echo "== warm IResNet breakdown $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-fast
timeout 100 $lc bench /tmp/ir34.onnx --device opencl --repeat 3 >/dev/null 2>&1
for i in 1 2; do LOWCONV_CL_TIMING=2 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/warm$i.json 2> $o/warm$i.err
python3 -c "import json; j=json.load(open('$o/warm$i.json')); print('start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j.get('tune_ms'), 'median_ms', j['median_ms'])"; done
cut -c1-160 $o/warm2.err | head -40
if which nsys >/dev/null 2>&1; then echo "== nsys $(date +%T)"; export LOWCONV_CACHE_DIR=/tmp/lc-heavy
  timeout 120 nsys profile -o /tmp/od96prof --force-overwrite true $lc bench /tmp/od96.onnx --device opencl --weights f32 --repeat 30 > /dev/null 2>&1; echo rc $?
  timeout 120 nsys stats --report cuda_gpu_kern_sum,cuda_gpu_trace /tmp/od96prof.nsys-rep > $o/nsys.txt 2>&1; head -60 $o/nsys.txt | cut -c1-200
fi
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
