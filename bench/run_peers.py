#!/usr/bin/env python3
"""Peer yardstick: times every shape of a suite with lowconv, onnxruntime and oneDNN.

usage: run_peers.py --suite NAME [--threads 1,2] [--lowconv PATH] [--onednn PATH] [--json]
       run_peers.py DESC... [same options]

The three run back to back for each shape (interleaved), so machine noise hits them alike, and
each first runs untimed for --warmup-ms (50 ms): a process's threads start on vCPUs that were idle.
Prints per shape: lowconv ms, ORT ms, oneDNN ms, lowconv/ORT, lowconv/oneDNN and
lowconv/faster peer (< 1: lowconv is faster); then the geometric mean and the max of
lowconv/faster peer, and each engine's suite total (sum of median x count).
A peer that is missing or fails shows as '-' and is left out of the ratios.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_SCRIPT = os.path.join(HERE, "peers", "ort_conv.py")


def find_lowconv(path):
    if path:
        return path
    for cand in ("build/lowconv", "build-release/lowconv"):
        full = os.path.join(HERE, "..", cand)
        if os.path.exists(full):
            return os.path.normpath(full)
    return shutil.which("lowconv")


def run_json(cmd, env=None):
    """Last JSON line of a command's stdout, or (None, error text)."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, env=env)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, str(e)
    lines = [l for l in r.stdout.splitlines() if l.startswith("{")]
    if r.returncode != 0 or not lines:
        return None, (r.stderr.strip() or r.stdout.strip() or f"exit {r.returncode}")[-300:]
    return json.loads(lines[-1]), None


def shapes(lowconv, suite, descs):
    cmd = [lowconv, "conv", "--dry-run"] + (["--suite", suite] if suite else []) + descs
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"run_peers.py: {' '.join(cmd)} failed: {r.stderr.strip()}")
    return [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def ratio(a, b):
    return a / b if a is not None and b else None


def run_threads(a, lowconv, items, threads):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    rows = []
    rep = (["--repeat", str(a.repeat)] if a.repeat else []) + ["--warmup-ms", str(a.warmup_ms)]
    for it in items:
        d = it["desc"]
        lc, lc_err = run_json([lowconv, "conv", d, "--json", "--threads", str(threads)] + rep + a.lowconv_arg)
        ort, ort_err = (run_json([a.python, ORT_SCRIPT, d, "--threads", str(threads)] + rep, env)
                        if not a.no_ort else (None, "skipped"))
        dnn, dnn_err = (run_json([a.onednn, d, "--threads", str(threads)] + rep, env)
                        if a.onednn else (None, "no onednn_conv"))
        row = {"desc": d, "name": it.get("name"), "count": it.get("count", 1),
               "lowconv_ms": lc and lc.get("median_ms"), "route": lc and lc.get("route"),
               "ort_ms": ort and ort.get("median_ms"), "onednn_ms": dnn and dnn.get("median_ms")}
        best = min([x for x in (row["ort_ms"], row["onednn_ms"]) if x], default=None)
        row.update(lc_over_ort=ratio(row["lowconv_ms"], row["ort_ms"]),
                   lc_over_onednn=ratio(row["lowconv_ms"], row["onednn_ms"]),
                   lc_over_best=ratio(row["lowconv_ms"], best))
        for key, err in (("lowconv_error", lc_err), ("ort_error", ort_err), ("onednn_error", dnn_err)):
            if err and err != "skipped":
                row[key] = err
        rows.append(row)
        if not a.json:
            print(f"{(row['name'] or '')[:22]:<22} {d:<36} {row['count']:>3} {fmt(row['lowconv_ms'], '10.4f')}"
                  f" {fmt(row['ort_ms'], '10.4f')} {fmt(row['onednn_ms'], '10.4f')} {fmt(row['lc_over_ort'], '8.2f')}"
                  f" {fmt(row['lc_over_onednn'], '8.2f')} {fmt(row['lc_over_best'], '8.2f')}  {row['route'] or ''}",
                  flush=True)
            for key in ("lowconv_error", "ort_error", "onednn_error"):
                if key in row:
                    print(f"    {key}: {row[key]}", file=sys.stderr)
    ratios = [r["lc_over_best"] for r in rows if r["lc_over_best"]]
    total = lambda k: (sum(r[k] * r["count"] for r in rows) if all(r[k] is not None for r in rows) else None)
    summary = {"threads": threads, "shapes": len(rows), "compared": len(ratios),
               "geomean_lc_over_best": math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None,
               "max_lc_over_best": max(ratios) if ratios else None,
               "total_ms": {"lowconv": total("lowconv_ms"), "ort": total("ort_ms"), "onednn": total("onednn_ms")}}
    return rows, summary


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("descs", nargs="*", help="benchdnn descriptors (besides or instead of --suite)")
    ap.add_argument("--suite")
    ap.add_argument("--threads", default="1", help="comma-separated thread counts (default 1)")
    ap.add_argument("--lowconv", help="lowconv CLI (default: build/lowconv, then PATH)")
    ap.add_argument("--onednn", help="onednn_conv (default: bench/onednn_conv next to the CLI)")
    ap.add_argument("--python", default=sys.executable, help="Python with onnx + onnxruntime for the ORT peer")
    ap.add_argument("--repeat", type=int, default=0, help="timed runs per engine (default: each picks ~0.3 s)")
    ap.add_argument("--warmup-ms", type=float, default=50.0,
                    help="untimed runs per engine until this many ms have passed (default 50): on a VM a "
                         "vCPU woken from idle can be off-core 4 ms in 8 for its first ~20 ms (bench/bench_vcpu_wake.c)")
    ap.add_argument("--lowconv-arg", action="append", default=[], help="extra lowconv conv option (repeatable)")
    ap.add_argument("--no-ort", action="store_true", help="skip onnxruntime")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    a = ap.parse_args()
    if not a.suite and not a.descs:
        ap.error("give --suite NAME or descriptors")
    lowconv = find_lowconv(a.lowconv)
    if not lowconv or not os.path.exists(lowconv):
        ap.error("lowconv CLI not found; pass --lowconv PATH")
    if not a.onednn:
        cand = os.path.join(os.path.dirname(os.path.abspath(lowconv)), "bench", "onednn_conv")
        a.onednn = cand if os.path.exists(cand) else None
    try:
        threads = [int(t) for t in a.threads.split(",") if t]
        assert threads and min(threads) >= 1
    except (ValueError, AssertionError):
        ap.error(f"--threads wants a list like 1,2, got '{a.threads}'")
    items = shapes(lowconv, a.suite, a.descs)
    out = {"suite": a.suite, "lowconv": lowconv, "onednn": a.onednn, "runs": []}
    for t in threads:
        if not a.json:
            print(f"\n== {a.suite or 'shapes'}, threads {t} (ms are medians; ratios < 1: lowconv faster)")
            print(f"{'name':<22} {'desc':<36} {'cnt':>3} {'lowconv':>10} {'ORT':>10} {'oneDNN':>10} {'lc/ORT':>8}"
                  f" {'lc/dnnl':>8} {'lc/best':>8}  route")
        rows, s = run_threads(a, lowconv, items, t)
        out["runs"].append({"threads": t, "rows": rows, "summary": s})
        if not a.json:
            tot = s["total_ms"]
            print(f"geomean lowconv/faster peer {fmt(s['geomean_lc_over_best'], '.3f')} over {s['compared']} shapes,"
                  f" max {fmt(s['max_lc_over_best'], '.3f')}; totals (ms, median x count): lowconv"
                  f" {fmt(tot['lowconv'], '.3f')}, ORT {fmt(tot['ort'], '.3f')}, oneDNN {fmt(tot['onednn'], '.3f')}")
    if a.json:
        print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
