#!/usr/bin/env python3
"""Interleaved before/after figures for the i8gemm route (issue 12): per-layer suites (f32, q4 with
fp32 activations, q4 with int8 activations) and end to end (f32, q4:fast, q4:fast with
LOWCONV_INT8_ACT=1), rounds interleaved so load on a shared machine hits every config alike.
Prints medians over rounds of each run's median, and the fastest run.

usage: i8gemm_measure.py --lowconv build/lowconv layers|e2e [--threads 1,2] [--rounds 3]
                         [--model PATH --shape NAME=DIMS ...]"""
import argparse, json, os, statistics, subprocess, sys

DET_LAYERS = ["mb1ic32ih320oc64oh320kh3ph1", "mb1ic64ih160oc128oh80kh3sh2ph1", "mb1ic64ih160oc128oh80kh1sh2ph0",
              "mb1ic128ih80oc256oh40kh3sh2ph1", "mb1ic128ih80oc256oh80kh1ph0", "mb1ic256ih40oc64oh40kh3ph1",
              "mb1ic512ih20oc512oh20kh3ph1"]


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if p.returncode:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stderr[-2000:]))
    return json.loads(p.stdout)


def layers(a):
    cfgs = [("f32", []), ("q4", ["--weights", "q4"]), ("q4-i8", ["--weights", "q4", "--int8-act"])]
    for t in a.threads:
        res = {}
        for _ in range(a.rounds):
            for name, extra in cfgs:
                for what in (["--suite", "resnet34-112"], DET_LAYERS):
                    rows = run([a.lowconv, "conv", *what, "--threads", str(t), "--repeat", str(a.repeat),
                                "--json-array", *extra])
                    for r in rows:
                        res.setdefault((r["desc"], name), []).append((r["median_ms"], r["min_ms"], r["route"],
                                                                      r.get("count", 1)))
        print("threads %d: desc | f32 | q4 | q4 int8 act (median of medians ms [fastest], route)" % t)
        tot = {n: 0.0 for n, _ in cfgs}
        for d in dict.fromkeys(k[0] for k in res):
            cells = []
            for n, _ in cfgs:
                v = res[(d, n)]
                med = statistics.median(x[0] for x in v)
                tot[n] += med * v[0][3]
                cells.append("%8.3f [%7.3f] %-9s" % (med, min(x[1] for x in v), v[0][2]))
            print("  %-36s %s" % (d, " | ".join(cells)))
        print("  total (x count): " + ", ".join("%s %.2f" % (n, tot[n]) for n, _ in cfgs))


def e2e(a):
    cfgs = [("f32", [], {}), ("q4:fast", ["--weights", "q4:fast"], {"LOWCONV_INT8_ACT": "0"}),
            ("q4:fast+i8", ["--weights", "q4:fast"], {"LOWCONV_INT8_ACT": "1"})]
    for t in a.threads:
        res = {}
        for _ in range(a.rounds):
            for name, extra, env in cfgs:
                j = run([a.lowconv, "bench", a.model, "--shape", a.shape, "--threads", str(t), "--repeat",
                         str(a.repeat), "--json", *extra], env)
                res.setdefault(name, []).append((j["median_ms"], j["min_ms"]))
        f = statistics.median(x[0] for x in res["f32"])
        print("%s threads %d: " % (os.path.basename(a.model), t) + "; ".join(
            "%s median %.2f ms (runs %s) fastest %.2f, %.3fx f32" %
            (n, statistics.median(x[0] for x in res[n]), "/".join("%.1f" % x[0] for x in res[n]),
             min(x[1] for x in res[n]), statistics.median(x[0] for x in res[n]) / f) for n, _, _ in cfgs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("what", choices=["layers", "e2e"])
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--model")
    ap.add_argument("--shape")
    a = ap.parse_args()
    a.threads = [int(x) for x in a.threads.split(",")]
    layers(a) if a.what == "layers" else e2e(a)


if __name__ == "__main__":
    main()
