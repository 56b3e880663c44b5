#!/usr/bin/env bash
# Stop 19, call 8: Winograd's output transform with its rows in a loop (default) against fully
# unrolled (-DLCW_EPI_UNROLLED): build time of the F(4x4) transforms' group, run time of the
# resnet34-112 b32 f32 suite (8 Winograd layers) and IResNet-34 b1/b32, A/B with own caches.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c8; mkdir -p $o
k=src/backend/opencl; cat $k/cl_conv_args.h $k/kernels/common.cl $k/kernels/conv_wino.cl > /tmp/wino.cl
bp() { CUDA_CACHE_DISABLE=1 LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 120 .cl-debs/build_probe "$@" | sed 's/, threads.*//'; }
G="-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_wino_wtrans4 -DLC_WANT_wino_itrans4 -DLC_WANT_wino_otrans4"
echo "wino4 group, loop: $(bp /tmp/wino.cl 2 "$G")"; echo "wino4 group, unrolled: $(bp /tmp/wino.cl 2 "$G -DLCW_EPI_UNROLLED")"
echo "otrans4 alone, loop: $(bp /tmp/wino.cl 2 "-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_wino_otrans4")"
echo "otrans4 alone, unrolled: $(bp /tmp/wino.cl 2 "-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_wino_otrans4 -DLCW_EPI_UNROLLED")"
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
m = iresnet34.build(112); onnx.save(m, '/tmp/ir34.onnx')
m.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 32; onnx.save(m, '/tmp/ir34_b32.onnx')"
med() { python3 -c "import json; print('%.4f' % json.load(open('$1'))['median_ms'])"; }
for r in 1 2 3; do for v in "A -DLCW_EPI_UNROLLED" "B "; do set -- $v
  for m in ir34 ir34_b32; do
    LOWCONV_CL_EXTRA_OPTIONS="${2:-}" LOWCONV_CACHE_DIR=/tmp/lc-w$1 timeout 120 $lc bench /tmp/$m.onnx --device opencl --repeat 100 --json > $o/${m}_$1$r.json 2>/dev/null
    echo "$m $1 r$r: $(med $o/${m}_$1$r.json) ms"; done; done; done
for r in 1 2; do for v in "A -DLCW_EPI_UNROLLED" "B "; do set -- $v
  LOWCONV_CL_EXTRA_OPTIONS="${2:-}" LOWCONV_CACHE_DIR=/tmp/lc-s$1 timeout 120 $lc conv --suite resnet34-112 --mb 32 --device opencl --weights f32 --tune fast --json --repeat 30 > $o/r34_$1$r.jsonl 2>&1
  done; done
python3 - <<'PY'
import json, math
def load(f): return {j['desc']:j for j in (json.loads(l) for l in open(f) if l.startswith('{'))}
for r in (1,2):
  a=load(f'/tmp/c8/r34_A{r}.jsonl'); b=load(f'/tmp/c8/r34_B{r}.jsonl')
  ks=[k for k in a if 'wino' in a[k]['variant'] and k in b and 'wino' in b[k]['variant']]
  g=math.exp(sum(math.log(b[k]['median_ms']/a[k]['median_ms']) for k in ks)/max(1,len(ks)))
  print(f'b32 suite round {r}: Winograd layers in both {len(ks)}, loop / unrolled geomean {g:.3f}')
PY
tar czf $OUT/c8.tgz -C $o .
