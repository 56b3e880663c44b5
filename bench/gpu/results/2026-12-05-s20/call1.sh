#!/usr/bin/env bash
# Stop 20, call 1: does NVIDIA's OpenCL have cl_khr_command_buffer, and does a replayed command
# buffer remove the host's per-launch cost (bench/gpu/cmdbuf_probe.c)? Then the baseline of the
# whole nets at batch 1 (host enqueue against device wait, LOWCONV_CL_TIMING=1) and od96 per layer.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c1; mkdir -p $o
dpkg -x .cl-debs/clinfo_*.deb $ocl
LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu $ocl/usr/bin/clinfo > $o/clinfo.txt 2>&1
grep -i -E "driver version|command_buffer|Device Extensions " $o/clinfo.txt | head -20
for a in "72 4096" "72 65536" "150 4096"; do
  LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 60 .cl-debs/cmdbuf_probe $a; done 2>&1 | tee $o/probe.txt
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-cache
for r in 1 2; do for m in ir34 od96; do for w in f32 q4; do
  LOWCONV_CL_TIMING=1 timeout 120 $lc bench /tmp/$m.onnx --device opencl --weights $w --repeat 300 --json > $o/${m}_${w}_$r.json 2> $o/${m}_${w}_$r.err
  echo "$m $w round $r: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['median_ms'])" $o/${m}_${w}_$r.json) ms; $(grep -h 'device runs' $o/${m}_${w}_$r.err)"
done; done; done
for w in f32 q4; do timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights $w --per-layer --repeat 20 > $o/od96_${w}_pl.txt 2>&1; done
tar czf $OUT/c1.tgz -C $o .
