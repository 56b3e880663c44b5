# Session 16 call 1: warm start A/B (old b3809c0 vs new: no idle wait on cache loads, faster f32 pack),
# od96 wide kernels specialized by kernel size (LOWCONV_CL_WIDE_FIXK=0: generic) f32/q4, ncu of wide.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT; old=$(cd .cl-debs/pb-old && pwd)/lowconv
{
date +%T; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
st() { env $3 timeout 60 $2 bench /tmp/ir34.onnx --device opencl --json --repeat 5 2>/tmp/st.err | python3 -c "
import json,sys; j=json.load(sys.stdin); print('%-10s start_ms %7.1f' % ('$1', j['start_ms']), {k: round(v, 1) for k, v in j.get('start_phases_ms', {}).items()})"; }
echo "== IResNet warm start A/B $(date +%T)"
st old-cold $old "LOWCONV_CACHE_DIR=/tmp/lc-old"; st new-cold $lc "LOWCONV_CACHE_DIR=/tmp/lc-new"
for r in 1 2 3 4 5 6; do st old $old "LOWCONV_CACHE_DIR=/tmp/lc-old"; st new $lc "LOWCONV_CACHE_DIR=/tmp/lc-new"; done
for b in old new; do bin=$old; [ $b = new ] && bin=$lc
  LOWCONV_CL_TIMING=2 st "$b-timing" $bin "LOWCONV_CACHE_DIR=/tmp/lc-$b"; grep -h "start-up\|context:\|op init\|plan:" /tmp/st.err | cut -c1-250; done
echo "== od96 wide fixk A/B $(date +%T)"
for fk in 1 0; do for w in f32 q4; do
  export LOWCONV_CACHE_DIR=/tmp/lc-fk$fk LOWCONV_CL_WIDE_FIXK=$fk
  echo "-- fixk=$fk $w"
  timeout 200 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 2>&1 | grep -E "median" | cut -c1-120
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_${w}_fk$fk.txt 2>&1
  grep -E "wide|start|device time" $o/od_${w}_fk$fk.txt | cut -c1-140
done; done
for r in 1 2 3; do for fk in 1 0; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-fk$fk LOWCONV_CL_WIDE_FIXK=$fk timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 100 2>&1 | grep -h "median" | sed "s/^/fk$fk $w /" | cut -c1-100
done; done; done
echo "== ncu wide $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-fk1 LOWCONV_CL_WIDE_FIXK=1
timeout 150 ncu --kernel-name regex:wide_c --launch-count 4 --section SpeedOfLight --section Occupancy --section LaunchStats \
  --section ComputeWorkloadAnalysis --section WarpStateStats $lc bench /tmp/od96.onnx --device opencl --weights f32 --repeat 1 > $o/ncu_wide.txt 2>&1; echo rc $?
grep -E "wide_c|Duration|Registers|Achieved Occupancy|Theoretical Occupancy|Compute \(SM\) Throughput|Memory Throughput|Issue Slots Busy|Stall|Block Limit|Local" $o/ncu_wide.txt | head -80
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
