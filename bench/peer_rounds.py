#!/usr/bin/env python3
"""Rounds of bench/run_peers.py on a loaded machine: each round runs every lowconv variant and the
peers on every shape (run_peers interleaves them per shape), and the table gives per shape the
median over the rounds of each engine's median, so one descheduled run moves nothing.

usage: peer_rounds.py --rounds 5 --threads 1 [--variant NAME=ARG,ARG ...] [run_peers options] DESC...
A variant is a set of extra lowconv conv options (e.g. before=--route=im2col); the first variant
runs the peers too, the others lowconv only. No --variant: one, 'auto', with no extra options.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("descs", nargs="*")
    ap.add_argument("--suite")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1")
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--warmup-ms", type=float, default=50.0, help="run_peers.py's (0: one warm-up run, as before)")
    ap.add_argument("--variant", action="append", default=[])
    ap.add_argument("--lowconv")
    ap.add_argument("--onednn")
    a = ap.parse_args()
    variants = [v.split("=", 1) for v in a.variant] or [["auto", ""]]
    base = [sys.executable, os.path.join(HERE, "run_peers.py"), "--json", "--repeat", str(a.repeat),
            "--warmup-ms", str(a.warmup_ms)]
    base += (["--suite", a.suite] if a.suite else []) + (["--lowconv", a.lowconv] if a.lowconv else [])
    base += (["--onednn", a.onednn] if a.onednn else []) + a.descs
    probe = os.path.join(os.path.dirname(os.path.abspath(a.lowconv or "build/lowconv")), "bench", "bench_pool")
    for t in a.threads.split(","):
        ms = {}  # (desc, engine) -> [ms per round]
        names, routes = {}, {}
        pairs = []
        for _ in range(a.rounds):
            if int(t) > 1 and os.access(probe, os.X_OK):  # what T plain threads get from the machine now
                out = subprocess.run([probe, t, "1", ""], capture_output=True, text=True).stdout
                pairs += [float(l.split(" did ")[1].split("x")[0]) for l in out.splitlines() if l.startswith("machine:")]
            for i, (vname, vargs) in enumerate(variants):
                cmd = base + ["--threads", t] + ([] if i == 0 else ["--no-ort"])
                cmd += [f"--lowconv-arg={x}" for x in vargs.split(",") if x]
                r = subprocess.run(cmd, capture_output=True, text=True, check=True)
                for row in json.loads(r.stdout)["runs"][0]["rows"]:
                    d = row["desc"]
                    names[d] = row.get("name") or ""
                    routes[(d, vname)] = row.get("route")
                    ms.setdefault((d, vname), []).append(row["lowconv_ms"])
                    if i == 0:
                        ms.setdefault((d, "ORT"), []).append(row["ort_ms"])
                        ms.setdefault((d, "oneDNN"), []).append(row["onednn_ms"])
        med = lambda d, e: statistics.median([x for x in ms.get((d, e), []) if x is not None] or [float("nan")])
        vn = [v[0] for v in variants]
        print(f"\n== threads {t}, {a.rounds} rounds (ms: median over rounds of each run's median)")
        if pairs:
            print(f"machine: {t} plain threads did " + ", ".join(f"{x:.2f}" for x in pairs) +
                  "x one thread's work at the rounds' starts (bench_pool)")
        print(f"{'name':<16} {'desc':<34}" + "".join(f" {e:>9}" for e in vn + ["ORT", "oneDNN"]) +
              "".join(f" {e + '/best':>12}" for e in vn) + "  routes")
        geo = {v: [] for v in vn}
        for d in names:
            best = min(med(d, "ORT"), med(d, "oneDNN"))
            rat = {v: med(d, v) / best for v in vn}
            for v in vn:
                geo[v].append(rat[v])
            print(f"{names[d][:16]:<16} {d:<34}" + "".join(f" {med(d, e):9.4f}" for e in vn + ["ORT", "oneDNN"]) +
                  "".join(f" {rat[v]:12.2f}" for v in vn) + "  " + ",".join(str(routes[(d, v)]) for v in vn))
        for v in vn:
            g = statistics.geometric_mean(geo[v])
            print(f"geomean {v}/faster peer {g:.3f}, max {max(geo[v]):.2f} over {len(geo[v])} shapes")


if __name__ == "__main__":
    main()
