#!/usr/bin/env bash
# Stop 19, call 7: split's q rows with the scales loaded every row (default) against only when the
# block changes (-DLCS_SCALE_ONCE): forced split on resnet34-112's 1x1 s2 shortcuts and 14x14 /
# 7x7 layers (q8, q4, f32 for reference), then the b1 suite q8/q4 and od96 q4, A/B interleaved.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c7; mkdir -p $o
med() { python3 -c "import json,sys; j=json.loads([l for l in open(sys.argv[1]) if l.startswith('{')][0]); print('%.4f %s' % (j['median_ms'], j.get('variant')))" $1; }
for r in 1 2; do
for d in mb1ic64ih112oc64oh56kh1sh2ph0 mb1ic128ih28oc256oh14kh1sh2ph0 mb1ic256ih14oc512oh7kh1sh2ph0 mb1ic512ih7oc512oh7kh3ph1; do
  for w in q4 q8; do
    for v in "A -DLCS_SCALE_ONCE" "B "; do set -- $v
      LOWCONV_CL_EXTRA_OPTIONS="${2:-}" LOWCONV_CACHE_DIR=/tmp/lc-f$1 LOWCONV_CL_FAMILY=split timeout 60 $lc conv $d --device opencl --weights $w --repeat 300 --json > $o/f_$d$w$1$r.json 2>&1
      echo "split $d $w $1 r$r: $(med $o/f_$d$w$1$r.json)"; done; done; done; done
for r in 1 2; do for v in "A -DLCS_SCALE_ONCE" "B "; do set -- $v; for w in q8 q4; do
  LOWCONV_CL_EXTRA_OPTIONS="${2:-}" LOWCONV_CACHE_DIR=/tmp/lc-s$1 timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 > $o/r34_${w}_$1$r.jsonl 2>&1
  done; done; done
python3 - <<'PY'
import json, math
def load(f): return {j['desc']:j for j in (json.loads(l) for l in open(f) if l.startswith('{'))}
for r in (1,2):
  for w in ('q8','q4'):
    a=load(f'/tmp/c7/r34_{w}_A{r}.jsonl'); b=load(f'/tmp/c7/r34_{w}_B{r}.jsonl')
    g=lambda d: math.exp(sum(math.log(d[k]['median_ms']) for k in d)/len(d))
    print(f'suite b1 {w} round {r}: geomean ms once {g(a):.5f} every row {g(b):.5f}; split layers:',
          ' '.join(f"{a[k]['median_ms']*1e3:.1f}/{b[k]['median_ms']*1e3:.1f}" for k in a if 'split' in a[k]['variant'] or 'split' in b[k]['variant']))
PY
python3 -c "import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx; onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
for r in 1 2 3; do for v in "A -DLCS_SCALE_ONCE" "B "; do set -- $v
  LOWCONV_CL_EXTRA_OPTIONS="${2:-}" LOWCONV_CACHE_DIR=/tmp/lc-o$1 timeout 120 $lc bench /tmp/od96.onnx --device opencl --weights q4 --repeat 300 --json > $o/od_$1$r.json 2>/dev/null
  echo "od96 q4 $1 r$r: $(python3 -c "import json; print('%.4f' % json.load(open('$o/od_$1$r.json'))['median_ms'])")"; done; done
tar czf $OUT/c7.tgz -C $o .
