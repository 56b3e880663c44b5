# Session 14 call 3: family wide's staging depth (LCW_ICS) x split target (LOWCONV_CL_WIDE_ITEMS) on the
# 9x9 convs; registers (-cl-nv-verbose); od96 with the best; test_cl_conv wide quick.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
b=$(cd .cl-debs/pb && pwd)
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
echo "== test_cl_conv wide (quick) $(date +%T)"
LOWCONV_CACHE_DIR=/tmp/lc-t LC_TEST_QUICK=1 LOWCONV_CL_FAMILY=wide LC_REQUIRE_OPENCL=1 timeout 120 $b/test_cl_conv 2>&1 | tail -3
echo "== registers $(date +%T)"
LOWCONV_CACHE_DIR=/tmp/lc-v LOWCONV_CL_TIMING=3 LOWCONV_CL_EXTRA_OPTIONS=-cl-nv-verbose LOWCONV_CL_FAMILY=wide LOWCONV_CL_VARIANT=c24w4 timeout 60 $lc conv mb1ic96ih160oc24kh9ph4pw4 --device opencl --tune none --repeat 5 2>&1 | grep -iE "registers|spill|lmem|smem|bytes stack|Used" | head -8
LOWCONV_CACHE_DIR=/tmp/lc-v LOWCONV_CL_TIMING=3 LOWCONV_CL_EXTRA_OPTIONS=-cl-nv-verbose LOWCONV_CL_FAMILY=gemm LOWCONV_CL_VARIANT=32x32 timeout 60 $lc conv mb1ic96ih160oc24kh9ph4pw4 --device opencl --tune none --repeat 5 2>&1 | grep -iE "registers|spill|Used" | head -4
echo "== sweep: ICS x items, c24w4 / c12w4, level normal (5 local sizes) $(date +%T)"
best=999; bcfg=""
for ics in 1 2 4; do for it in 768 1536 3072; do for d in mb1ic96ih160oc24kh9ph4pw4 mb1ic24ih160oc24kh9ph4pw4 mb1ic96ih80oc24kh9ph4pw4; do
  r=$(LOWCONV_CACHE_DIR=/tmp/lc-s$ics LOWCONV_CL_EXTRA_OPTIONS="-DLCW_ICS=$ics" LOWCONV_CL_WIDE_ITEMS=$it LOWCONV_CL_FAMILY=wide LOWCONV_CL_DEBUG=1 timeout 60 $lc conv $d --device opencl --tune normal --repeat 20 2>&1 | grep "tune: wide" | sort -t" " -k7 -g | head -1)
  echo "ics $ics items $it $d: $r"
done; done; done | tee $o/sweep.txt
python3 - $o/sweep.txt > /tmp/best.txt <<'PY'
import sys, collections
t = collections.defaultdict(float)
for l in open(sys.argv[1]):
    p = l.split()
    try: t[(p[1], p[3])] += float(p[-2])
    except Exception: pass
k = min(t, key=t.get); print(k[0], k[1]); print(sorted(t.items(), key=lambda x: x[1])[:5], file=sys.stderr)
PY
read ics it < /tmp/best.txt; echo "best: ICS $ics items $it"
for cfg in "1 768" "$ics $it"; do set -- $cfg; for w in f32 q4; do
  echo "== od96 $w ICS $1 items $2 $(date +%T)"; export LOWCONV_CACHE_DIR=/tmp/lc-od$1-$2 LOWCONV_CL_EXTRA_OPTIONS="-DLCW_ICS=$1" LOWCONV_CL_WIDE_ITEMS=$2
  timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 >/dev/null 2>&1
  for r in 1 2; do timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 50 2>&1 | grep -h "median" | cut -c1-80; done
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_${w}_$1_$2.txt 2>&1
  grep -h "device time" $o/od_${w}_$1_$2.txt; grep -E "conv_1(29|30|39)" $o/od_${w}_$1_$2.txt | cut -c1-110
done; done
unset LOWCONV_CL_EXTRA_OPTIONS LOWCONV_CL_WIDE_ITEMS
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
