#!/usr/bin/env bash
# Stop 19, call 5: direct's epilogue inlined once per tile in a loop (default) against once per
# element (-DLCD_EPI_UNROLLED through LOWCONV_CL_EXTRA_OPTIONS): build time of direct's program,
# run time of od96 (f32, q4) and of the resnet34-112 b1 suite, A/B interleaved with own caches.
# CALL=N names its output (call6.sh runs it again as call 6).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
n=${CALL:-5}; o=/tmp/c$n; mkdir -p $o
k=src/backend/opencl; cat $k/cl_conv_args.h $k/kernels/common.cl $k/kernels/conv_direct.cl > /tmp/direct.cl
bp() { CUDA_CACHE_DISABLE=1 LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 120 .cl-debs/build_probe "$@" | sed 's/, threads.*//'; }
G="-DLC_ONE_KERNEL -DLC_WANT_conv_c4h1w1 -DLC_WANT_conv_c4h1w2 -DLC_WANT_conv_c8h2w1"
for w in 0 2; do echo "direct group WFMT=$w, loop: $(bp /tmp/direct.cl 2 "-DWFMT=$w -DASYM=0 $G")"
  echo "direct group WFMT=$w, unrolled: $(bp /tmp/direct.cl 2 "-DWFMT=$w -DASYM=0 $G -DLCD_EPI_UNROLLED")"; done
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
AB() { # tag extra-options cmd...
  local t=$1 x=$2; shift 2; LOWCONV_CACHE_DIR=/tmp/lc-$t LOWCONV_CL_EXTRA_OPTIONS="$x" "$@"; }
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'])" $1; }
for r in 1 2 3; do
  for w in f32 q4; do for v in "A -DLCD_EPI_UNROLLED" "B "; do set -- $v
    AB $1 "${2:-}" timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json > $o/od_${w}_$1$r.json 2>/dev/null
    echo "od96 $w $1 round $r: $(med $o/od_${w}_$1$r.json) ms"; done; done
  for v in "A -DLCD_EPI_UNROLLED" "B "; do set -- $v
    AB $1 "${2:-}" timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 300 --json > $o/ir_$1$r.json 2>/dev/null
    echo "ir34 f32 $1 round $r: $(med $o/ir_$1$r.json) ms"; done
done
for v in "A -DLCD_EPI_UNROLLED" "B "; do set -- $v; for w in f32 q4; do
  AB $1 "${2:-}" timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 > $o/r34_${w}_$1.jsonl 2>&1
  done; done
python3 - "$o" <<'PY'
import json, sys
def load(f):
  return {j['desc']:j for j in (json.loads(l) for l in open(f) if l.startswith('{'))}
for w in ('f32','q4'):
  a=load(f'{sys.argv[1]}/r34_{w}_A.jsonl'); b=load(f'{sys.argv[1]}/r34_{w}_B.jsonl')
  import math
  g=math.exp(sum(math.log(b[k]['median_ms']/a[k]['median_ms']) for k in a)/len(a))
  print(w, 'resnet34-112 b1 per layer, loop / unrolled geomean %.3f' % g)
  for k in a:
    if 'direct' in a[k]['variant'] or 'direct' in b[k]['variant']:
      print('   %-34s unrolled %.4f %-14s loop %.4f %s' % (k, a[k]['median_ms'], a[k]['variant'], b[k]['median_ms'], b[k]['variant']))
PY
tar czf $OUT/c$n.tgz -C $o .
