# Session 18 call 3: every issue 9/10 figure with this tree (run_h200.sh final: cold/warm starts, the
# GPU tests of families wino9 / wide / split, resnet34-112 suites f32/q8/q4 with cuDNN, whole models
# with PyTorch, GEMV), then od96 per layer (f32, q4).
LC_PREBUILT=.cl-debs/pb FINAL_S=400 FAMS="wino9 wide split" bash bench/gpu/run_h200.sh final > /tmp/final.log 2>&1
tail -n 75 /tmp/final.log
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
python3 -c "import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx; onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-od timeout 100 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 > /dev/null 2>&1
  LOWCONV_CACHE_DIR=/tmp/lc-od timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $OUT/od_${w}_pl.txt 2>&1
  grep -E "device time|median" $OUT/od_${w}_pl.txt | cut -c1-160
done
