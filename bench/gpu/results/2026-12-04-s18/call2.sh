# Session 18 call 2: family wino9 (Winograd F(3x3) over the 9x9 convs' 3x3 sub-kernels) on the GPU:
# its tests, every 9x9 candidate (heavy) of wide and wino9, od96 f32/q4 with it (B) against without it
# and with every family on few-pixel 1x1 convs (A: LOWCONV_CL_SKIP=wino9 LOWCONV_CL_FEWPIX_ALL=1).
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT; d=/tmp/c2; mkdir -p $d
b=$(dirname $lc)
{
date +%T
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
for fam in wino9 wide split; do
  echo "== test_cl_conv quick, family $fam, on the GPU ($(date +%T))"
  LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=$fam LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | grep -E "^(wino9|wide):|passed"
done
echo "== 9x9 convs, tuning heavy, the best candidates ($(date +%T))"
for desc in mb1ic96ih160oc24kh9ph4 mb1ic24ih160oc24kh9ph4 mb1ic96ih80oc24kh9ph4 mb1ic24ih80oc24kh9ph4 mb1ic96ih40oc24kh9ph4 mb1ic96ih20oc24kh9ph4; do
  LOWCONV_CL_DEBUG=1 LOWCONV_CACHE_DIR=/tmp/lc-h timeout 60 $lc conv $desc --device opencl --tune heavy --repeat 50 > $d/h_${desc}.txt 2>&1
  echo "$desc: $(grep -v 'tune:' $d/h_${desc}.txt | grep -E 'ms|GFLOP' | tail -n 1 | cut -c1-140)"
  for f in wide wino9; do grep "tune: $f " $d/h_${desc}.txt | sort -t' ' -k7 -g | head -n 2 | cut -c1-100; done
done
echo "== od96 tuning fast, A = no wino9 and every family on few pixels, B = this tree ($(date +%T))"
for ab in A B; do for w in f32 q4; do
  sk=""; fa=0; [ $ab = A ] && sk=wino9 && fa=1
  LOWCONV_CL_SKIP=$sk LOWCONV_CL_FEWPIX_ALL=$fa LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 2>&1 | grep -E "^start" | sed "s/^/$ab $w /" | cut -c1-60
done; done
for r in 1 2 3; do for ab in A B; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 2>&1 | grep -h "median" | sed "s/^/$ab $w /" | cut -c1-90
done; done; done
for ab in A B; do for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $d/od_${w}_pl_$ab.txt 2>&1
  echo "$ab $w: $(grep -E 'device time' $d/od_${w}_pl_$ab.txt | cut -c1-150)"
  grep -E " wide | wino9 " $d/od_${w}_pl_$ab.txt | awk '{printf " %s %s %s %s;", $2, $5, $6, $7}'; echo
  awk 'NF>8 && $4 ~ /x1x1$/ && $3 ~ /^Conv/ {printf " %s %s %s %s;", $2, $5, $6, $7}' $d/od_${w}_pl_$ab.txt; echo
done; done
echo "== done $(date +%T)"
} 2>&1 | tee $d/summary.txt
tar czf $o/call2.tgz -C $d . ; cp $d/summary.txt $o/call2-summary.txt
