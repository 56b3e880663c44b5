#!/usr/bin/env bash
# Level fast's short lists against the long ones (LOWCONV_CL_FAST_WIDE=1), interleaved in one call:
# the resnet34-112 suites cold (empty lowconv and driver caches) at batch 1 and 32 with their
# per-layer times, IResNet-34 load to first result cold; then the FC's GEMV variants one by one,
# and the batch-1 suites at level heavy (f32 / q8 / q4: how far q is from f32 with every
# candidate timed). Setup as run_h200.sh.
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/gpu/cl_env.sh
out=${OUT:-out-gpu}; mkdir -p "$out"
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
fresh() { export LOWCONV_CACHE_DIR=/tmp/lc-$1 CUDA_CACHE_PATH=/tmp/cc-$1; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH; }
suite() { # tag mb weights tune [env...]
  local tag=$1 mb=$2 w=$3 t=$4; shift 4
  env "$@" timeout 200 $lc conv --suite resnet34-112 --mb $mb --device opencl --weights $w --tune $t --json --repeat 50 \
    --warmup 3 > "$out/s_$tag.jsonl" 2>/dev/null
  python3 - "$out/s_$tag.jsonl" "$tag" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
rows = [r for r in rows if "median_ms" in r]
s = sum(r.get("setup_ms", 0) for r in rows); c = sum(r.get("compile_ms", 0) for r in rows)
print(f"{sys.argv[2]:22s} create+prepare {s:7.0f} ms (compile {c:6.0f}) over {len(rows)} convs, sum of medians "
      f"{sum(r['median_ms'] * r.get('count', 1) for r in rows):.4f} ms", flush=True)
PY
}
for r in 1 2; do
  for mb in 1 32; do
    fresh a; suite "b${mb}_short_$r" $mb f32 fast X=1
    fresh b; suite "b${mb}_wide_$r" $mb f32 fast LOWCONV_CL_FAST_WIDE=1
  done
done
for r in 1 2; do
  for cfg in "short X=1" "wide LOWCONV_CL_FAST_WIDE=1"; do
    fresh c; env ${cfg#* } timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/dev/null |
      python3 -c "import json,sys; j=json.load(sys.stdin); print('iresnet34 cold ${cfg%% *}', 'start_ms', round(j['start_ms']), 'compile_ms', round(j['compile_ms']), 'median_ms', j['median_ms'])"
  done
done
echo "== FC 25088 -> 512, one pixel: each GEMV variant (f32, then q4)"
fresh d
for w in f32 q4; do for v in p1 p1b2 p1b4 r1; do
  LOWCONV_CL_FAMILY=gemv LOWCONV_CL_VARIANT=$v timeout 30 $lc conv mb1ic25088ih1oc512kh1 --device opencl --weights $w \
    --json --repeat 100 2>/dev/null | python3 -c "import json,sys; r=json.loads(sys.stdin.readline()); print('$w gemv $v', r.get('median_ms'), r.get('variant'), r.get('local_size'))"
done; done
LOWCONV_CL_TIMING=1 timeout 30 $lc conv mb1ic25088ih1oc512kh1 --device opencl --weights f32 --tune normal --json 2>&1 | grep -o '"variant":"[^"]*"\|"median_ms":[0-9.]*'
echo "== batch 1 at level heavy (every candidate), f32 / q8 / q4"
for w in f32 q8 q4; do fresh h$w; suite "b1_heavy_$w" 1 $w heavy X=1; done
python3 - "$out" <<'PY'
import json, sys, math
d = sys.argv[1]
def load(t):
    return {r["name"]: r for r in (json.loads(l) for l in open(f"{d}/s_{t}.jsonl") if l.startswith("{")) if "median_ms" in r}
def geo(a, b):
    r = [a[n]["median_ms"] / b[n]["median_ms"] for n in a if n in b]
    return math.exp(sum(map(math.log, r)) / len(r)), max(r), min(r)
for mb in (1, 32):
    for r in (1, 2):
        try: g = geo(load(f"b{mb}_short_{r}"), load(f"b{mb}_wide_{r}")); print(f"b{mb} round {r}: short / wide per layer geomean {g[0]:.3f} (max {g[1]:.2f}, min {g[2]:.2f})")
        except Exception as e: print("b", mb, r, e)
try:
    f = load("b1_heavy_f32")
    for w in ("q8", "q4"):
        q = load(f"b1_heavy_{w}"); g = geo(q, f); print(f"heavy b1 {w} / f32 geomean {g[0]:.3f} (max {g[1]:.2f})")
        for n in f: print(f"   {n:16s} f32 {f[n]['median_ms']:.4f} {f[n].get('variant'):16s} {w} {q[n]['median_ms']/f[n]['median_ms']:.2f} {q[n].get('variant')}")
    fs = load("b1_short_1"); g = geo(f, fs); print(f"heavy / fast (short) f32 b1 geomean {g[0]:.3f}")
except Exception as e: print("heavy:", e)
PY
