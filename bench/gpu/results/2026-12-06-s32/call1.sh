#!/usr/bin/env bash
# Run from .cl-debs/pb/ (the binaries of branch s32-gpu-q at 5aff986, the LCS_PRE switch on by default) on the lent H200.
# Stop 32, the one device call: call1.sh's A/B in three rounds (q8 / q4 over f32 at batch 1,
# resnet34-112; "new" = split's inputs loaded before its q rows are staged and gemmq's three
# best-modelled tiles at level fast; "old" = LOWCONV_CL_SPLIT_PRE=0 LOWCONV_CL_GQM_FAST=2), the
# call) within what is left. Setup: .cl-debs/ debs, pb/ binaries, ppocr/.
set -uo pipefail
cd "$(dirname "$0")/../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c2; mkdir -p $o/raw
S() { timeout 90 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
echo "== A/B, three rounds ($(date +%T))"
for r in 1 2; do
  runs="f32:new q8:new q8:old q4:new q4:old"; [ $((r % 2)) = 0 ] && runs="q4:old q4:new q8:old q8:new f32:new"
  for x in $runs; do
    w=${x%%:*} c=${x#*:}; rm -rf /tmp/lc-s
    if [ $c = old ]; then LOWCONV_CL_SPLIT_PRE=0 LOWCONV_CL_GQM_FAST=2 LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast
    else LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast; fi > $o/raw/b1_${w}_${c}_$r.jsonl
  done
done
python3 - $o/raw <<'PY'
import json, math, statistics as st, sys, collections
d = sys.argv[1]
def load(f): return {x["name"]: x for x in map(json.loads, (l for l in open(f) if l.startswith("{")))}
gm = lambda r: math.exp(sum(map(math.log, r)) / len(r))
per = collections.defaultdict(list); tot = collections.defaultdict(list)
for r in range(1, 3):
    f = load(f"{d}/b1_f32_new_{r}.jsonl"); line = []
    for w in ("q8", "q4"):
        for c in ("new", "old"):
            q = load(f"{d}/b1_{w}_{c}_{r}.jsonl")
            rr = {k: q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f}
            g = gm(list(rr.values())); tot[w, c].append(g); line.append("%s %s %.3f" % (w, c, g))
            for k, v in rr.items(): per[k, w, c].append((v, q[k]["variant"], q[k]["median_ms"] * 1e3))
    print("round", r, " | ".join(line))
for (w, c), v in sorted(tot.items()): print("median %s %s %.3f  (min %.3f max %.3f)" % (w, c, st.median(v), min(v), max(v)))
for k in sorted({k for k, _, _ in per}):
    print("%-15s" % k, " ".join("%s/%s %.2f" % (w, c, st.median([x for x, _, _ in per[k, w, c]])) for w in ("q8", "q4") for c in ("new", "old")),
          "| q4 new:", ",".join("%s %.1f" % (v, us) for _, v, us in per[k, "q4", "new"]))
PY
echo "== OpenCL conv tests on NVIDIA ($(date +%T))"
for f in split; do
  echo "-- test_cl_conv $f: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 LOWCONV_CL_FAMILY=$f timeout 90 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1)"
done
echo "== final ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
