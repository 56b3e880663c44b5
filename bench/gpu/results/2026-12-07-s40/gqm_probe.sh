#!/usr/bin/env bash
# Stop 40 (issue 9): gemmq's level-fast short list, 3 tiles (the default) against 4 and 5
# (LOWCONV_CL_GQM_FAST): q4 / f32 at batch 1 over ROUNDS independent tunings of resnet34-112
# (empty lowconv caches, interleaved), and the q4 suite's cold start (empty lowconv and driver
# caches) at 3 and 5. Binaries of the tip built here into .cl-debs/pb; run from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
end=$(( $(date +%s) + ${LIMIT_S:-400} ))
left() { echo $(( end - $(date +%s) )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/gqm; mkdir -p $o
S() { timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 --tune fast "$@" 2>/dev/null; }
for g in 3 5; do
  rm -rf /tmp/lc-c /tmp/cc-c
  LOWCONV_CL_GQM_FAST=$g LOWCONV_CACHE_DIR=/tmp/lc-c CUDA_CACHE_PATH=/tmp/cc-c S --weights q4 > $o/cold_q4_g$g.jsonl
done
for r in $(seq ${ROUNDS:-4}); do
  cs="f32 3 4 5"; [ $((r % 2)) = 0 ] && cs="5 4 3 f32"
  for c in $cs; do
    [ "$(left)" -ge 20 ] || { echo "skipped round $r $c (time)"; continue; }
    rm -rf /tmp/lc-s
    if [ $c = f32 ]; then LOWCONV_CACHE_DIR=/tmp/lc-s S --weights f32 > $o/b1_f32_$r.jsonl
    else LOWCONV_CL_GQM_FAST=$c LOWCONV_CACHE_DIR=/tmp/lc-s S --weights q4 > $o/b1_q4g${c}_$r.jsonl; fi
  done
done
python3 - $o <<'PY'
import json, math, sys
d = sys.argv[1]
def load(p):
    try: return {j["name"]: j for j in map(json.loads, (l for l in open(p) if l.startswith("{")))}
    except Exception: return {}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
for g in (3, 5):
    c = load(f"{d}/cold_q4_g{g}.jsonl")
    print(f"cold q4 suite, list of {g}: create + prepare {sum(j.get('setup_ms', 0) for j in c.values()):.0f} ms over {len(c)} convs")
for g in (3, 4, 5):
    out = []
    for r in range(1, 10):
        a, q = load(f"{d}/b1_f32_{r}.jsonl"), load(f"{d}/b1_q4g{g}_{r}.jsonl")
        k = [n for n in a if n in q]
        if k: out.append(gm([q[n]["median_ms"] / a[n]["median_ms"] for n in k]))
    print(f"q4 / f32, list of {g}: " + " ".join(f"{x:.3f}" for x in out) + (f"  (median {sorted(out)[len(out)//2]:.3f})" if out else ""))
PY
cd $OUT && tar czf gqm.tgz gqm && rm -rf gqm
