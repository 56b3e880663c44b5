#!/usr/bin/env python3
"""Geomean over layers of q / f32 per round: qf_ratio.py DIR F32_PREFIX Q_PREFIX [LABEL]
reads DIR/<prefix>_<round>.jsonl (lowconv conv --suite ... --json) for rounds 1..9 where both exist."""
import json
import math
import os
import sys


def medians(path):
    rows = (json.loads(line) for line in open(path) if line.startswith("{"))
    return {r["name"]: r["median_ms"] for r in rows if "name" in r}


def main():
    d, fp, qp = sys.argv[1:4]
    label = sys.argv[4] if len(sys.argv) > 4 else qp
    ratios = []
    for r in range(1, 10):
        a, b = f"{d}/{fp}_{r}.jsonl", f"{d}/{qp}_{r}.jsonl"
        if not (os.path.exists(a) and os.path.exists(b)):
            continue
        f, q = medians(a), medians(b)
        logs = [math.log(q[n] / f[n]) for n in f if n in q]
        if logs:
            ratios.append(math.exp(sum(logs) / len(logs)))
    mid = sorted(ratios)[len(ratios) // 2] if ratios else float("nan")
    print(f"{label}: q / f32 per round " + " ".join(f"{x:.3f}" for x in ratios) + f" (median {mid:.3f})")


if __name__ == "__main__":
    main()
