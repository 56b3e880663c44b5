"""q8 / q4 over f32 per round and layer (stop 33's q_rounds), and f32 over cuDNN where measured."""
import json, math, statistics as st, sys, collections
d, R = sys.argv[1], int(sys.argv[2])  # results folder, rounds; b1_cudnn.jsonl there: f32 / cuDNN too
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
if not __import__("os").path.exists(f"{d}/b1_cudnn.jsonl"): sys.exit(0)
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
