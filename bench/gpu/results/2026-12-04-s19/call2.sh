#!/usr/bin/env bash
# Stop 19, call 2: one program per group of kernels that level fast times together (LOWCONV_CL_GROUP,
# default on) against one per kernel (=0), cold starts interleaved; warm starts after a grouped
# cold; the conv tests on the GPU with grouped programs.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c2; mkdir -p $o
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
cold() { rm -rf /tmp/lc-c /tmp/cc-c; CUDA_CACHE_PATH=/tmp/cc-c LOWCONV_CACHE_DIR=/tmp/lc-c "$@"; }
ir() { timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 20 --json > $o/$1.json 2> $o/$1.err
  python3 -c "import json; j=json.load(open('$o/$1.json')); print('$1 start_ms %.1f' % j['start_ms'], j.get('start_phases_ms'), 'compile %.1f tune %.1f median %.4f' % (j['compile_ms'], j['tune_ms'], j['median_ms']))"; }
for i in 1 2 3; do
  cold env LOWCONV_CL_GROUP=0 LOWCONV_CL_TIMING=1 bash -c "$(declare -f ir); o=$o lc=$lc ir ir_g0_$i"
  cold env LOWCONV_CL_TIMING=1 bash -c "$(declare -f ir); o=$o lc=$lc ir ir_g1_$i"
done
grep -h "start-up" $o/ir_g*_1.err | cut -c1-200
echo "== warm after the grouped cold (plain, then with timing)"
export CUDA_CACHE_PATH=/tmp/cc-c LOWCONV_CACHE_DIR=/tmp/lc-c
for i in 1 2 3; do ir ir_warm$i; done
LOWCONV_CL_TIMING=1 ir ir_warm_t; grep -h "start-up\|op init" $o/ir_warm_t.err | cut -c1-200
unset CUDA_CACHE_PATH LOWCONV_CACHE_DIR
echo "== resnet34-112 b1 f32 suite cold: create + prepare (grouped, one per kernel, interleaved)"
for i in 1 2; do for g in 1 0; do
  rm -rf /tmp/lc-s /tmp/cc-s; CUDA_CACHE_PATH=/tmp/cc-s LOWCONV_CACHE_DIR=/tmp/lc-s LOWCONV_CL_GROUP=$g LOWCONV_CL_TIMING=1 \
    timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights f32 --tune fast --json --repeat 20 > $o/r34_g${g}_$i.jsonl 2>&1
  python3 - $o/r34_g${g}_$i.jsonl g$g <<'PY'
import json,sys
c=p=t=0; n=0; tot=0
for l in open(sys.argv[1]):
  if l.startswith('{'):
    j=json.loads(l); n+=1; c+=j.get('compile_ms',0); t+=j.get('tune_ms',0); p+=j.get('setup_ms',0); tot+=j['median_ms']*j.get('count',1)
print(sys.argv[2], 'convs', n, 'setup(create+prepare) %.0f ms compile %.0f tune %.0f; suite time %.4f ms' % (p, c, t, tot))
PY
  grep -h "start-up" $o/r34_g${g}_$i.jsonl | cut -c1-160
  done; done
echo "== test_cl_conv quick on the GPU, grouped programs"
for f in direct gemm wino split; do LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $LC_PREBUILT/tests/test_cl_conv 2>&1 | tail -1; done
tar czf $OUT/c2.tgz -C $o .
