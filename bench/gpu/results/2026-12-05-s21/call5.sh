#!/usr/bin/env bash
# Stop 21, call 5: a squeeze-and-excitation block's second FC fused into its Mul (one kernel,
# se_scale; B, default) against the unfused FC2 + Mul (A: LOWCONV_SE_FUSE=0), od96 and the real
# PP-OCRv4 det (10 SE blocks) at 640x640, f32 and q4, with and without the transfers (--no-io),
# 300 runs, 2 rounds interleaved, own caches; then the fusion test on the GPU.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/se; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$lc devices | tail -1
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
M() { case $1 in ppdet) echo ".cl-debs/ppocr/ch_PP-OCRv4_det_infer.onnx --shape x=1x3x640x640";; *) echo /tmp/$1.onnx;; esac; }
AB() { local t=$1; shift; local f=1; [ $t = A ] && f=0; LOWCONV_CACHE_DIR=/tmp/lc-se$t LOWCONV_SE_FUSE=$f "$@"; }
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], j.get('kernels'))" $1; }
for t in A B; do for m in od96 ppdet; do for w in f32 q4; do AB $t timeout 60 $lc bench $(M $m) --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done; done; done
for r in 1 2; do for m in od96 ppdet; do for w in f32 q4; do for io in io noio; do for t in A B; do
  x=""; [ $io = noio ] && x="--no-io"
  AB $t timeout 60 $lc bench $(M $m) --device opencl --weights $w --repeat 300 --json $x > $o/${m}_${w}_${io}_$t$r.json 2>/dev/null
  echo "$m $w $io $t round $r: $(med $o/${m}_${w}_${io}_$t$r.json) ms, kernels"
done; done; done; done; done
for t in A B; do AB $t timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights q4 --per-layer --repeat 20 > $o/od96_q4_pl_$t.txt 2>&1
  echo "od96 q4 $t: $(grep 'device time' $o/od96_q4_pl_$t.txt | cut -c1-90)"; done
LC_REQUIRE_OPENCL=1 timeout 120 python3 tests/py_test_device_fuse.py --lowconv $lc 2>&1 | tail -3
} 2>&1 | tee $o/summary.txt
