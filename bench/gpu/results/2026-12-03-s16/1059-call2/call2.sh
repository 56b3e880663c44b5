# Session 16 call 2: IResNet warm start detail (LOWCONV_CL_TIMING=3), od96 heavy vs fast with the
# size-specialized wide kernels and the c12w8 tile.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
{
date +%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
st() { env $2 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 5 2>/tmp/st.err | python3 -c "
import json,sys; j=json.load(sys.stdin); print('%-10s start_ms %7.1f' % ('$1', j['start_ms']), {k: round(v, 1) for k, v in j.get('start_phases_ms', {}).items()})"; }
echo "== IResNet warm start $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-new
st cold "X=1"; for r in 1 2 3 4 5; do st warm "X=1"; done
for r in 1 2; do LOWCONV_CL_TIMING=3 st "timing3" "X=1"; grep -hv "^lowconv: init [4-9][0-9] " /tmp/st.err | cut -c1-260 | head -60; done
echo "== od96 $(date +%T)"
for lvl in fast heavy; do for w in f32 q4; do
  export LOWCONV_CACHE_DIR=/tmp/lc-$lvl
  echo "-- $lvl $w"
  timeout 200 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune $lvl --repeat 3 2>&1 | grep -E "median" | cut -c1-100
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_${w}_$lvl.txt 2>&1
  grep -E "wide|gemm 32x32s|start|device time" $o/od_${w}_$lvl.txt | cut -c1-140
done; done
for r in 1 2 3; do for lvl in fast heavy; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-$lvl timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 100 2>&1 | grep -h "median" | sed "s/^/$lvl $w /" | cut -c1-100
done; done; done
echo "== device tests (pinned uploads) $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-tests
for t in gemv faults; do (cd /tmp && timeout 150 $(dirname $lc)/tests/test_cl_$t > /tmp/t_$t.log 2>&1; echo "test_cl_$t rc $?"; tail -2 /tmp/t_$t.log); done
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
