#!/usr/bin/env bash
# Stop 26, call 2: where od96's transfers lose ~0.25 ms beyond the copies' own 0.14 ms (call 1:
# pinned up 4.9 MB 103 us, down 1.6 MB 37 us; io 1.70-1.97 ms against no-io 1.29-1.32 ms).
# Host enqueue and wait per run (LOWCONV_CL_TIMING), io against no-io, with flushes after the
# upload (LOWCONV_CL_IO_FLUSH=K, a probe in that build only, removed after this call: also after
# the first K ops), after the first op, or by queued work. Then IResNet-34's
# warm start with the driver's context creation split into device info, context and queue.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c2; mkdir -p $o
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
import iresnet34
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-c2
for w in f32 q4; do timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done
one() { # label, env..., then bench args
  local lab=$1; shift
  env "$@" LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/od96.onnx --device opencl --repeat 300 --json $X > $o/$lab.json 2> $o/$lab.err
  echo "$lab: $(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%.4f min %.4f' % (j['median_ms'], j['min_ms']))" $o/$lab.json) $(grep 'device runs' $o/$lab.err | sed 's/.*runs: [0-9]*, //')"
}
{
for r in 1 2 3; do
  for w in f32 q4; do
    X="--weights $w --no-io" one ${w}_noio_$r A=1
    X="--weights $w" one ${w}_io_$r A=1
    X="--weights $w" one ${w}_ioflush0_$r LOWCONV_CL_IO_FLUSH=0
    X="--weights $w" one ${w}_ioflush3_$r LOWCONV_CL_IO_FLUSH=3
    X="--weights $w" one ${w}_flush1_$r LOWCONV_CL_FLUSH=1
    X="--weights $w" one ${w}_flushus200_$r LOWCONV_CL_FLUSH_US=200
    X="--weights $w --no-io" one ${w}_noio_flushus200_$r LOWCONV_CL_FLUSH_US=200
  done
done
echo "== IResNet-34 warm starts ($(date +%T))"
export LOWCONV_CACHE_DIR=/tmp/lc-ir
timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 >/dev/null 2>&1
ws() { for k in 1 2 3; do
  LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 2>&1 | grep -E "opencl context|op init|start \(" | cut -c1-300
done; }
ws
echo "== the same with another process holding the GPU open (as nvidia-persistenced would) ($(date +%T))"
python3 -c "import torch, time; torch.zeros(1).cuda(); time.sleep(40)" & hp=$!
sleep 8
ws
kill $hp 2>/dev/null; wait $hp 2>/dev/null
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
