# Session 17 call 6 (split on 1x1 at level fast): every issue 9/10 figure (run_h200.sh final), then IResNet34 q4 load to first result.
LC_PREBUILT=.cl-debs/pb FINAL_S=380 FAMS="split wide" bash bench/gpu/run_h200.sh final > /tmp/final.log 2>&1
tail -n 60 /tmp/final.log
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
{
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== IResNet34 q4 (quick rule: no lowconv package here) cold, warm x3"
rm -rf /tmp/lc-q; export CUDA_CACHE_PATH=/tmp/cc-q
for s in cold warm1 warm2 warm3; do
  LOWCONV_CACHE_DIR=/tmp/lc-q timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights q4 --json --repeat 20 2>/tmp/q_$s.err > /tmp/q_$s.json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('ir34 q4 $s start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" /tmp/q_$s.json
done
grep -h "q4 plan" /tmp/q_warm1.err | cut -c1-160
LOWCONV_CACHE_DIR=/tmp/lc-q LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights q4 --repeat 20 2>&1 | grep -E "op init|plan:|start" | cut -c1-220
} 2>&1 | tee $OUT/q4start.txt
