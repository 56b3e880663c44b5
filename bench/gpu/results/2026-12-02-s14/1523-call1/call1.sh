# Session 14 call 1: where od96's time goes (per layer, f32 / q4), every candidate's time on its 9x9 convs,
# resnet34-112 b1 per-layer q8/q4 vs f32, IResNet cold-start program list.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
export LOWCONV_CACHE_DIR=/tmp/lc-c1
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
$lc devices | grep -i "fma\|read\|launch" | head -5
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx'); onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
echo "== IResNet cold, program list $(date +%T)"
LOWCONV_CACHE_DIR=/tmp/lc-cold CUDA_CACHE_PATH=/tmp/cc-cold LOWCONV_CL_TIMING=2 timeout 90 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/cold.json 2> $o/cold.err
python3 -c "import json; j=json.load(open('$o/cold.json')); print('start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j.get('tune_ms'), 'median_ms', j['median_ms'])"
echo "== 9x9 convs: every candidate (heavy) $(date +%T)"
for d in mb1ic96ih160oc24kh9ph4 mb1ic24ih160oc24kh9ph4 mb1ic96ih80oc24kh9ph4 mb1ic24ih80oc24kh9ph4; do for w in f32 q4; do
  echo "-- $d $w"; LOWCONV_CL_DEBUG=1 timeout 100 $lc conv $d --device opencl --weights $w --tune heavy --repeat 30 2>&1 | grep -E "tune:|variant|device time|GFLOP" | head -40
done; done > $o/tune9.txt 2>&1
grep -E "^--|variant" $o/tune9.txt
for w in f32 q4; do echo "== od96 $w per layer $(date +%T)"; timeout 150 $lc bench /tmp/od96.onnx --device opencl --weights $w --tune fast --repeat 3 >/dev/null 2>&1
  timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 20 --per-layer > $o/od_$w.txt 2>&1
  sed -n '/^op type/,/^$/p' $o/od_$w.txt | head -12; grep -h "device time" $o/od_$w.txt
done
echo "== resnet34-112 b1 f32/q8/q4 (fast) $(date +%T)"
for w in f32 q8 q4; do timeout 200 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 2>/dev/null | sed "s/^{/{\"w\":\"$w\",/"; done > $o/suite_b1.jsonl
python3 - $o/suite_b1.jsonl <<'PY'
import json, sys, math
r = {}
for l in open(sys.argv[1]):
    try: j = json.loads(l)
    except Exception: continue
    if 'median_ms' in j: r.setdefault(j['w'], []).append(j)
f = r.get('f32', [])
for w in ('q8', 'q4'):
    q = r.get(w, []); rat = []
    for a, b in zip(f, q):
        rat.append(b['median_ms'] / a['median_ms'])
        print(w, a.get('name', a.get('desc')), a.get('route'), a.get('variant'), '%.4f' % a['median_ms'], b.get('route'), b.get('variant'), '%.4f' % b['median_ms'], '%.3f' % rat[-1])
    if rat: print(w, 'geomean %.3f' % math.exp(sum(map(math.log, rat)) / len(rat)))
PY
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
