#!/usr/bin/env python3
"""Renders the benchmark figures of docs/benchmarks.md as PNGs from recorded results.

usage: bench/plot.py [--cpu-peers FILE ...] [--cpu-models FILE] [--gpu-dir DIR] [--q4-run FILE]
                     [--machine TEXT] [--date TEXT] [--command TEXT] [--out docs/img]

Inputs (any may be left out; a figure whose inputs are all missing is skipped with a message):
  --cpu-peers   text output of bench/run_peers.py (one or more "== SUITE, threads T" tables)
  --cpu-models  text output of bench/bench_models.py (its markdown table)
  --gpu-dir     a bench/gpu/run_h200.sh results folder (resnet34-112_b*_{f32,cudnn}*.jsonl, models.jsonl)
  --q4-run      JSON with IResNet-34 `lowconv run` wall / peak RSS per file (bench/quant_bench.py's
                report["iresnet34"]["lowconv_run"], or the same object at the top level)
Lines "# machine: ...", "# date: ...", "# command: ..." at the top of a text input label its figure;
--machine / --date / --command fill in what a file does not say. matplotlib: bench/requirements.txt. Every figure shows ratios where lowconv loses
(above 1, in red) as well as where it wins, and the targets as dashed lines.
"""
import argparse
import glob
import json
import math
import os
import re
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None

DPI = 100
WIN, LOSE, PEER = "#2a7ab9", "#d1495b", "#9a9a9a"


def read_meta(path, defaults):
    meta = dict(defaults)
    with open(path) as f:
        for line in f:
            m = re.match(r"#\s*(machine|date|command):\s*(.*)", line)
            if m:
                meta[m.group(1)] = m.group(2).strip()
    return meta


def parse_peers(path):
    """{(suite, threads): [row]} from run_peers.py's text tables; row: name, count, ms per engine."""
    tables, cur = {}, None
    for line in open(path):
        m = re.match(r"== (\S+), threads (\d+)", line)
        if m:
            cur = tables.setdefault((m.group(1), int(m.group(2))), [])
            continue
        f = line.split()
        if cur is None or len(f) < 7 or f[0] in ("name", "geomean") or not f[2].isdigit():
            continue
        try:  # '-': a peer that failed or was left out (no ratio); lowconv itself must be there
            v = [float("nan") if x == "-" else float(x) for x in f[3:6]]
        except ValueError:
            continue
        if v[0] == v[0]:
            cur.append({"name": f[0], "count": int(f[2]), "lowconv": v[0], "ORT": v[1], "oneDNN": v[2]})
    return {k: v for k, v in tables.items() if v}


def parse_models(path):
    """Rows of bench_models.py's markdown table: model, threads, ms and RSS per engine."""
    rows = []
    num = lambda s: float(s.split()[0])
    for line in open(path):
        c = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(c) != 11 or not c[1].isdigit():
            continue
        rows.append({"model": c[0], "threads": int(c[1]),
                     "ms": {"ORT": num(c[2]), "f32": num(c[3]), "q8": num(c[4]), "q4": num(c[5])},
                     "rss": {"ORT": num(c[7]), "f32": num(c[8]), "q8": num(c[9]), "q4": num(c[10])}})
    return rows


def geomean(xs):
    xs = [x for x in xs if x == x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def caption(fig, meta):
    bits = [meta.get("machine"), meta.get("date")]
    text = "  |  ".join(b for b in bits if b)
    if meta.get("command"):
        text += "\n" + meta["command"]
    fig.text(0.01, 0.005, text, fontsize=7, color="#444", va="bottom", ha="left")


def ratio_bars(ax, labels, series, title, target=None):
    """Horizontal bars of lowconv / peer per layer (log axis), red where lowconv is slower."""
    n, k = len(labels), len(series)
    h = 0.8 / k
    for j, (name, vals, hatch) in enumerate(series):
        ys = [i + (j - (k - 1) / 2) * h for i in range(n)]
        cols = [LOSE if v > 1 else WIN for v in vals]
        ax.barh(ys, [v - 1 for v in vals], left=1, height=h, color=cols, hatch=hatch, edgecolor="white",
                linewidth=0.3)
    ax.axvline(1, color="k", lw=0.8)
    if target:
        ax.axvline(target[0], color="#555", ls="--", lw=0.8)
    ax.set_xscale("log")
    known = [v for _, vs, _ in series for v in vs if v == v] or [1.0]
    lo, hi = min(min(known), 0.5), max(max(known), 2.0)
    ax.set_xlim(lo / 1.1, hi * 1.1)
    fmt = matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v)
    ax.xaxis.set_major_formatter(fmt)
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks([t for t in (0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 4, 8) if lo / 1.1 <= t <= hi * 1.1])
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_title(title, fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.grid(axis="x", lw=0.3, alpha=0.5)


def ratio_legend(fig, series_names, target):
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D
    hs = [Patch(facecolor=WIN, label="lowconv faster"), Patch(facecolor=LOSE, label="lowconv slower")]
    hs += [Patch(facecolor="white", edgecolor="#444", hatch=h, label=n) for n, h in series_names]
    hs.append(Line2D([], [], color="#555", ls="--", lw=0.8, label=target))
    fig.legend(handles=hs, loc="upper center", ncol=len(hs), fontsize=7, bbox_to_anchor=(0.5, 0.965),
               frameon=False)


def save(fig, out, name):
    path = os.path.join(out, name)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    try:  # a palette of 64 colours keeps a figure of flat fills and text well under 150 KB
        from PIL import Image
        Image.open(path).convert("RGB").quantize(64).save(path, optimize=True)
    except ImportError:
        pass
    print("wrote %s (%d KB)" % (path, (os.path.getsize(path) + 1023) // 1024))


def plot_cpu_layers(paths, out, defaults):
    tables, meta = {}, dict(defaults)
    for p in paths:
        tables.update(parse_peers(p))
        meta = read_meta(p, meta)
    if not tables:
        print("plot.py: no run_peers tables in %s; skipping the CPU per-layer figure" % ", ".join(paths))
        return
    keys = sorted(tables, key=lambda k: (k[0] != "resnet34-112", k[0], k[1]))
    cols = 2 if len(keys) > 1 else 1
    rows_of = [keys[i:i + cols] for i in range(0, len(keys), cols)]
    heights = [max(len(tables[k]) for k in r) for r in rows_of]
    fig, axes = plt.subplots(len(rows_of), cols, figsize=(8.5, 1.3 + 0.15 * sum(heights) + 0.5 * len(heights)),
                             squeeze=False, gridspec_kw={"height_ratios": heights})
    for ax in axes.flat[len(keys):]:
        ax.set_visible(False)
    for ax, key in zip(axes.flat, keys):
        rows = tables[key]
        series = [("vs ORT", [r["lowconv"] / r["ORT"] for r in rows], ""),
                  ("vs oneDNN", [r["lowconv"] / r["oneDNN"] for r in rows], "///")]
        best = [r["lowconv"] / min([p for p in (r["ORT"], r["oneDNN"]) if p == p] or [float("nan")]) for r in rows]
        ratio_bars(ax, ["%s x%d" % (r["name"][:18], r["count"]) for r in rows], series,
                   "%s, %d thread%s: lowconv / peer time\ngeomean vs faster peer %.3f, %d of %d above 1.25"
                   % (key[0], key[1], "s" if key[1] > 1 else "", geomean(best), sum(b > 1.25 for b in best),
                      len(best)), target=(1.25, "target: no layer above 1.25"))
    fig.suptitle("CPU conv layers: lowconv time / peer time per layer (log axis)", fontsize=10)
    ratio_legend(fig, [("vs ONNX Runtime", ""), ("vs oneDNN", "///")], "target: no layer above 1.25")
    caption(fig, meta)
    fig.tight_layout(rect=(0, 0.035, 1, 0.95))
    save(fig, out, "perlayer-cpu.png")


def load_jsonl(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.startswith("{")]


def first_by_desc(paths):
    got = {}
    for p in sorted(paths):
        for r in load_jsonl(p):
            got.setdefault(r["desc"], r)
    return got


def gpu_meta(d, defaults):
    meta = dict(defaults)
    dev = os.path.join(d, "devices.txt")
    if os.path.exists(dev):
        for line in open(dev):
            if line.strip().startswith("opencl:") and "machine" not in defaults:
                meta["machine"] = line.split(None, 1)[1].strip()
            if "measured:" in line:
                meta["machine"] = meta.get("machine", "") + " (" + line.split("measured:")[1].strip() + ")"
    m = re.search(r"(\d{4}-\d\d-\d\d)-(\d\d)(\d\d)", os.path.basename(os.path.normpath(d)))
    if m and "date" not in defaults:
        meta["date"] = "%s %s:%s UTC" % m.groups()
    meta.setdefault("command", "bench/gpu/run_h200.sh; results: " + os.path.normpath(d))
    return meta


def plot_gpu_layers(d, out, defaults):
    meta = gpu_meta(d, defaults)
    panels = []
    for mb in (1, 32):
        lc = first_by_desc(glob.glob(os.path.join(d, "resnet34-112_b%d_f32_r*.jsonl" % mb)))
        cu = first_by_desc(glob.glob(os.path.join(d, "resnet34-112_b%d_cudnn_r*.jsonl" % mb)))
        common = [k for k in lc if k in cu]
        if common:
            panels.append((mb, [(lc[k], cu[k]) for k in common]))
    if not panels:
        print("plot.py: no resnet34-112 lowconv/cuDNN suites in %s; skipping the H200 per-layer figure" % d)
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(4.4 * len(panels), 1.2 + 0.17 * len(panels[0][1])),
                             squeeze=False)
    for ax, (mb, pairs) in zip(axes[0], panels):
        # Device time: lowconv's profiling events against cuDNN's best of event / back-to-back / graph.
        dev = [r["median_ms"] / min(c["device_ms"], c["wall_ms"], c.get("graph_ms", 1e9)) for r, c in pairs]
        wall = [r["wall_ms"] / c["wall_ms"] for r, c in pairs]
        ratio_bars(ax, ["%s x%d" % ((r.get("name") or r["desc"])[:18], r.get("count", 1)) for r, _ in pairs],
                   [("device time", dev, ""), ("wall, back to back", wall, "///")],
                   "resnet34-112 batch %d" % mb,
                   target=(1.2, ""))
        ax.set_title(ax.get_title() + "\ngeomean: device %.3f, wall %.3f" % (geomean(dev), geomean(wall)), fontsize=8)
    fig.suptitle("H200 conv layers: lowconv OpenCL time / cuDNN time (PyTorch, TF32 off; log axis)", fontsize=10)
    ratio_legend(fig, [("device time", ""), ("wall, back to back", "///")], "target: geomean <= 1.2")
    caption(fig, meta)
    fig.tight_layout(rect=(0, 0.06, 1, 0.9))
    save(fig, out, "perlayer-h200.png")


def gpu_models(d):
    """{(net, batch): {engine label: ms}} from models.jsonl (first measurement of each)."""
    p = os.path.join(d, "models.jsonl")
    nets = {}
    if not os.path.exists(p):
        return nets
    for r in load_jsonl(p):
        e = nets.setdefault((r["net"], r["batch"]), {})
        if r["engine"] == "lowconv-opencl" and r.get("rc", 0) == 0:
            e.setdefault("lowconv " + r["weights"], {"ms": r["median_ms"], "weights": r["device_weight_bytes"],
                                                    "act": r.get("device_activation_bytes")})
        elif r["engine"] == "pytorch-cudnn":
            e.setdefault("PyTorch eager", {"ms": r["eager_ms"]})
            e.setdefault("PyTorch graph", {"ms": r["graph_ms"]})
    return nets


SHORT = {"iresnet34-112": "IResNet34", "iresnet34": "IResNet34", "mobilenetv2-224": "MbNetV2",
         "ocr_det-640": "ocr_det", "ocr_det": "ocr_det", "PP-OCRv4-det-640": "PPv4 det",
         "ch_PP-OCRv4_det": "PPv4 det", "ch_ppocr_mobile_v2.0_cls": "PP cls", "ch_PP-OCRv4_rec": "PPv4 rec"}


def short(name):
    return SHORT.get(name, name[:12])


def grouped(ax, groups, engines, values, colors, title, ylabel, ref=None, annotate=None, log=False):
    n = len(engines)
    w = 0.8 / n
    for j, eng in enumerate(engines):
        xs = [i + (j - (n - 1) / 2) * w for i in range(len(groups))]
        vals = [values[g].get(eng, float("nan")) for g in groups]
        ax.bar(xs, vals, width=w, color=colors[j], label=eng)
        for x, v in zip(xs, vals):
            if annotate and v == v:
                ax.text(x, v, annotate(v), ha="center", va="bottom", fontsize=5, rotation=90)
    if ref:
        ax.axhline(ref[0], color="k", lw=0.8, ls="--", label=ref[1])
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=7)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=9)
    ax.tick_params(axis="y", labelsize=7)
    top = max(v for g in groups for v in values[g].values() if v == v)
    if log:
        ax.set_yscale("log")
        bottom = min(v for g in groups for v in values[g].values() if v == v) / 2
        ax.set_ylim(bottom, top * 6)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    else:
        ax.set_ylim(0, top * 1.45)
    ax.legend(fontsize=6, ncol=3, loc="upper left")
    ax.grid(axis="y", lw=0.3, alpha=0.5)


ENG_COLORS = ["#9a9a9a", "#2a7ab9", "#6fb07f", "#e3a93b", "#555555"]


def plot_e2e(models_path, gpu_dir, out, defaults):
    panels = []
    if models_path and os.path.exists(models_path):
        rows = parse_models(models_path)
        if rows:
            panels.append(("cpu", rows, read_meta(models_path, defaults)))
    nets = gpu_models(gpu_dir) if gpu_dir else {}
    if nets:
        panels.append(("gpu", nets, gpu_meta(gpu_dir, {})))
    if not panels:
        print("plot.py: no model results; skipping the end-to-end figure")
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(5.6 * len(panels), 3.8), squeeze=False)
    notes = []
    for ax, (kind, data, meta) in zip(axes[0], panels):
        if kind == "cpu":
            groups = ["%s\nT=%d" % (short(r["model"]), r["threads"]) for r in data]
            vals = {g: {("lowconv " + k if k != "ORT" else "ORT"): r["ms"][k] / r["ms"]["ORT"]
                        for k in r["ms"]} for g, r in zip(groups, data)}
            engines = ["ORT", "lowconv f32", "lowconv q8", "lowconv q4"]
            grouped(ax, groups, engines, vals, ENG_COLORS, "CPU: time per run / ONNX Runtime's", "ratio",
                    ref=(1.0, "ORT = 1 (target <= 1: IResNet34, PPv4 det)"),
                    annotate=lambda v: "%.2f" % v)
            notes.append("CPU: " + ", ".join(x for x in (meta.get("machine"), meta.get("date")) if x)
                         + (" — " + meta["command"] if meta.get("command") else ""))
        else:
            keys = sorted(data, key=lambda k: (k[0] != "iresnet34", k[0], k[1]))
            groups = ["%s\nb%d" % (short(n), b) for n, b in keys]
            vals = {g: {e: v["ms"] / data[k]["PyTorch graph"]["ms"] for e, v in data[k].items()}
                    for g, k in zip(groups, keys) if "PyTorch graph" in data[k]}
            groups = [g for g in groups if g in vals]
            engines = ["PyTorch eager", "lowconv f32", "lowconv q8", "lowconv q4"]
            grouped(ax, groups, engines, vals, ENG_COLORS, "H200: time per run / PyTorch CUDA graph's", "ratio (log)",
                    ref=(1.0, "PyTorch CUDA graph = 1"), annotate=lambda v: "%.2f" % v, log=True)
            notes.append("GPU: " + ", ".join(x for x in (meta.get("machine", "")[:60], meta.get("date")) if x)
                         + " — " + meta["command"])
    fig.suptitle("Whole networks, end to end (< 1: faster than the peer)", fontsize=10)
    fig.text(0.01, 0.005, "\n".join(notes), fontsize=6, color="#444", va="bottom")
    fig.tight_layout(rect=(0, 0.06 + 0.02 * len(notes), 1, 0.96))
    save(fig, out, "e2e.png")


def load_q4_run(path):
    with open(path) as f:
        d = json.load(f)
    meta = d.get("meta", {})
    d = d.get("iresnet34", d)
    return d.get("lowconv_run", d), meta


def plot_memory(models_path, q4_path, gpu_dir, out, defaults):
    panels = []
    if models_path and os.path.exists(models_path):
        rows = [r for r in parse_models(models_path) if r["threads"] == 1]
        if rows:
            panels.append(("cpu", rows, read_meta(models_path, defaults)))
    if q4_path and os.path.exists(q4_path):
        runs, meta = load_q4_run(q4_path)
        panels.append(("q4", runs, dict(defaults, **meta)))
    nets = gpu_models(gpu_dir) if gpu_dir else {}
    if nets:
        panels.append(("gpu", nets, gpu_meta(gpu_dir, {})))
    if not panels:
        print("plot.py: no memory results; skipping the memory figure")
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    notes = []
    for ax, (kind, data, meta) in zip(axes[0], panels):
        where = ", ".join(x for x in (meta.get("machine", "")[:60], meta.get("date")) if x)
        if kind == "cpu":
            groups = [short(r["model"]) for r in data]
            vals = {g: {("lowconv " + k if k != "ORT" else "ORT"): r["rss"][k] for k in r["rss"]}
                    for g, r in zip(groups, data)}
            grouped(ax, groups, ["ORT", "lowconv f32", "lowconv q8", "lowconv q4"], vals, ENG_COLORS,
                    "CPU peak RSS of the process, 1 thread", "MiB (log)", annotate=lambda v: "%.0f" % v,
                    log=True)
            notes.append("RSS: " + where + (" — " + meta["command"] if meta.get("command") else ""))
        elif kind == "q4":
            order = [k for k in ("fp32", "fp32_file_weights_q4", "q4_file_before", "q4_file") if k in data]
            names = {"fp32": "fp32 file", "fp32_file_weights_q4": "fp32 file,\n--weights q4",
                     "q4_file_before": "saved q4 file\n(before)", "q4_file": "saved q4 file"}
            rss = [data[k]["peak_rss_mb"] for k in order]
            wall = [data[k]["wall_s"] for k in order]
            bars = ax.bar(range(len(order)), rss, color=[PEER if k.startswith("fp32") else LOSE if data[k]["peak_rss_mb"] > 40 else WIN for k in order])
            for b, r, w in zip(bars, rss, wall):
                ax.text(b.get_x() + b.get_width() / 2, r, "%.0f MB\n%.2f s" % (r, w), ha="center", va="bottom",
                        fontsize=6)
            ax.axhline(40, color=LOSE, ls="--", lw=0.8, label="target: saved q4 file <= 40 MB")
            ax.set_xticks(range(len(order)))
            ax.set_xticklabels([names[k] for k in order], fontsize=7)
            ax.set_ylabel("peak RSS, MB (/usr/bin/time)", fontsize=8)
            ax.set_ylim(0, max(rss) * 1.25)
            ratio = ""
            if "fp32" in data and "q4_file" in data:
                ratio = ", q4 / fp32 time %.2fx (target 0.3x)" % (data["q4_file"]["wall_s"] / data["fp32"]["wall_s"])
            ax.set_title("IResNet-34-112 `lowconv run`, whole process\n(labels: RSS, wall load + first result%s)"
                         % ratio, fontsize=8)
            ax.legend(fontsize=6)
            ax.tick_params(axis="y", labelsize=7)
            notes.append("lowconv run: " + where + (" — " + meta["command"] if meta.get("command") else ""))
        else:
            keys = sorted(data, key=lambda k: (k[0] != "iresnet34", k[0], k[1]))
            groups = ["%s\nb%d" % (short(n), b) for n, b in keys]
            vals = {g: {e: v["weights"] / 1e6 for e, v in data[k].items() if "weights" in v}
                    for g, k in zip(groups, keys)}
            grouped(ax, groups, ["lowconv f32", "lowconv q8", "lowconv q4"], vals, ENG_COLORS[1:],
                    "H200: weight bytes on the device", "MB (log)", annotate=lambda v: "%.1f" % v,
                    log=True)
            notes.append("device bytes: " + where)
    fig.suptitle("Memory", fontsize=10)
    fig.text(0.01, 0.005, "\n".join(notes), fontsize=6, color="#444", va="bottom")
    fig.tight_layout(rect=(0, 0.04 + 0.025 * len(notes), 1, 0.96))
    save(fig, out, "memory.png")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpu-peers", nargs="*", default=[])
    ap.add_argument("--cpu-models")
    ap.add_argument("--gpu-dir")
    ap.add_argument("--q4-run")
    ap.add_argument("--machine")
    ap.add_argument("--date")
    ap.add_argument("--command", help="how the CPU inputs were made, where a file does not say")
    ap.add_argument("--out", default="docs/img")
    a = ap.parse_args()
    if plt is None:
        print("plot.py: matplotlib is not installed (pip install -r bench/requirements.txt); no figures made")
        return 0
    os.makedirs(a.out, exist_ok=True)
    defaults = {k: v for k, v in (("machine", a.machine), ("date", a.date), ("command", a.command)) if v}
    peers = [p for p in a.cpu_peers if os.path.exists(p)]
    if peers:
        plot_cpu_layers(peers, a.out, defaults)
    if a.gpu_dir and os.path.isdir(a.gpu_dir):
        plot_gpu_layers(a.gpu_dir, a.out, {})
    gpu = a.gpu_dir if a.gpu_dir and os.path.isdir(a.gpu_dir) else None
    plot_e2e(a.cpu_models, gpu, a.out, defaults)
    plot_memory(a.cpu_models, a.q4_run, gpu, a.out, defaults)
    return 0


if __name__ == "__main__":
    sys.exit(main())
