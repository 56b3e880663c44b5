# Session 16 call 3: the merged tree (resize fusions) on the GPU: fusion tests, od96 f32/q4 tuned fast.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
{
date +%T
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
echo "== fusion tests on the GPU $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-t
(cd /tmp && LC_REQUIRE_OPENCL=1 timeout 150 $(dirname $lc)/tests/test_cl_res_up > $o/t_res_up.log 2>&1; echo "test_cl_res_up rc $?"; tail -n 1 $o/t_res_up.log)
LC_REQUIRE_OPENCL=1 timeout 150 python3 tests/py_test_device_fuse.py --lowconv $lc > $o/t_fuse.log 2>&1; echo "py_test_device_fuse rc $?"; tail -n 2 $o/t_fuse.log
echo "== od96 $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-fast
for w in f32 q4; do
  timeout 200 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 2>&1 | grep -E "median" | cut -c1-100
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_${w}_fast.txt 2>&1
  grep -E "up2|UpConcat|start|device time" $o/od_${w}_fast.txt | cut -c1-140
done
for r in 1 2 3 4; do for w in f32 q4; do
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 100 2>&1 | grep -h "median" | sed "s/^/$w /" | cut -c1-100
done; done
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
