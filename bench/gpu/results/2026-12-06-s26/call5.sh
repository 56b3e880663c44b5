#!/usr/bin/env bash
# Stop 26, call 5: the final tip on the NVIDIA device: py_test_device_nets.py (the pinned-views check,
# a view of a constant left alone, the 154 GB model), od96 f32 / q4 with transfers, two rounds, and
# three IResNet-34 warm starts.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c5; mkdir -p $o
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
{
echo "== py_test_device_nets.py ($(date +%T))"
timeout 240 python3 tests/py_test_device_nets.py --lowconv $lc 2>&1 | grep -E "FAIL|views|too big|passed"
export LOWCONV_CACHE_DIR=/tmp/lc-c5
for w in f32 q4; do timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done
for r in 1 2; do for w in f32 q4; do
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json > $o/od.json 2>/dev/null
  echo "od96 $w round $r: $(python3 -c "import json; j=json.load(open('$o/od.json')); print(j['median_ms'], j['min_ms'], j['pinned_io_bytes'])")"
done; done
timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 >/dev/null 2>&1
for k in 1 2 3; do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 --json > $o/ir.json 2>/dev/null
  echo "ir34 warm $k start_ms $(python3 -c "import json; print(json.load(open('$o/ir.json'))['start_ms'])")"
done
} 2>&1 | tee $o/summary.txt
