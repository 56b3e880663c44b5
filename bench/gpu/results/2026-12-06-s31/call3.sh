#!/usr/bin/env bash
# Stop 31, call 3: q8 / q4 rows in the split family staged in local memory (the default since stop
# 20) or read per item (LOWCONV_CL_SPLIT_STAGE=0, a build option for A/B runs), resnet34-112 at
# batch 1: q / f32 per layer and geomean over three independent tunings each (level fast, empty
# caches), interleaved. The 1x1 stride-2 shortcuts run split; stop 30 and 31 had q 1.01-1.15x there.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c3; mkdir -p $o
S() { timeout 90 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for r in 1 2 3; do
  for run in "f32 1" "q4 1" "q4 0" "q8 1" "q8 0"; do
    set -- $run
    rm -rf /tmp/lc-s; LOWCONV_CL_SPLIT_STAGE=$2 LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $1 --tune fast > $o/b1_$1_s$2_$r.jsonl
  done
done
python3 - $o <<'PY'
import glob, json, math, statistics as st, sys
d = sys.argv[1]
def load(f): return {x["name"]: x for x in map(json.loads, (l for l in open(f) if l.startswith("{")))}
for r in (1, 2, 3):
    f = load(f"{d}/b1_f32_s1_{r}.jsonl")
    line = []
    for w in ("q4", "q8"):
        for s in ("1", "0"):
            q = load(f"{d}/b1_{w}_s{s}_{r}.jsonl")
            rr = [q[k]["median_ms"] / f[k]["median_ms"] for k in q]
            sc = [q[k]["median_ms"] / f[k]["median_ms"] for k in q if "shortcut" in k]
            line.append("%s stage=%s %.3f (shortcuts %s)" % (w, s, math.exp(sum(map(math.log, rr)) / len(rr)),
                        " ".join("%.2f:%s" % (x, q[k]["variant"]) for x, k in zip(sc, [k for k in q if "shortcut" in k]))))
    print("round", r, " | ".join(line))
PY
echo "== done ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
