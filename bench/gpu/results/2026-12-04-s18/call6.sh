# Session 18 call 6: wino9 at q4 with the block index hoisted out of the 9-tap transform (this tree, B)
# against call 5's build (A, lowconv_A): wino9 GPU test, the 96 -> 24 9x9 at q4 (heavy), od96 q4 and f32.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT; d=/tmp/c6; mkdir -p $d
b=$(dirname $lc)
{
date +%T
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
LOWCONV_CACHE_DIR=/tmp/lc-t LOWCONV_CL_FAMILY=wino9 LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | grep -E "^wino9:|passed"
for ab in A B; do
  LOWCONV_CL_DEBUG=1 LOWCONV_CACHE_DIR=/tmp/lc-h$ab timeout 60 $b/lowconv_$ab conv mb1ic96ih160oc24kh9ph4 --device opencl --weights q4 --block 32 --tune heavy --repeat 50 > $d/h_$ab.txt 2>&1
  echo "q4 $ab: $(grep 'tune: wino9 ' $d/h_$ab.txt | sort -t' ' -k7 -g | head -n 2 | cut -c16-80 | tr '\n' ' ')"
done
for ab in A B; do for w in q4 f32; do
  LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 150 $b/lowconv_$ab bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 > /dev/null 2>&1
done; done
for r in 1 2 3; do for ab in A B; do for w in q4 f32; do
  LOWCONV_CACHE_DIR=/tmp/lc-$ab timeout 60 $b/lowconv_$ab bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 2>&1 | grep -h "median" | sed "s/^/$ab $w /" | cut -c1-90
done; done; done
for w in q4 f32; do
  LOWCONV_CACHE_DIR=/tmp/lc-B timeout 60 $b/lowconv_B bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $d/od_${w}_pl_B.txt 2>&1
  echo "B $w: $(grep -E 'device time' $d/od_${w}_pl_B.txt | cut -c1-150)"
  grep -E " wide | wino9 " $d/od_${w}_pl_B.txt | awk '{printf " %s %s %s %s;", $2, $5, $6, $7}'; echo
done
echo "== done $(date +%T)"
} 2>&1 | tee $d/summary.txt
tar czf $o/call6.tgz -C $d . ; cp $d/summary.txt $o/call6-summary.txt
