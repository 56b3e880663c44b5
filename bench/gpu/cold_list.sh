#!/usr/bin/env bash
# What a cold start builds now: the resnet34-112 b1 suite with builds one after another
# (LOWCONV_CL_BUILD_THREADS=1) listing each program's build time, then IResNet-34's load to first
# result cold twice (empty lowconv and driver caches). Setup as run_h200.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/gpu/cl_env.sh
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
fresh() { export LOWCONV_CACHE_DIR=/tmp/lc-$1 CUDA_CACHE_PATH=/tmp/cc-$1; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH; }
fresh l1
echo "== resnet34-112 b1 suite cold, builds one after another"
LOWCONV_CL_BUILD_THREADS=1 LOWCONV_CL_TIMING=2 timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights f32 \
  --tune fast --json --repeat 20 2>&1 | grep -h "built \|start-up" | sed 's/-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_//' | cut -c1-160
for r in 1 2; do
  fresh i$r; LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/tmp/ir.err |
    python3 -c "import json,sys; j=json.load(sys.stdin); print('iresnet34 cold', 'start_ms', round(j['start_ms']), 'compile_ms', round(j['compile_ms']), 'median_ms', j['median_ms'])"
  grep -h "start-up\|op init" /tmp/ir.err | cut -c1-200
done
