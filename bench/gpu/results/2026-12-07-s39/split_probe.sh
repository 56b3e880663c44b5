#!/usr/bin/env bash
# Stop 39 (issue 9), branch s39-split: batch-1 resnet34-112 tunings (level fast, empty caches) with
# split-K chunks and waves other than the defaults (LOWCONV_CL_QCHUNK: least K tiles of 32 rows per
# gemmq chunk, default 4; LOWCONV_CL_FCHUNK: least tk stages per gemm chunk, default 8;
# LOWCONV_CL_WAVES: work-groups for this many full waves, default 1). Binary in .cl-debs/pb39.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LC_PREBUILT=.cl-debs/pb39; . bench/gpu/cl_env.sh
o=$OUT/split; mkdir -p $o
run() { # tag weights env...
  local tag=$1 w=$2; shift 2
  rm -rf /tmp/lc-sp; env "$@" LOWCONV_CACHE_DIR=/tmp/lc-sp timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl \
    --json --repeat 50 --warmup 3 --weights $w --tune fast > $o/${tag}.jsonl 2> $o/${tag}.err
}
for r in 1 2 3; do
  run f32_def_$r f32 X=1
  run q4_def_$r q4 X=1
  run f32_F2W2_$r f32 LOWCONV_CL_FCHUNK=2 LOWCONV_CL_WAVES=2
  run q4_Q1W2_$r q4 LOWCONV_CL_QCHUNK=1 LOWCONV_CL_WAVES=2
  run q4_Q2W2_$r q4 LOWCONV_CL_QCHUNK=2 LOWCONV_CL_WAVES=2
  run f32_F2W4_$r f32 LOWCONV_CL_FCHUNK=2 LOWCONV_CL_WAVES=4
  run q4_Q1W4_$r q4 LOWCONV_CL_QCHUNK=1 LOWCONV_CL_WAVES=4
done
python3 - $o <<'PY'
import json, glob, math, sys, collections
o = sys.argv[1]
d = collections.defaultdict(dict)
for f in glob.glob(o + "/*.jsonl"):
    tag = f.split("/")[-1][:-6]
    for l in open(f):
        try: j = json.loads(l)
        except Exception: continue
        if "median_ms" in j: d[tag][j["name"]] = j["median_ms"]
cfg = sorted(set(t.rsplit("_", 1)[0] for t in d))
tot = {c: [sum(d[t].values()) * 1000 for t in d if t.rsplit("_", 1)[0] == c] for c in cfg}
for c in cfg: print("%-10s sum of layers us %s" % (c, " ".join("%.1f" % x for x in sorted(tot[c]))))
for q in [c for c in cfg if c.startswith("q4")]:
    for f in [c for c in cfg if c.startswith("f32")]:
        r = []
        for i in (1, 2, 3):
            a, b = d.get("%s_%d" % (q, i)), d.get("%s_%d" % (f, i))
            if a and b and set(a) == set(b): r.append(math.exp(sum(math.log(a[k] / b[k]) for k in a) / len(a)))
        print("%s / %s geomean per round: %s" % (q, f, " ".join("%.3f" % x for x in r)))
PY
cd $OUT && tar czf split.tgz split && rm -rf split
