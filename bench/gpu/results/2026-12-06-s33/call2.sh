#!/usr/bin/env bash
# Stop 33, call 2 (issues 9, 10), for an H200 after call 1 ran on an H100: Q_ROUNDS independent
# tunings (level fast, empty caches) of f32 / q8 / q4 at batch 1 (resnet34-112), cuDNN on the same
# suite in the same run, then IResNet-34-112's load to first result (one cold, WARM warm starts).
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/q; mkdir -p $o
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader | tee $OUT/gpu.txt
S() { timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
for r in $(seq ${Q_ROUNDS:-6}); do
  ws="f32 q8 q4"; [ $((r % 2)) = 0 ] && ws="q4 q8 f32"
  for w in $ws; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast > $o/b1_${w}_$r.jsonl; done
done
timeout 120 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb 1 > $o/b1_cudnn.jsonl 2>/dev/null
python3 - $o ${Q_ROUNDS:-6} <<'PY' | tee $OUT/q_summary.txt
import json, math, statistics as st, sys, collections
d, R = sys.argv[1], int(sys.argv[2])
def load(f): return {x["name"]: x for x in map(json.loads, (l for l in open(f) if l.startswith("{"))) if "name" in x}
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
try:
    cu = {}
    for l in open(f"{d}/b1_cudnn.jsonl"):
        if l.startswith("{"):
            x = json.loads(l); n = x.get("name")
            t = [x[k] for k in ("device_ms", "graph_ms") if isinstance(x.get(k), (int, float))]
            if n and t: cu[n] = min(t)
    for r in range(1, R + 1):
        f = load(f"{d}/b1_f32_{r}.jsonl")
        print("round", r, "f32 / cuDNN (device, best of its timings) %.3f" % gm([f[k]["median_ms"] / cu[k] for k in f if k in cu]))
except Exception as e: print("cuDNN summary:", e)
PY
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
rm -rf /tmp/lc-m; export LOWCONV_CACHE_DIR=/tmp/lc-m CUDA_CACHE_PATH=/tmp/cc-m; rm -rf /tmp/cc-m
for s in cold $(seq -f warm%g ${WARM:-6}); do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/dev/null > $o/ir34_$s.json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('iresnet34 b1 $s start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" $o/ir34_$s.json
done | tee -a $OUT/q_summary.txt
cd $OUT && tar czf q.tgz q && rm -rf q
