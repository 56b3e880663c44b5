#!/usr/bin/env bash
# Stop 22, call 4: the OpenCL tuner's run-off, three finalists timed in interleaved rounds (B, this
# tree) against two timed one after the other (A, the binary before it: .cl-debs/pb/lowconv-old).
# Each round tunes afresh (its own cache), so the rounds show how often the tuner picks what runs
# fastest: resnet34-112 b1 f32/q8/q4 suites, three rounds.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/ro; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$lc devices | tail -1
for r in 1 2 3; do for w in f32 q8 q4; do for t in A B; do
  b=$lc; [ $t = A ] && b=$(dirname $lc)/lowconv-old
  LOWCONV_CACHE_DIR=/tmp/lc-$t$r timeout 120 $b conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/r34_${w}_$t$r.jsonl 2>&1
done; done; done
python3 - $o <<'PY'
import json, sys, math, glob, statistics
d = sys.argv[1]
def load(f):
    r = {}
    for l in open(f):
        if l.startswith("{"):
            j = json.loads(l); r[j["name"]] = j
    return r
R = {f.split("/")[-1][:-6]: load(f) for f in glob.glob(d + "/*.jsonl")}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
names = list(R["r34_f32_B1"])
for t in "AB":
    print(f"== {t}: per layer us over rounds 1-3 (kernel per round)")
    for w in ("f32", "q8", "q4"):
        tot = []
        for n in names:
            v = [1e3 * R[f"r34_{w}_{t}{r}"][n]["median_ms"] for r in "123"]
            k = [R[f"r34_{w}_{t}{r}"][n].get("variant") for r in "123"]
            tot.append(max(v) / min(v))
            if w != "f32" or n in names[:0]: pass
        print(f"  {w}: max/min over rounds per layer, geomean {gm(tot):.3f}, worst {max(tot):.2f}")
    for r in "123":
        f = R[f"r34_f32_{t}{r}"]
        print(f"  round {r}: " + ", ".join(f"{w} / f32 {gm([R['r34_'+w+'_'+t+r][n]['median_ms'] / f[n]['median_ms'] for n in names]):.3f}" for w in ("q8", "q4")) +
              f"; f32 sum {sum(f[n]['median_ms'] for n in names):.4f} ms")
    for w in ("f32", "q8", "q4"):
        print(f"  {w} per layer (us, kernels): " + "; ".join(n + " " + "/".join(f"{1e3*R[f'r34_{w}_{t}{r}'][n]['median_ms']:.1f}" for r in "123") for n in names))
PY
} 2>&1 | tee $o/summary.txt
tar czf $OUT/ro.tgz -C $o . 2>/dev/null
