#!/usr/bin/env bash
# Stop 26, call 1 (stop 25's call, which never ran): issue 10's two edges. The copies' ceiling (xfer_probe: OpenCL by copy kind;
# torch_xfer.py: PyTorch from pinned memory); od96 f32 / q4 with and without transfers, four
# interleaved rounds, and each one's per-layer device profile; IResNet-34-112 load to first result:
# one cold start, then six warm ones, as `lowconv bench` runs, and the start-up phases.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c1; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
echo "== copies ($(date +%T))"
LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu .cl-debs/pb/xfer_probe
python3 bench/gpu/torch_xfer.py
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], 'min %.4f' % j['min_ms'])" $1; }
export LOWCONV_CACHE_DIR=/tmp/lc-c1
for w in f32 q4; do timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done
echo "== od96, four interleaved rounds ($(date +%T))"
for r in 1 2 3 4; do for w in f32 q4; do for io in io noio; do
  x=""; [ $io = noio ] && x="--no-io"
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json $x > $o/od96_${w}_${io}_$r.json 2>/dev/null
  echo "od96 $w $io round $r: $(med $o/od96_${w}_${io}_$r.json)"
done; done; done
echo "== od96 per layer ($(date +%T))"
for w in f32 q4; do
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 --per-layer > $o/od96_${w}_perlayer.txt 2>&1
done
echo "== IResNet-34 load to first result: cold, then six warm ($(date +%T))"
rm -rf /tmp/lc-ir; export LOWCONV_CACHE_DIR=/tmp/lc-ir CUDA_CACHE_PATH=/tmp/cc-ir
for k in cold w1 w2 w3 w4 w5 w6; do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/ir34_$k.json 2>/dev/null
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('ir34 $k start_ms', j['start_ms'], j.get('start_phases_ms'), 'median', j['median_ms'])" $o/ir34_$k.json
done
for k in 1 2; do
LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 2>&1 | grep -E "context|start-up|op init|start \(" | cut -c1-260
done
} 2>&1 | tee $o/summary.txt
