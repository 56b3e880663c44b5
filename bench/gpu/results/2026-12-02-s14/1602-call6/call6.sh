# Session 14 call 6: IResNet cold start, ready-first op init + fast without 32x128 for >32 channels, A/B
# (LOWCONV_INIT_ORDER=size LOWCONV_CL_FAST_WIDE=1: the previous order and lists); GPU tests quick.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
b=$(cd .cl-debs/pb && pwd)
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== IResNet cold: new / old (size order, wide fast lists), interleaved $(date +%T)"
for r in 1 2 3 4; do for t in new old; do export LOWCONV_CACHE_DIR=/tmp/lc-c$r$t CUDA_CACHE_PATH=/tmp/cc-c$r$t
  if [ $t = old ]; then export LOWCONV_INIT_ORDER=size LOWCONV_CL_FAST_WIDE=1; else unset LOWCONV_INIT_ORDER LOWCONV_CL_FAST_WIDE; fi
  LOWCONV_CL_TIMING=2 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/c.json 2> /tmp/c$r$t.err
  python3 -c "import json; j=json.load(open('$o/c.json')); print('$t round $r: start_ms %.0f compile_ms %.0f tune_ms %.0f median_ms %.3f' % (j['start_ms'], j['compile_ms'], j.get('tune_ms'), j['median_ms']))"
  grep -c "built conv\|built ops" /tmp/c$r$t.err
done; done; unset LOWCONV_INIT_ORDER LOWCONV_CL_FAST_WIDE CUDA_CACHE_PATH
grep -h "op init\|built" /tmp/c1new.err | cut -c1-160
for r in 1 2; do LOWCONV_CACHE_DIR=/tmp/lc-c1new LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 > $o/w.json 2>/dev/null
  python3 -c "import json; j=json.load(open('$o/w.json')); print('warm: start_ms %.0f compile_ms %.0f median_ms %.3f' % (j['start_ms'], j['compile_ms'], j['median_ms']))"; done
export LOWCONV_CACHE_DIR=/tmp/lc-t
echo "== GPU tests quick $(date +%T)"
for t in test_cl_conv test_cl_gemv test_cl_ops test_cl_cache test_cl_faults test_cl_inaff; do LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 150 $b/$t > $o/$t.txt 2>&1; echo "$t rc $? $(tail -1 $o/$t.txt)"; done
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
