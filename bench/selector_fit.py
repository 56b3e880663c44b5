#!/usr/bin/env python3
"""How close the untuned heuristic selector (src/conv/select.c) comes to the CPU autotuner.

For every shape of the given suites at each thread count, runs `lowconv tune DESC` with a fresh
tuning cache: the tuner times the heuristic's plan and every other candidate (routes x tiles x
weight-panel splits) in interleaved rounds (a warm-up round, then medians), always keeping the
heuristic's plan in the race, and writes "<route> <tile> <split> <threads> <ms> <heuristic ms>"
to the cache. Both medians therefore come from the same process and the same rounds.
A shape is a hit when the tuner kept the heuristic's plan (it does so unless another is >= 2%
faster) or the heuristic's median is within --tol (default 5%) of the tuned one. With --repeats R
each shape is tuned R times (a fresh cache each) and the median ratio decides.

Results go to a JSON-lines file (--out); shapes already in it are skipped, so a long run can be
cut into batches (--only / --skip by name or descriptor) and resumed. --report prints the table
and the hit fractions from that file without timing anything.

  python3 bench/selector_fit.py --suite resnet34-112 --threads 1,2 --out fit.jsonl
  python3 bench/selector_fit.py --report --out fit.jsonl [--markdown]
"""
import argparse
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile


def run(cmd, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    if p.returncode:
        sys.exit("selector_fit: %s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return p.stdout


def suite_shapes(lc, suite):
    out = run([lc, "conv", "--suite", suite, "--dry-run"])
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def heuristic_route(lc, desc, threads, layout):
    """The untuned selector's route (one untimed-for-our-purposes run)."""
    out = run([lc, "conv", desc, "--threads", str(threads), "--layout", layout, "--json", "--repeat", "1",
               "--warmup", "0"])
    return json.loads(out.splitlines()[-1])["route"]


def tune_once(lc, desc, threads, layout, level):
    """One tuning with a fresh cache: (tuned route, tile, split, threads, tuned ms, heuristic ms, kept)."""
    d = tempfile.mkdtemp(prefix="lc-selfit-")
    try:
        env = dict(os.environ, LOWCONV_CACHE_DIR=d)
        run([lc, "tune", desc, "--threads", str(threads), "--layout", layout, "--level", level], env)
        recs = []
        for f in glob.glob(os.path.join(d, "tune-*.txt")):
            with open(f) as fh:
                recs += [l.rstrip("\n").split("\t", 1)[1] for l in fh if l.startswith("conv ") and "\t" in l]
        if len(recs) != 1:
            sys.exit("selector_fit: expected one tuning record for %s, found %d" % (desc, len(recs)))
        route, tile, split, thr, ms, hms = recs[0].split()
        # threads 0 marks the heuristic's own plan (the tuner kept it).
        return dict(route=route, tile=int(tile), split=int(split), threads=int(thr), ms=float(ms), hms=float(hms),
                    kept=int(thr) == 0)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def choice(r):
    if r["kept"]:
        return "= heuristic"
    s = r["route"]
    if r["tile"]:
        s += " tile %d" % r["tile"]
    if r["split"]:
        s += " split %d" % r["split"]
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
    lines = []
    if markdown:
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
    else:
        lines.append("%-12s %-22s %2s %-10s %10s %-28s %10s %6s %s" % tuple(head))
    for r in rows:
        cells = [r["suite"], r["name"], str(r["threads"]), r["heuristic"], "%.3f" % r["hms"], r["choice"],
                 "%.3f" % r["ms"], "%.3f" % r["ratio"], "yes" if r["hit"] else "MISS"]
        if markdown:
            lines.append("| " + " | ".join(cells) + " |")
        else:
            lines.append("%-12s %-22s %2s %-10s %10s %-28s %10s %6s %s" % tuple(cells))
    print("\n".join(lines))
    for t in sorted({r["threads"] for r in rows}) + [None]:
        sel = [r for r in rows if t is None or r["threads"] == t]
        if not sel:
            continue
        hits = sum(r["hit"] for r in sel)
        print("%s: %d/%d shapes hit (heuristic kept or <= %.2fx tuned): %.1f%%" %
              ("all" if t is None else "threads %d" % t, hits, len(sel), 1 + tol, 100.0 * hits / len(sel)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lowconv", default=os.path.join("build", "lowconv"))
    ap.add_argument("--suite", default="resnet34-112,ocr-det", help="comma-separated built-in suites")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--layout", default="nchw", help="the suites' and the model runner's layout")
    ap.add_argument("--level", default="normal", help="tuner level (fast|normal|heavy)")
    ap.add_argument("--fast-above-ms", type=float, default=400.0,
                    help="shapes whose heuristic run takes longer are tuned at level fast (keeps a batch short)")
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
                    hroute = heuristic_route(a.lowconv, sh["desc"], t, a.layout)
                    # Size the level from the shape's work: the untuned run above is not timed reliably.
                    est = sh["flops"] / 60e9 * 1e3 / t
                    level = "fast" if est > a.fast_above_ms else a.level
                    tries = [tune_once(a.lowconv, sh["desc"], t, a.layout, level) for _ in range(a.repeats)]
                    ratios = [x["hms"] / x["ms"] for x in tries]
                    mid = sorted(range(len(tries)), key=lambda i: ratios[i])[len(tries) // 2]
                    r = dict(suite=suite, name=sh["name"], desc=sh["desc"], threads=t, layout=a.layout, level=level,
                             heuristic=hroute, hms=tries[mid]["hms"], ms=tries[mid]["ms"],
                             choice=choice(tries[mid]), ratio=statistics.median(ratios),
                             kept=all(x["kept"] for x in tries), tries=tries)
                    r["hit"] = r["kept"] or r["ratio"] <= 1 + a.tol
                    rows = [x for x in rows if not same(x)] + [r]
                    with open(a.out, "w") as fh:
                        fh.writelines(json.dumps(x) + "\n" for x in rows)
                    print("%-12s %-22s t%d %-9s %9.3f ms  tuned %-26s %9.3f ms  %.3f%s" %
                          (suite, sh["name"], t, hroute, r["hms"], r["choice"], r["ms"], r["ratio"],
                           "" if r["hit"] else "  MISS"), flush=True)
    report(rows, a.tol, a.markdown)


if __name__ == "__main__":
    main()
