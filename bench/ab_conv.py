#!/usr/bin/env python3
"""A/B of lowconv builds per layer, interleaved: each round runs every shape with every build in
turn (the build order alternating per round), `lowconv conv DESC --json --repeat R`; prints per
shape each build's median of round medians [fastest run] and new / base of both.

A build may carry its own conv options: --build "im2col=build/lowconv --route im2col".
usage: ab_conv.py --build base=PATH --build new=PATH [--threads 1] [--rounds 5] [--repeat 15]
                  [--suite NAME] [--arg OPT ...] DESC...
"""
import argparse
import json
import statistics
import subprocess
import sys


def run(cli, desc, threads, repeat, extra):
    cli, *own = cli.split()
    extra = own + extra
    cmd = [cli, "conv", desc, "--json", "--threads", str(threads), "--repeat", str(repeat)] + extra
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    rows = []
    for line in r.stdout.splitlines():
        if line.startswith("{"):
            rows.append(json.loads(line))
        elif line.startswith("["):
            rows.extend(json.loads(line))
    if r.returncode or not rows:
        sys.exit(f"ab_conv.py: {' '.join(cmd)} failed: {r.stderr.strip()[-300:]}")
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("descs", nargs="*")
    ap.add_argument("--build", action="append", default=[], help="LABEL=PATH (the first is the base)")
    ap.add_argument("--threads", default="1")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--arg", action="append", default=[])
    a = ap.parse_args()
    builds = [b.split("=", 1) for b in a.build]
    if len(builds) < 2 or not a.descs:
        sys.exit("ab_conv.py: give two --build LABEL=PATH and at least one DESC")
    for t in a.threads.split(","):
        med, fast, route = {}, {}, {}
        for r in range(a.rounds):
            order = builds if r % 2 == 0 else builds[::-1]
            for d in a.descs:
                for label, cli in order:
                    row = run(cli, d, t, a.repeat, a.arg)[0]
                    med.setdefault((d, label), []).append(row["median_ms"])
                    fast.setdefault((d, label), []).append(row.get("min_ms", row["median_ms"]))
                    route[(d, label)] = row.get("route")
        base = builds[0][0]
        print(f"\n== threads {t}, {a.rounds} rounds x --repeat {a.repeat}: median of round medians [fastest run] ms")
        print(f"{'desc':<36}" + "".join(f" {l:>20}" for l, _ in builds) +
              "".join(f" {l + '/' + base:>14}" for l, _ in builds[1:]) + "  routes")
        geo = {l: [] for l, _ in builds[1:]}
        for d in a.descs:
            m = {l: statistics.median(med[(d, l)]) for l, _ in builds}
            f = {l: min(fast[(d, l)]) for l, _ in builds}
            line = f"{d:<36}" + "".join(f" {m[l]:>10.4f} [{f[l]:.4f}]" for l, _ in builds)
            for l, _ in builds[1:]:
                geo[l].append(m[l] / m[base])
                line += f" {m[l] / m[base]:>7.3f} ({f[l] / f[base]:.2f})"
            print(line + "  " + ",".join(str(route[(d, l)]) for l, _ in builds))
        for l, g in geo.items():
            print(f"geomean {l}/{base} {statistics.geometric_mean(g):.3f} over {len(g)} shapes")


if __name__ == "__main__":
    main()
