#!/usr/bin/env bash
# Stop 33, call 2 (issues 9, 10), for an H200 after call 1 ran on an H100: Q_ROUNDS independent
# tunings (level fast, empty caches) of f32 / q8 / q4 at batch 1 (resnet34-112), cuDNN on the same
# suite in the same run, then IResNet-34-112's load to first result (one cold, WARM warm starts).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/q; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader | tee $OUT/gpu.txt
. "$(dirname "$0")/q_rounds.sh"
q_rounds ${Q_ROUNDS:-6}
timeout 120 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb 1 > $o/b1_cudnn.jsonl 2>/dev/null
q_summary $o ${Q_ROUNDS:-6} | tee $OUT/q_summary.txt
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
rm -rf /tmp/lc-m; export LOWCONV_CACHE_DIR=/tmp/lc-m CUDA_CACHE_PATH=/tmp/cc-m; rm -rf /tmp/cc-m
for s in cold $(seq -f warm%g ${WARM:-6}); do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/dev/null > $o/ir34_$s.json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('iresnet34 b1 $s start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" $o/ir34_$s.json
done | tee -a $OUT/q_summary.txt
cd $OUT && tar czf q.tgz q && rm -rf q
