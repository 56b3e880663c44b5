#!/usr/bin/env bash
# Stop 33, call 1 (issues 9, 10): the tip's GPU code (unchanged since stop 32's gemmq list) measured
# whole: `run_h200.sh final` (cold / warm start, GPU tests, resnet34-112 b1 / b32 f32 / q8 / q4 and
# cuDNN in the same run, whole models against PyTorch, the GEMV), then Q_ROUNDS more independent
# tunings (level fast, empty caches) of f32 / q8 / q4 at batch 1 for q / f32's spread. Binaries
# built here into .cl-debs/pb (lowconv, tests/); run from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb FINAL_S=${FINAL_S:-430} FAMS="gemmq wino gemvq gemm direct split" bash bench/gpu/run_h200.sh final > /dev/null 2>&1
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/q; mkdir -p $o
S() { timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
for r in $(seq ${Q_ROUNDS:-4}); do
  ws="f32 q8 q4"; [ $((r % 2)) = 0 ] && ws="q4 q8 f32"
  for w in $ws; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast > $o/b1_${w}_$r.jsonl; done
done
python3 - $o ${Q_ROUNDS:-4} <<'PY' | tee $OUT/q_summary.txt
import json, math, statistics as st, sys, collections
d, R = sys.argv[1], int(sys.argv[2])
def load(f): return {x["name"]: x for x in map(json.loads, (l for l in open(f) if l.startswith("{")))}
gm = lambda r: math.exp(sum(map(math.log, r)) / len(r))
per = collections.defaultdict(list); tot = collections.defaultdict(list)
for r in range(1, R + 1):
    f = load(f"{d}/b1_f32_{r}.jsonl")
    for w in ("q8", "q4"):
        q = load(f"{d}/b1_{w}_{r}.jsonl")
        rr = {k: q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f}
        tot[w].append(gm(list(rr.values())))
        for k, v in rr.items(): per[k, w].append("%.2f %s" % (v, q[k]["variant"]))
    print("round", r, " ".join("%s %.3f" % (w, tot[w][-1]) for w in ("q8", "q4")))
for w, v in tot.items(): print("median %s %.3f (min %.3f max %.3f)" % (w, st.median(v), min(v), max(v)))
for k in sorted({k for k, _ in per}): print("%-15s q4: %s" % (k, ", ".join(per[k, "q4"])))
PY
cd $OUT && tar czf q.tgz q && rm -rf q
