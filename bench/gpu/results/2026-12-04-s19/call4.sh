#!/usr/bin/env bash
# Stop 19, call 4: what blocks IResNet-34's cold start besides the builds: the upload scratch taken
# at context open or at the first upload (LOWCONV_CL_EARLY_SCRATCH=0), pageable uploads
# (LOWCONV_CL_PINNED=0), 4 build threads instead of one per program; interleaved, 3 rounds.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c4; mkdir -p $o
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
ir() { timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 20 --json > $o/$1.json 2> $o/$1.err
  python3 -c "import json; j=json.load(open('$o/$1.json')); print('$1 start_ms %.1f' % j['start_ms'], 'compile %.1f tune %.1f' % (j['compile_ms'], j['tune_ms']))" | tr '\n' ' '
  grep -h "start-up" $o/$1.err | sed 's/.*packing/  packing/; s/conv prepare/prep/; s/; host.*//' | cut -c1-130; }
for i in 1 2 3; do
  for v in "a" "b LOWCONV_CL_EARLY_SCRATCH=0" "c LOWCONV_CL_PINNED=0" "d LOWCONV_CL_BUILD_THREADS=4"; do
    set -- $v; rm -rf /tmp/lc-c /tmp/cc-c
    env ${2:-} CUDA_CACHE_PATH=/tmp/cc-c LOWCONV_CACHE_DIR=/tmp/lc-c LOWCONV_CL_TIMING=1 bash -c "$(declare -f ir); o=$o lc=$lc ir ir_$1$i"
  done
done
tar czf $OUT/c4.tgz -C $o .
