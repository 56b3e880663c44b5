# Session 16 call 4: IResNet warm start with the pack thread pool, pinned chunk 16 / 8 / 4 MB interleaved.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
{
date +%T
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
st() { env $2 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 5 2>/tmp/st.err | python3 -c "
import json,sys; j=json.load(sys.stdin); print('%-10s start_ms %7.1f' % ('$1', j['start_ms']), {k: round(v, 1) for k, v in j.get('start_phases_ms', {}).items()})"; }
export LOWCONV_CACHE_DIR=/tmp/lc-new
st cold "X=1"
for r in 1 2 3 4 5; do for c in 16777216 8388608 4194304; do st "chunk$c" "LOWCONV_CL_UPLOAD_CHUNK=$c"; done; done
for c in 16777216 8388608 4194304; do LOWCONV_CL_TIMING=1 st "t-chunk$c" "LOWCONV_CL_UPLOAD_CHUNK=$c"; grep -h "start-up\|context:\|op init" /tmp/st.err | cut -c1-250; done
timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 20 2>&1 | grep median | cut -c1-100
export LOWCONV_CACHE_DIR=/tmp/lc-tests
for t in gemv faults; do (cd /tmp && timeout 150 $(dirname $lc)/tests/test_cl_$t > /tmp/t_$t.log 2>&1; echo "test_cl_$t rc $?"; tail -n 1 /tmp/t_$t.log); done
LOWCONV_CL_PINNED=1 LOWCONV_CL_UPLOAD_CHUNK=65536 LOWCONV_CL_FAMILY=gemm LC_TEST_QUICK=1 timeout 100 $(dirname $lc)/tests/test_cl_conv 2>&1 | tail -n 1
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
