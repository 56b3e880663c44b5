# Session 18 call 5: wide's staging prefetched one channel ahead where one value per item (B)
# against after the barrier (A, LOWCONV_CL_WIDE_PF=0): wino9 on the GPU, 9x9 candidates, od96 q4/f32.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT; d=/tmp/c5; mkdir -p $d
b=$(dirname $lc)
{
date +%T
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
for fam in wino9 wide; do
  LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=$fam LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | grep -E "^(wino9|wide):|passed"
done
for w in q4 f32; do for ab in A B; do
  pf=1; [ $ab = A ] && pf=0
  LOWCONV_CL_WIDE_PF=$pf LOWCONV_CL_DEBUG=1 LOWCONV_CACHE_DIR=/tmp/lc-h$ab timeout 60 $lc conv mb1ic96ih160oc24kh9ph4 --device opencl --weights $w --block 32 --tune heavy --repeat 50 > $d/h_${w}_$ab.txt 2>&1
  echo "$w $ab: $(grep 'tune: wino9 ' $d/h_${w}_$ab.txt | sort -t' ' -k7 -g | head -n 2 | cut -c16-80 | tr '\n' ' ')"
done; done
for ab in A B; do for w in q4 f32; do
  pf=1; [ $ab = A ] && pf=0
  LOWCONV_CL_WIDE_PF=$pf LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 > /dev/null 2>&1
done; done
for r in 1 2 3; do for ab in A B; do for w in q4 f32; do
  pf=1; [ $ab = A ] && pf=0
  LOWCONV_CL_WIDE_PF=$pf LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 2>&1 | grep -h "median" | sed "s/^/$ab $w /" | cut -c1-90
done; done; done
for ab in A B; do for w in q4 f32; do
  pf=1; [ $ab = A ] && pf=0
  LOWCONV_CL_WIDE_PF=$pf LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $d/od_${w}_pl_$ab.txt 2>&1
  echo "$ab $w: $(grep -E 'device time' $d/od_${w}_pl_$ab.txt | cut -c1-150)"
  grep -E " wide | wino9 " $d/od_${w}_pl_$ab.txt | awk '{printf " %s %s %s %s;", $2, $5, $6, $7}'; echo
done; done
echo "== done $(date +%T)"
} 2>&1 | tee $d/summary.txt
tar czf $o/call5.tgz -C $d . ; cp $d/summary.txt $o/call5-summary.txt
