#!/usr/bin/env bash
# Stop 26, call 3: od96's output pinned although it is a view (Sigmoid in place on the last
# ConvTranspose: before, NVIDIA downloaded it from pageable memory through its own staging,
# 233-256 us against 37 us). A/B in interleaved rounds against call 2's binary (lowconv_base),
# f32 and q4, with the transfers; models.py on od96 (PyTorch in the same call); IResNet-34 warm
# starts; py_test_device_nets.py (its new pinned-views check) on the NVIDIA device.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c3; mkdir -p $o
base=$(dirname $lc)/lowconv_base
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], 'min %.4f' % j['min_ms'], 'pinned', j.get('pinned_io_bytes'))" $1; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for b in $lc $base; do for w in f32 q4; do LOWCONV_CACHE_DIR=/tmp/lc-c3 timeout 120 $b bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done; done
echo "== od96 A/B, with transfers, four interleaved rounds ($(date +%T))"
for r in 1 2 3 4; do for w in f32 q4; do for v in new base; do
  b=$lc; [ $v = base ] && b=$base
  LOWCONV_CACHE_DIR=/tmp/lc-c3 timeout 60 $b bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json > $o/od96_${w}_${v}_$r.json 2>/dev/null
  echo "od96 $w $v round $r: $(med $o/od96_${w}_${v}_$r.json)"
done; done; done
for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-c3 timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json --no-io > $o/od96_${w}_noio.json 2>/dev/null
  echo "od96 $w no-io: $(med $o/od96_${w}_noio.json)"
done
echo "== models.py od96 against PyTorch ($(date +%T))"
PYTHONUNBUFFERED=1 timeout 200 python3 bench/gpu/models.py --lowconv $lc --only ocr_det96 --reps 10 > $o/models_od96.jsonl 2>$o/models_od96.err
cat $o/models_od96.jsonl | cut -c1-400
echo "== IResNet-34 warm starts ($(date +%T))"
export LOWCONV_CACHE_DIR=/tmp/lc-ir
timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 >/dev/null 2>&1
for k in 1 2 3 4 5; do
  LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 2>&1 | grep -E "opencl context|start \(" | cut -c1-200
done
echo "== py_test_device_nets.py ($(date +%T))"
unset LOWCONV_CACHE_DIR
timeout 240 python3 tests/py_test_device_nets.py --lowconv $lc 2>&1 | tail -40
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
