#!/usr/bin/env python3
"""Thread scaling of lowconv builds on a suite, interleaved: for each shape, every build runs at
1 and at T threads in turn, `--rounds` times; prints each build's median of medians, the
2-thread speedup (1-thread ms / T-thread ms) and the shapes above --min-ms that miss --target.

usage: ab_threads.py --suite NAME [--threads 2] [--rounds 3] [--build "LABEL=PATH [ARG...]" ...] [DESC...]
A build may carry its own conv options: --build "tuned=build/lowconv --tune fast" (warm the cache first).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(lowconv, desc, threads, extra):
    lowconv, *own = lowconv.split()
    extra = own + extra
    cmd = [lowconv, "conv", desc, "--json", "--threads", str(threads)] + extra
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode or not lines:
        sys.exit(f"ab_threads.py: {' '.join(cmd)} failed: {r.stderr.strip()[-300:]}")
    return json.loads(lines[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("descs", nargs="*")
    ap.add_argument("--suite")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--build", action="append", default=[], help="LABEL=PATH of a lowconv CLI (repeatable)")
    ap.add_argument("--min-ms", type=float, default=0.1)
    ap.add_argument("--target", type=float, default=1.8)
    ap.add_argument("--arg", action="append", default=[], help="extra lowconv conv option (repeatable)")
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build] or [["new", "build/lowconv"]]
    first = builds[0][1].split()[0]
    cmd = [first, "conv", "--dry-run"] + (["--suite", a.suite] if a.suite else []) + a.descs
    items = [json.loads(l) for l in subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
             if l.startswith("{")]
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    hdr = "".join(f" {lab + ' 1t':>10} {lab + ' ' + str(a.threads) + 't':>10} {'x':>6}" for lab, _ in builds)
    print(f"{'desc':<36}{hdr}  route")
    summary = {lab: [] for lab, _ in builds}
    for it in items:
        d = it["desc"]
        ms = {(lab, t): [] for lab, _ in builds for t in (1, a.threads)}
        route = ""
        for _ in range(a.rounds):
            for lab, path in builds:
                for t in (1, a.threads):
                    j = run(path, d, t, a.arg)
                    ms[(lab, t)].append(j["median_ms"])
                    route = j.get("route", route)
        line = f"{d:<36}"
        for lab, _ in builds:
            m1, mt = statistics.median(ms[(lab, 1)]), statistics.median(ms[(lab, a.threads)])
            line += f" {m1:10.4f} {mt:10.4f} {m1 / mt:6.2f}"
            summary[lab].append((d, m1, mt))
        print(line + "  " + route, flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    for lab, rows in summary.items():
        big = [(d, m1 / mt) for d, m1, mt in rows if m1 > a.min_ms]
        miss = [(d, round(x, 2)) for d, x in big if x < a.target]
        g = statistics.geometric_mean([x for _, x in big]) if big else float("nan")
        print(f"{lab}: {len(big)} shapes above {a.min_ms} ms, geomean speedup {g:.2f}, min "
              f"{min((x for _, x in big), default=float('nan')):.2f}, below {a.target}: {miss}")


if __name__ == "__main__":
    main()
