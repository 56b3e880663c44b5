#!/usr/bin/env bash
# Stop 30, call 1: the spread of the two targets that stop 29 left as "met in one call":
# q8 / q4 over f32 at batch 1 (issue 9; five independent tunings each, interleaved, empty caches,
# tuning fast, then two at tuning normal) and IResNet-34-112 load to first result (issue 10;
# three cold starts with empty lowconv and driver caches, twelve warm). Then the OpenCL tests on
# NVIDIA. Tree bef31c7 (GPU code as f20d6a7). Setup: .cl-debs/ debs, pb/ binaries, ppocr/.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c1; mkdir -p $o/raw
S() { timeout 90 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
g() { python3 - $o/raw $1 <<'PY'
import json, math, sys
d, tag = sys.argv[1], sys.argv[2]
load = lambda w: {x["desc"]: x for x in map(json.loads, (l for l in open(f"{d}/b1_{w}_{tag}.jsonl") if l.startswith("{")))}
f = load("f32")
out = []
for w in ("q8", "q4"):
    q = load(w)
    r = [q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f]
    out.append(f"{w}/f32 {math.exp(sum(map(math.log, r)) / len(r)):.3f} (max {max(r):.2f})")
print(tag, " ".join(out), "f32 sum %.1f us" % (sum(x["median_ms"] for x in f.values()) * 1e3))
PY
}
st() { local l=$1; shift
  env "$@" timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>$o/$l.err | python3 -c "
import json,sys; j=json.load(sys.stdin); p=j.get('start_phases_ms', {})
print('%-10s start_ms %7.1f  plan %6.1f first_run %5.1f compile_ms %7.1f tune_ms %6.1f median_ms %.3f' % ('$l', j['start_ms'], p.get('plan',0), p.get('first_run',0), j.get('compile_ms',0), j.get('tune_ms',0), j['median_ms']))"; }
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== b1 q / f32, five tunings at level fast ($(date +%T))"
for r in 1 2 3 4 5; do
  ws="f32 q8 q4"; [ $((r % 2)) = 0 ] && ws="q4 q8 f32"
  for w in $ws; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast > $o/raw/b1_${w}_fast$r.jsonl; done
  g fast$r
done
echo "== b1 q / f32, two tunings at level normal ($(date +%T))"
for r in 1 2; do
  for w in f32 q8 q4; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune normal > $o/raw/b1_${w}_normal$r.jsonl; done
  g normal$r
done
echo "== IResNet-34-112 load to first result ($(date +%T))"
for r in 1 2 3; do
  export LOWCONV_CACHE_DIR=/tmp/lc-c$r CUDA_CACHE_PATH=/tmp/cc-c$r; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
  st cold$r X=1
  for w in 1 2 3 4; do st warm$r.$w X=1; done
done
echo "== IResNet-34-112 b1 whole model, f32 and q4, warm cache"
for w in f32 q4; do LOWCONV_CACHE_DIR=/tmp/lc-c1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1
  for r in 1 2; do LOWCONV_CACHE_DIR=/tmp/lc-c1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --weights $w --repeat 300 --json 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); print('ir34 $w median_ms', round(j['median_ms'], 4), 'min', round(j['min_ms'], 4))"; done; done
echo "== OpenCL tests on NVIDIA ($(date +%T))"
for t in test_cl_cache test_cl_faults test_context_shared test_cl_gemv test_cl_inaff test_cl_ops test_cl_res_up; do
  echo "-- $t: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 .cl-debs/pb/tests/$t 2>&1 | tail -1)"
done
for f in gemmq wino gemvq gemm direct; do
  echo "-- test_cl_conv $f: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 LOWCONV_CL_FAMILY=$f timeout 60 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1)"
done
echo "== done ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
