#!/usr/bin/env python3
"""How close the untuned heuristic selector (src/conv/select.c) comes to the CPU autotuner.

For every shape of the given suites at each thread count, runs build/bench/bench_select: it creates
the conv in a context with a (memory-only) tuner, whose prepare times the heuristic's plan and every
other candidate (routes x tiles x weight-panel splits) in interleaved rounds and keeps the fastest
(the heuristic's unless another is >= 2% faster); then it re-times the heuristic's plan and the tuned
one alternately in the same process (order swapped each round, >= 5 rounds and ~1 s) and prints both
medians and the median of the rounds' heuristic / tuned ratios. The tuner's own medians favour the
candidate that was lucky among many, so the head-to-head ratio decides: a shape is a hit when the
tuner kept the heuristic's plan or the ratio is <= 1 + --tol (default 5%). With --repeats R each shape
is run R times and the median ratio decides.

Results go to a JSON-lines file (--out); shapes already in it are skipped, so a long run can be
cut into batches (--only / --skip by name or descriptor) and resumed. --report prints the table
and the hit fractions from that file without timing anything.

  python3 bench/selector_fit.py --suite resnet34-112 --threads 1,2 --out fit.jsonl
  python3 bench/selector_fit.py --report --out fit.jsonl [--markdown]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode:
        sys.exit("selector_fit: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return p.stdout


def suite_shapes(lc, suite):
    out = run([lc, "conv", "--suite", suite, "--dry-run"])
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def head_to_head(bench, sh, threads, layout, level, rounds, min_ms):
    args = [str(sh[k]) for k in ("ic", "oc", "ih", "iw", "kh", "kw", "sh", "sw", "pt", "pl", "pb", "pr", "g")]
    out = run([bench] + args + ["--threads", str(threads), "--layout", layout, "--level", level, "--rounds",
                                str(rounds), "--min-ms", str(min_ms)])
    return json.loads(out.splitlines()[-1])


def plan_str(p):
    s = "%s %d" % (p["route"], p["tile"])
    if p["split"] > 1:
        s += "/%d" % p["split"]
    if p["threads"] > 1:
        s += " t%d" % p["threads"]
    return s


def load(path):
    rows = []
    if os.path.exists(path):
        with open(path) as fh:
            rows = [json.loads(l) for l in fh if l.strip()]
    return rows


def report(rows, tol, markdown):
    sep = " | " if markdown else "  "
    head = ["suite", "name", "T", "heuristic", "heur ms", "tuned choice", "tuned ms", "ratio", "hit"]
    # plans: route, tile (pixels, Winograd tiles per chunk, direct rows), /weight-panel split
    lines = []
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
    else:
        lines.append("%-12s %-22s %2s %-18s %10s %-18s %10s %6s %s" % tuple(head))
    for r in rows:
        # One plan: bench_select timed it once, so show the tuner's median of it (its rounds).
        hms, ms = (r["tuner_ms"], r["tuner_ms"]) if r["kept"] else (r["hms"], r["ms"])
        cells = [r["suite"], r["name"], str(r["threads"]), r["heuristic"], "%.3f" % hms, r["choice"],
                 "%.3f" % ms, "%.3f" % r["ratio"], "yes" if r["hit"] else "MISS"]
        if markdown:
            lines.append("| " + " | ".join(cells) + " |")
        else:
            lines.append("%-12s %-22s %2s %-18s %10s %-18s %10s %6s %s" % tuple(cells))
    print("\n".join(lines))
    for t in sorted({r["threads"] for r in rows}) + [None]:
        sel = [r for r in rows if t is None or r["threads"] == t]
        if not sel:
            continue
        hits = sum(r["hit"] for r in sel)
        print("%s: %d/%d shapes hit (same plan or heuristic <= %.2fx tuned): %.1f%%" %
              ("all" if t is None else "threads %d" % t, hits, len(sel), 1 + tol, 100.0 * hits / len(sel)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lowconv", default=os.path.join("build", "lowconv"), help="lists the suites' shapes")
    ap.add_argument("--bench", default=os.path.join("build", "bench", "bench_select"))
    ap.add_argument("--rounds", type=int, default=21, help="most head-to-head rounds per shape")
    ap.add_argument("--min-ms", type=float, default=1000.0, help="head-to-head rounds stop after this (>= 5)")
    ap.add_argument("--suite", default="resnet34-112,ocr-det", help="comma-separated built-in suites")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--layout", default="nchw", help="the suites' and the model runner's layout")
    ap.add_argument("--level", default="normal", help="tuner level (fast|normal|heavy)")
    ap.add_argument("--fast-above-ms", type=float, default=400.0,
                    help="shapes estimated (at 60 GFLOP/s per thread) to take longer are tuned at level fast")
    ap.add_argument("--repeats", type=int, default=1, help="tunings per shape (fresh cache each)")
    ap.add_argument("--tol", type=float, default=0.05)
    ap.add_argument("--only", help="regex on name or descriptor: time only these")
    ap.add_argument("--skip", help="regex on name or descriptor: leave these out")
    ap.add_argument("--out", default="selector_fit.jsonl")
    ap.add_argument("--redo", action="store_true", help="time shapes again even if --out has them")
    ap.add_argument("--report", action="store_true", help="only print the table of --out")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()
    rows = load(a.out)
    if not a.report:
        threads = [int(t) for t in a.threads.split(",")]
        for suite in a.suite.split(","):
            for sh in suite_shapes(a.lowconv, suite):
                key = sh["name"] + " " + sh["desc"]
                if (a.only and not re.search(a.only, key)) or (a.skip and re.search(a.skip, key)):
                    continue
                for t in threads:
                    same = lambda r: r["suite"] == suite and r["desc"] == sh["desc"] and r["threads"] == t
                    if not a.redo and any(same(r) for r in rows):
                        continue
                    # Shapes of many seconds (9x9 at 160 px) are tuned at level fast to keep a batch short.
                    est = sh["flops"] / 60e9 * 1e3 / t
                    level = "fast" if est > a.fast_above_ms else a.level
                    tries = [head_to_head(a.bench, sh, t, a.layout, level, a.rounds, a.min_ms)
                             for _ in range(a.repeats)]
                    ratios = [1.0 if x["same"] else x["ratio"] for x in tries]
                    mid = sorted(range(len(tries)), key=lambda i: ratios[i])[len(tries) // 2]
                    x = tries[mid]
                    r = dict(suite=suite, name=sh["name"], desc=sh["desc"], threads=t, layout=a.layout, level=level,
                             heuristic=plan_str(x["heuristic"]), hms=x["heur_ms"], ms=x["tuned_ms"],
                             tuner_ms=x["tuner_ms"], choice="= heuristic" if x["same"] else plan_str(x["tuned"]),
                             ratio=statistics.median(ratios), kept=all(y["same"] for y in tries), isa=x["isa"],
                             tries=tries)
                    r["hit"] = r["kept"] or r["ratio"] <= 1 + a.tol
                    rows = [x for x in rows if not same(x)] + [r]
                    with open(a.out, "w") as fh:
                        fh.writelines(json.dumps(x) + "\n" for x in rows)
                    print("%-12s %-22s t%d %-18s %9.3f ms  tuned %-18s %9.3f ms  %.3f%s" %
                          (suite, sh["name"], t, r["heuristic"], r["hms"], r["choice"], r["ms"], r["ratio"],
                           "" if r["hit"] else "  MISS"), flush=True)
    report(rows, a.tol, a.markdown)


if __name__ == "__main__":
    main()
