# Session 17 (2026-12-04) call 1: do kernels on several queues overlap on NVIDIA's OpenCL; od96 baseline.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
export LD_LIBRARY_PATH=/tmp/lc-ocl/usr/lib/x86_64-linux-gnu
{
date +%T
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for e in 1024 65536 1048576; do timeout 60 .cl-debs/overlap_probe 400 $e; done
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-fast
for w in f32 q4; do timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 2>&1 | grep -E "median" | cut -c1-100; done
for r in 1 2 3; do for w in f32 q4; do
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 200 2>&1 | grep -h "median" | sed "s/^/$w /" | cut -c1-110
done; done
timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights f32 --repeat 50 --per-layer > $o/od_f32_pl.txt 2>&1
tail -3 $o/od_f32_pl.txt
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
