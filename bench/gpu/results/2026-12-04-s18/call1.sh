# Session 18 call 1: family wide with the input rows as aligned float4 loads (B) against scalar loads
# (A, LOWCONV_CL_WIDE_VEC=0): every candidate on the 9x9 convs (heavy), od96 f32/q4 interleaved, per layer.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT; d=/tmp/c1; mkdir -p $d
b=$(dirname $lc)
{
date +%T
$lc devices 2>&1 | head -8
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
echo "== test_cl_conv quick, family wide, on the GPU ($(date +%T))"
LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=wide LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 $b/tests/test_cl_conv 2>&1 | tail -n 3
echo "== 9x9 convs, tuning heavy, every candidate ($(date +%T))"
for desc in mb1ic96ih160oc24kh9ph4 mb1ic24ih160oc24kh9ph4 mb1ic96ih80oc24kh9ph4 mb1ic96ih40oc24kh9ph4; do
  for ab in A B; do
    v=1; [ $ab = A ] && v=0
    LOWCONV_CL_WIDE_VEC=$v LOWCONV_CL_DEBUG=1 LOWCONV_CACHE_DIR=/tmp/lc-h$ab timeout 100 $lc conv $desc --device opencl --tune heavy --repeat 50 > $d/h_${desc}_$ab.txt 2>&1
    echo "$desc $ab: $(grep -v 'tune:' $d/h_${desc}_$ab.txt | tail -n 1 | cut -c1-120)"
    grep 'tune: wide' $d/h_${desc}_$ab.txt | sort -t' ' -k7 -g | head -n 4 | cut -c1-120
  done
done
echo "== od96 tuning fast, A = scalar rows, B = float4 rows ($(date +%T))"
for ab in A B; do for w in f32 q4; do
  v=1; [ $ab = A ] && v=0
  LOWCONV_CL_WIDE_VEC=$v LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 2>&1 | grep -E "^start" | sed "s/^/$ab $w /" | cut -c1-60
done; done
for r in 1 2 3; do for ab in A B; do for w in f32 q4; do
  v=1; [ $ab = A ] && v=0
  LOWCONV_CL_WIDE_VEC=$v LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 2>&1 | grep -h "median" | sed "s/^/$ab $w /" | cut -c1-90
done; done; done
for ab in A B; do for w in f32 q4; do
  v=1; [ $ab = A ] && v=0
  LOWCONV_CL_WIDE_VEC=$v LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $d/od_${w}_pl_$ab.txt 2>&1
  echo "$ab $w: $(grep -E 'device time' $d/od_${w}_pl_$ab.txt | cut -c1-150)"
  grep -E "wide|conv_129 " $d/od_${w}_pl_$ab.txt | awk '{print "   ", $2, $5, $6, $7}'
done; done
echo "== done $(date +%T)"
} 2>&1 | tee $d/summary.txt
tar czf $o/call1.tgz -C $d . ; cp $d/summary.txt $o/
