#!/usr/bin/env bash
# Stop 33, call 3 (issue 9): q8 / q4 over f32 at batch 1, resnet34-112, ROUNDS independent tunings
# (level fast, empty caches) of f32 and of q8 / q4 "new" (the tree: split's q rows staged with every
# load of an item's round issued first) and "old" (LOWCONV_CL_EXTRA_OPTIONS=-DLCS_SERIAL: the loop
# that waited for each element's load), order alternating; TESTS=1 adds test_cl_conv's split family.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/${TAG:-ab}; mkdir -p $o/raw
R=${ROUNDS:-3}
S() { timeout 90 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
echo "== A/B, $R rounds ($(date +%T))"
for r in $(seq $R); do
  runs="f32:new q8:new q8:old q4:new q4:old"; [ $((r % 2)) = 0 ] && runs="q4:old q4:new q8:old q8:new f32:new"
  for x in $runs; do
    w=${x%%:*} c=${x#*:}; rm -rf /tmp/lc-s
    if [ $c = old ]; then LOWCONV_CL_EXTRA_OPTIONS=-DLCS_SERIAL LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast
    else env ${NEW_ENV:-X=1} LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast; fi > $o/raw/b1_${w}_${c}_$r.jsonl
  done
done
python3 - $o/raw $R <<'PY'
import json, math, statistics as st, sys, collections
d, R = sys.argv[1], int(sys.argv[2])
def load(f): return {x["name"]: x for x in map(json.loads, (l for l in open(f) if l.startswith("{")))}
gm = lambda r: math.exp(sum(map(math.log, r)) / len(r))
per = collections.defaultdict(list); tot = collections.defaultdict(list)
for r in range(1, R + 1):
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
if [ "${TESTS:-0}" = 1 ]; then
  echo "== OpenCL conv tests on NVIDIA ($(date +%T))"
  echo "-- test_cl_conv split: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 LOWCONV_CL_FAMILY=split timeout 90 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1)"
  echo "-- test_cl_conv split, -DLCS_LW=64 -DLCS_SR=3: $(LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 LOWCONV_CL_FAMILY=split LOWCONV_CL_EXTRA_OPTIONS='-DLCS_LW=64 -DLCS_SR=3' timeout 90 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -1)"
fi
echo "== done ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf ${TAG:-ab}.tgz ${TAG:-ab} && rm -rf ${TAG:-ab}
