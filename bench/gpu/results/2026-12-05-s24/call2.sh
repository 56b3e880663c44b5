#!/usr/bin/env bash
# Stop 24, call 2: issue 10's two edges in more rounds. od96 (OCR-det-like, neck 96, 640x640) f32 /
# q4 with and without transfers, five interleaved rounds, and each one's per-layer device profile;
# IResNet-34-112 load to first result: one cold start, then six warm ones, as `lowconv bench` runs.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c2; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], 'p90 %.4f' % j.get('p90_ms', 0), 'start %.1f' % j.get('start_ms', 0))" $1; }
export LOWCONV_CACHE_DIR=/tmp/lc-c2
for w in f32 q4; do timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done
echo "== od96, five interleaved rounds ($(date +%T))"
for r in 1 2 3 4 5; do for w in f32 q4; do for io in io noio; do
  x=""; [ $io = noio ] && x="--no-io"
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json $x > $o/od96_${w}_${io}_$r.json 2>/dev/null
  echo "od96 $w $io round $r: $(med $o/od96_${w}_${io}_$r.json)"
done; done; done
echo "== od96 per layer ($(date +%T))"
for w in f32 q4; do
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $o/od96_${w}_perlayer.txt 2>&1
  tail -25 $o/od96_${w}_perlayer.txt
done
echo "== IResNet-34 load to first result: cold, then six warm ($(date +%T))"
rm -rf /tmp/lc-ir; export LOWCONV_CACHE_DIR=/tmp/lc-ir CUDA_CACHE_PATH=/tmp/cc-ir
for k in cold w1 w2 w3 w4 w5 w6; do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/ir34_$k.json 2>/dev/null
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('ir34 $k start_ms', j['start_ms'], j.get('start_phases_ms'), 'median', j['median_ms'])" $o/ir34_$k.json
done
LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 2>&1 | grep -E "context|start-up|op init|start \(" | cut -c1-220
} 2>&1 | tee $o/summary.txt
