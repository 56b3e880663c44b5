#!/usr/bin/env bash
# Stop 27, call 1: where the driver's part of a warm start goes (bench/gpu/ctx_probe.c, one process
# per sample, environments interleaved) and IResNet-34's warm start, op init by node.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c1; mkdir -p $o
p=.cl-debs/pb/ctx_probe
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv > $o/smi.txt 2>&1
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
{
cat $o/smi.txt
echo "== ctx_probe, 5 rounds ($(date +%T))"
for r in 1 2 3 4 5; do
  echo "default:      $($p)"
  echo "dlopen-first: $($p libnvidia-opencl.so.1)"
  echo "lazy:         $(CUDA_MODULE_LOADING=LAZY $p)"
  echo "eager:        $(CUDA_MODULE_LOADING=EAGER $p)"
  echo "maxconn1:     $(CUDA_DEVICE_MAX_CONNECTIONS=1 $p)"
done
export LOWCONV_CACHE_DIR=/tmp/lc-c1
timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 >/dev/null 2>&1
echo "== IResNet-34 warm starts, LOWCONV_CL_TIMING=3 ($(date +%T))"
for k in 1 2 3; do
  LOWCONV_CL_TIMING=3 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 --json > $o/ir.json 2> $o/ir_t$k.txt
  grep -v "^lowconv: node" $o/ir_t$k.txt
  echo "ir34 warm $k start_ms $(python3 -c "import json; print(json.load(open('$o/ir.json'))['start_ms'])")"
done
echo "== plain warm starts ($(date +%T))"
for k in 1 2 3 4; do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 --json > $o/ir.json 2>/dev/null
  echo "ir34 warm $k start_ms $(python3 -c "import json; print(json.load(open('$o/ir.json'))['start_ms'])")"
done
} 2>&1 | tee $o/summary.txt
