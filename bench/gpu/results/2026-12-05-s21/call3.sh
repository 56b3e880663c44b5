#!/usr/bin/env bash
# Stop 21, call 3: family wide's staging two channels ahead where two sets of items fit (wino9's
# 3x3 tiles; B, default) against one ahead (A: -DLCW_PF2=0), od96 f32 and q4, 300 runs, 2 rounds
# interleaved, own caches, and the 9x9 layers per layer; then every issue 9/10 figure on this tree
# (bench/gpu/run_h200.sh final, GPU tests of families wide, wino9 and gemvq first).
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/ab; mkdir -p $o
{
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
AB() { local t=$1; shift; local x=""; [ $t = A ] && x="-DLCW_PF2=0"
  LOWCONV_CACHE_DIR=/tmp/lc-$t LOWCONV_CL_EXTRA_OPTIONS="$x" "$@"; }
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'])" $1; }
echo "== A/B od96 f32/q4 (A one channel ahead, B two) $(date +%T)"
for t in A B; do for w in f32 q4; do AB $t timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done; done
for r in 1 2; do for w in f32 q4; do for t in A B; do
  AB $t timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json > $o/od96_${w}_$t$r.json 2>/dev/null
  echo "od96 $w $t round $r: $(med $o/od96_${w}_$t$r.json) ms"; done; done; done
for t in A B; do for w in f32 q4; do
  AB $t timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --per-layer --repeat 20 > $o/od96_${w}_pl_$t.txt 2>&1
  echo "od96 $w $t per layer: $(grep -E 'conv_(129|130|139) ' $o/od96_${w}_pl_$t.txt | awk '{printf "%s %s %s %s; ", $2, $5, $6, $7}') $(grep 'device time' $o/od96_${w}_pl_$t.txt | cut -c1-60)"
done; done
} 2>&1 | tee $o/summary.txt
LC_PREBUILT=.cl-debs/pb FAMS="wide wino9 gemvq" FINAL_S=${FINAL_S:-400} exec bash bench/gpu/run_h200.sh final
