# Session 14 call 8 (the merged tree): GPU tests quick; IResNet cold x3 (fresh lowconv + driver caches each) and
# warm x2; resnet34-112 b1 f32/q8/q4 and cuDNN. (models.py left out: the device budget)
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
b=$(cd .cl-debs/pb && pwd)
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
$lc devices | grep -i "measured" | head -1
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx
onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== IResNet cold x3, then warm x2 $(date +%T)"
for r in 1 2 3; do export LOWCONV_CACHE_DIR=/tmp/lc-c$r CUDA_CACHE_PATH=/tmp/cc-c$r
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 > $o/c.json 2>/dev/null
  python3 -c "import json; j=json.load(open('$o/c.json')); print('cold $r: start_ms %.0f compile_ms %.0f tune_ms %.0f median_ms %.3f' % (j['start_ms'], j['compile_ms'], j.get('tune_ms'), j['median_ms']))"
done
for r in 1 2; do timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 > $o/c.json 2>/dev/null
  python3 -c "import json; j=json.load(open('$o/c.json')); print('warm $r: start_ms %.0f compile_ms %.0f median_ms %.3f' % (j['start_ms'], j['compile_ms'], j['median_ms']))"; done
unset CUDA_CACHE_PATH; export LOWCONV_CACHE_DIR=/tmp/lc-t
echo "== GPU tests quick $(date +%T)"
for f in wide gemm; do LOWCONV_CL_FAMILY=$f LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 40 $b/tests/test_cl_conv > /tmp/t.txt 2>&1; echo "test_cl_conv $f rc $? $(tail -1 /tmp/t.txt)"; done
echo "== resnet34-112 b1 f32/q8/q4 and cuDNN $(date +%T)"
for w in f32 q8 q4; do timeout 100 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 2>/dev/null > /tmp/s_$w.jsonl; done
python3 - <<'PY'
import json, math
def load(w):
    r = {}
    for l in open('/tmp/s_%s.jsonl' % w):
        try: j = json.loads(l)
        except Exception: continue
        if 'median_ms' in j: r[j['name']] = j['median_ms']
    return r
f = load('f32')
for w in ('q8', 'q4'):
    q = load(w); rat = [q[k] / f[k] for k in f if k in q]
    print(w, '/ f32 b1 geomean %.3f max %.2f over %d layers' % (math.exp(sum(map(math.log, rat)) / len(rat)), max(rat), len(rat)))
PY
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
