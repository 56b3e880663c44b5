#!/usr/bin/env bash
# Stop 27, call 6: IResNet-34 q4 per layer (profiling events), the fused gemmq tiles (lowconv) against
# the previous binary (lowconv_base), each with its own fresh tuning cache, two rounds.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c6; mkdir -p $o/raw
lb=.cl-debs/pb/lowconv_base
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
nvidia-smi --query-gpu=name --format=csv,noheader
{
for b in new base; do bin=$lc; [ $b = base ] && bin=$lb
  rm -rf /tmp/lc-p$b; LOWCONV_CACHE_DIR=/tmp/lc-p$b timeout 120 $bin bench /tmp/ir34.onnx --device opencl --weights q4 --repeat 5 >/dev/null 2>&1
done
for r in 1 2; do for b in new base; do bin=$lc; [ $b = base ] && bin=$lb
  LOWCONV_CACHE_DIR=/tmp/lc-p$b timeout 60 $bin bench /tmp/ir34.onnx --device opencl --weights q4 --per-layer --repeat 30 > $o/raw/pl_${b}_r$r.txt 2>&1
  LOWCONV_CL_TIMING=1 LOWCONV_CACHE_DIR=/tmp/lc-p$b timeout 60 $bin bench /tmp/ir34.onnx --device opencl --weights q4 --repeat 300 2>&1 | grep -E "median|host enqueue" | sed "s/^/$b r$r: /"
done; done
} 2>&1 | tee $o/summary.txt
cd $o && tar czf raw.tgz raw && rm -rf raw
