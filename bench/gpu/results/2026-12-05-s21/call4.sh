#!/usr/bin/env bash
# Stop 21, call 4: how much of a whole-net run is the input's upload and the output's download:
# `lowconv bench M --device opencl` against `--no-io` (the kernels alone, as PyTorch's graph
# replay on device-resident tensors is timed), od96 and IResNet-34 b1 f32/q8/q4 and the real
# PP-OCRv4 det at 640x640, 300 runs, 2 rounds interleaved; the final tree.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/io; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$lc devices | tail -1
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-io
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'])" $1; }
M() { case $1 in ppdet) echo ".cl-debs/ppocr/ch_PP-OCRv4_det_infer.onnx --shape x=1x3x640x640";; *) echo /tmp/$1.onnx;; esac; }
for m in od96 ir34 ppdet; do for w in f32 q8 q4; do timeout 60 $lc bench $(M $m) --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done; done
for r in 1 2; do for m in od96 ir34 ppdet; do for w in f32 q8 q4; do for io in io noio; do
  x=""; [ $io = noio ] && x="--no-io"
  timeout 60 $lc bench $(M $m) --device opencl --weights $w --repeat 300 --json $x > $o/${m}_${w}_${io}_$r.json 2>/dev/null
  echo "$m $w $io round $r: $(med $o/${m}_${w}_${io}_$r.json) ms"
done; done; done; done
} 2>&1 | tee $o/summary.txt
