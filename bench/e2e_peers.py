"""End-to-end latency of whole CNNs: lowconv (f32 and q4) against onnxruntime and OpenVINO.

Models: IResNet-34 112x112 and MobileNetV2 224x224 (tests/models/, random weights), and the real
PP-OCRv4 det model at 640x640 (--ppocr-det FILE, or fetched like bench/bench_models.py does).
Every measurement is a fresh process: load, one warm-up run, --repeat timed runs, their median.
Engines run interleaved within each round (the order rotates from round to round); the table gives
the median over --rounds rounds, so ratios come from one run on the same machine state, and the
ratios of the fastest single runs (min over rounds and runs: on a shared machine the run closest
to an idle one).
  onnxruntime: intra_op_num_threads = T, inter_op 1, sequential, default optimizations.
  OpenVINO: CPU plugin, INFERENCE_PRECISION_HINT = f32, PERFORMANCE_HINT = LATENCY,
            INFERENCE_NUM_THREADS = T (PyPI `openvino`; see bench/requirements.txt).
  lowconv: `lowconv bench MODEL --threads T` (f32), plus `--weights q4 --block 32` (q4).
  --base CLI: also the f32 and (with q4) q4 runs of another build (engines "base", "baseq4", in the
            same rotation), and the ratios f32 / base, q4 / base q4 and base q4 / base f32: an A/B of
            two trees in one run.

Usage: e2e_peers.py --lowconv CLI [--ppocr-det FILE] [--threads 1,2] [--rounds 3] [--repeat 5]
                    [--models iresnet34,ppocr_det,mobilenetv2] [--engines ort,ov,f32,q4] [--base CLI]
                    [--json OUT]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_models  # noqa: E402  (re-execs under ./.venv when numpy/onnx/onnxruntime are missing)

ENGINES = ("ort", "ov", "f32", "q4")
NAMES = {"ort": "ORT", "ov": "OpenVINO", "f32": "lowconv f32", "q4": "lowconv q4", "base": "base f32",
         "baseq4": "base q4"}


def ov_worker(path, shape, threads, repeat):
    """Runs in a child process: prints {"median_ms": ...}."""
    import numpy as np
    import openvino as ov
    core = ov.Core()
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "PERFORMANCE_HINT": "LATENCY", "INFERENCE_NUM_THREADS": str(threads)}
    req = core.compile_model(path, "CPU", cfg).create_infer_request()
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    r = bench_models.timed(lambda: req.infer({0: x}), repeat)
    r["version"] = ov.get_version()
    print(json.dumps(r))


def models_of(tmp, names, ppocr):
    out = []
    gen = [n for n in names if n != "ppocr_det"]
    by_name = {m[0].split("-")[0]: m for m in bench_models.make_models(tmp, None, gen)} if gen else {}
    for n in names:
        if n == "ppocr_det":
            if ppocr:
                out.append(("PP-OCRv4-det-640", ppocr, "x", (1, 3, 640, 640)))
            else:
                out += bench_models.make_models(tmp, None, ["ppocr_det"])
        else:
            out.append(by_name[n])
    return out


def engine_cmd(e, cli, path, in_name, dims, t, repeat):
    if e == "ort":
        return [sys.executable, os.path.join(HERE, "bench_models.py"), "--lowconv", cli, "--ort-worker", path, dims,
                str(t), str(repeat)]
    if e == "ov":
        return [sys.executable, os.path.abspath(__file__), "--lowconv", cli, "--ov-worker", path, dims, str(t),
                str(repeat)]
    cmd = [cli, "bench", path, "--shape", "%s=%s" % (in_name, dims), "--threads", str(t), "--repeat", str(repeat),
           "--json"]
    return cmd + ([] if e in ("f32", "base") else ["--weights", "q4", "--block", "32"])


def run_json(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()[-500:]))
    return json.loads(p.stdout[p.stdout.index("{"):p.stdout.rindex("}") + 1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--ppocr-det", default=None)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--models", default="iresnet34,ppocr_det,mobilenetv2")
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--json", default=None)
    ap.add_argument("--base", default=None, help="another lowconv CLI: its f32 (and q4) runs join the rotation")
    ap.add_argument("--ov-worker", nargs=4, metavar=("MODEL", "SHAPE", "T", "REPEAT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ov_worker:
        m, shape, t, rep = a.ov_worker
        return ov_worker(m, tuple(int(d) for d in shape.split("x")), int(t), int(rep))
    cli = os.path.abspath(a.lowconv)
    engines = [e for e in a.engines.split(",") if e]
    for e in engines:
        if e not in ENGINES:
            sys.exit("unknown engine %r (%s)" % (e, ",".join(ENGINES)))
    if a.base:
        engines += ["base"] + (["baseq4"] if "q4" in engines else [])
    if "ov" in engines:
        try:
            import openvino  # noqa: F401
        except ImportError:
            sys.exit("e2e_peers.py: OpenVINO is not installed (.venv/bin/pip install -r bench/requirements.txt), "
                     "or leave it out: --engines ort,f32,q4")
    threads = [int(t) for t in a.threads.split(",")]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, path, in_name, shape in models_of(tmp, a.models.split(","), a.ppocr_det):
            dims = "x".join(map(str, shape))
            for t in threads:
                samples = {e: [] for e in engines}
                for rnd in range(a.rounds):
                    k = rnd % len(engines)
                    for e in engines[k:] + engines[:k]:
                        exe = os.path.abspath(a.base) if e.startswith("base") else cli
                        js = run_json(engine_cmd(e, exe, path, in_name, dims, t, a.repeat))
                        samples[e].append((js["median_ms"], js.get("min_ms", js["median_ms"])))
                row = {"model": label, "threads": t}
                for e in engines:
                    row[e + "_ms"] = statistics.median(x[0] for x in samples[e])
                    row[e + "_min_ms"] = min(x[1] for x in samples[e])
                    row[e + "_ms_all"] = [round(x[0], 2) for x in samples[e]]
                results.append(row)
                print("%-18s T=%d  " % (label, t) + "  ".join("%s %.1f ms" % (e, row[e + "_ms"]) for e in engines),
                      flush=True)
    peers = [e for e in ("ort", "ov") if e in engines]
    both = "q4" in engines and "f32" in engines
    ratios = [(e, "%s / faster peer" % e) for e in ("f32", "q4") if e in engines and peers]
    ratios += [("q4f32", "q4 / f32")] if both else []
    ratios += [("f32base", "f32 / base")] if "base" in engines and "f32" in engines else []
    ratios += [("q4base", "q4 / base q4"), ("baseq4f32", "base q4 / base f32")] if "baseq4" in engines else []

    def ratio(r, what, key):
        if what == "q4f32":
            return r["q4" + key] / r["f32" + key]
        if what == "f32base":
            return r["f32" + key] / r["base" + key]
        if what == "q4base":
            return r["q4" + key] / r["baseq4" + key]
        if what == "baseq4f32":
            return r["baseq4" + key] / r["base" + key]
        return r[what + key] / min(r[e + key] for e in peers)

    print("\n| model | T | " + " | ".join(NAMES[e] + " ms" for e in engines) +
          "".join(" | %s" % h for _, h in ratios) + " | fastest runs: " + ", ".join(h for _, h in ratios) + " |")
    print("|---" * (3 + len(engines) + len(ratios)) + "|")
    for r in results:
        cells = ["%.1f" % r[e + "_ms"] for e in engines] + ["%.2f" % ratio(r, w, "_ms") for w, _ in ratios]
        cells.append(" / ".join("%.2f" % ratio(r, w, "_min_ms") for w, _ in ratios))
        print("| %s | %d | %s |" % (r["model"], r["threads"], " | ".join(cells)))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
