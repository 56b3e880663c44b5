#!/usr/bin/env bash
# Where the quantized GEMV's time goes on the lent GPU: the f32 GEMV at the q4/q8 byte counts (is
# it the size or the kernel?), a tiny conv (the event-time floor), gemvq w1/w2 at every local
# size, and IResNet-34's cold start with per-program build times. Setup as run_h200.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/gpu/cl_env.sh
export LOWCONV_CACHE_DIR=/tmp/lc-gp
c() { $lc conv "$@" --device opencl --json --repeat 200 --check --tol 0.05 2>/dev/null | python3 -c "
import json,sys
for l in sys.stdin:
  if l.startswith('{'):
    d=json.loads(l); print('%-34s %-14s lws %4d  median %.4f ms min %.4f ms  %6.0f GB/s' % (d['desc'], d.get('variant'), d['local_size'][0], d['median_ms'], d['min_ms'], d['weight_bytes']/d['median_ms']/1e6))"; }
echo "== f32 GEMV at the q4 (36.7 MB), q8 (66 MB) and own (235 MB) byte counts; a tiny conv"
for oc in 2240 4032 14336; do c mb1ic4096ih1oc${oc}kh1 --weights f32; done
c mb1ic8ih1oc8kh1 --weights f32
echo "== q4 / q8 gemvq variants x local sizes"
for w in q4 q8; do for v in w1 w2 w1u8; do for L in 64 128 256; do
  LOWCONV_CL_FAMILY=gemvq LOWCONV_CL_VARIANT=$v LOWCONV_CL_GEMVQ_LWS=$L c mb1ic4096ih1oc14336kh1 --weights $w --block 32
done; done; done
echo "== IResNet-34 cold start, builds serial, per program"
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
rm -rf /tmp/lc-ir; CUDA_CACHE_PATH=/tmp/cc-ir LOWCONV_CACHE_DIR=/tmp/lc-ir LOWCONV_CL_BUILD_THREADS=1 LOWCONV_CL_TIMING=2 \
  timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 2>&1 | grep -E "built|start|op init" | cut -c1-200
