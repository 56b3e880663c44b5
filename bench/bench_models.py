"""End-to-end latency and peak RSS of whole CNNs: lowconv (f32 / q8 / q4, block 32) vs onnxruntime.

Models: IResNet-34 112x112, MobileNetV2 224x224, the generated PP-OCR-det-like net 640x640
(tests/models/), and the real PP-OCRv4 det model 640x640 (from the rapidocr-onnxruntime wheel,
cached by tests/py_test_rapidocr.py under BUILD_DIR/rapidocr, downloaded here if missing).
Every measurement is a fresh process (so ru_maxrss is that engine's peak alone): it loads the model,
runs once to warm up, then --repeat timed runs and reports their median. Engines are interleaved
within each round and the table shows the median over --rounds rounds. onnxruntime runs with
intra_op_num_threads = T, inter_op 1, sequential execution, default optimizations; its RSS includes
the Python interpreter, numpy and the onnxruntime library (the 'ort import' line shows that floor).

Usage: bench_models.py --lowconv CLI [--build-dir DIR] [--threads 1,2] [--rounds 3] [--repeat 5]
                       [--models iresnet34,mobilenetv2,ocr_det,ppocr_det] [--json OUT.json]"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV_PY = os.path.join(ROOT, ".venv", "bin", "python")

try:
    import numpy as np
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401
except ImportError:
    if os.path.exists(VENV_PY) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.dirname(os.path.dirname(VENV_PY))):
        os.execv(VENV_PY, [VENV_PY] + sys.argv)
    sys.exit("bench_models.py needs numpy, onnx and onnxruntime (see tests/requirements.txt)")


def ort_worker(path, shape, threads, repeat):
    """Runs in a child process: prints {"median_ms": ...}."""
    import onnxruntime as ort
    if path == "-":  # import-only floor
        print(json.dumps({"median_ms": 0.0}))
        return
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).uniform(-1, 1, shape).astype(np.float32)
    feed = {sess.get_inputs()[0].name: x}
    print(json.dumps(timed(lambda: sess.run(None, feed), repeat)))


def timed(run, repeat):
    """One warm-up call of run(), then repeat timed ones: their median and min in ms."""
    run()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        run()
        ts.append((time.perf_counter() - t) * 1e3)
    return {"median_ms": statistics.median(ts), "min_ms": min(ts)}


# ru_maxrss survives exec and a forked child starts with its parent's resident pages, so a child
# of this (numpy + onnxruntime, ~120 MiB) process would never report less than that. A small
# `python -S` (~8 MiB) forks the engine and reports the engine's own ru_maxrss from wait4.
SPAWN = ("import os, sys\n"
         "pid = os.fork()\n"
         "if pid == 0:\n"
         "    os.execv(sys.argv[1], sys.argv[1:])\n"
         "_, st, ru = os.wait4(pid, 0)\n"
         "print('\\nMAXRSS_KIB=%d' % ru.ru_maxrss, flush=True)\n"
         "sys.exit(os.waitstatus_to_exitcode(st))\n")


def run_measured(args):
    """Returns (the engine's JSON line, its peak RSS in MiB)."""
    p = subprocess.run([sys.executable, "-S", "-c", SPAWN] + list(args), capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()[-500:]))
    out, _, rss = p.stdout.rpartition("MAXRSS_KIB=")
    return json.loads(out[out.index("{"):out.rindex("}") + 1]), int(rss) / 1024.0


def make_models(tmp, build_dir, names):
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    import iresnet34
    import mobilenetv2
    import ocr_det
    gen = {"iresnet34": (iresnet34.build, 112), "mobilenetv2": (mobilenetv2.build, 224), "ocr_det": (ocr_det.build, 640)}
    models = []
    for name in names:
        if name in gen:
            build, size = gen[name]
            path = os.path.join(tmp, "%s_%d.onnx" % (name, size))
            onnx.save(build(size), path)
            models.append(("%s-%d" % (name, size), path, "input", (1, 3, size, size)))
        elif name == "ppocr_det":
            import py_test_rapidocr
            found, why = py_test_rapidocr.fetch_models(os.path.join(build_dir or tmp, "rapidocr"))
            if not found:
                print("skipping the real PP-OCRv4 det model: " + why)
                continue
            models.append(("PP-OCRv4-det-640", found["ch_PP-OCRv4_det_infer.onnx"], "x", (1, 3, 640, 640)))
        else:
            sys.exit("unknown model %r" % name)
    return models


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir", default=None)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--models", default="iresnet34,mobilenetv2,ocr_det,ppocr_det")
    ap.add_argument("--json", default=None)
    ap.add_argument("--ort-worker", nargs=4, metavar=("MODEL", "SHAPE", "T", "REPEAT"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.ort_worker:
        m, shape, t, rep = a.ort_worker
        return ort_worker(m, tuple(int(d) for d in shape.split("x")), int(t), int(rep))
    threads = [int(t) for t in a.threads.split(",")]
    cli = os.path.abspath(a.lowconv)
    me = [sys.executable, os.path.abspath(__file__), "--lowconv", cli]
    engines = ("ort", "f32", "q8", "q4")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        models = make_models(tmp, a.build_dir, a.models.split(","))
        _, ort_floor = run_measured(me + ["--ort-worker", "-", "1", "1", "1"])
        print("ort import (python + numpy + onnxruntime, no session): peak RSS %.1f MiB" % ort_floor)
        for label, path, in_name, shape in models:
            dims = "x".join(map(str, shape))
            for t in threads:
                samples = {e: [] for e in engines}
                for rnd in range(a.rounds):
                    for e in engines:
                        if e == "ort":
                            cmd = me + ["--ort-worker", path, dims, str(t), str(a.repeat)]
                        else:
                            cmd = [cli, "bench", path, "--shape", "%s=%s" % (in_name, dims), "--threads", str(t),
                                   "--repeat", str(a.repeat), "--json"]
                            if e != "f32":
                                cmd += ["--weights", e, "--block", "32"]
                        js, rss = run_measured(cmd)
                        samples[e].append((js["median_ms"], rss))
                row = {"model": label, "threads": t}
                for e in engines:
                    row[e + "_ms"] = statistics.median(s[0] for s in samples[e])
                    row[e + "_rss_mib"] = statistics.median(s[1] for s in samples[e])
                    row[e + "_ms_all"] = [round(s[0], 2) for s in samples[e]]
                results.append(row)
                print("%-18s T=%d  " % (label, t) + "  ".join(
                    "%s %.1f ms (x%.2f) %.0f MiB (x%.2f)" % (e, row[e + "_ms"], row[e + "_ms"] / row["ort_ms"],
                                                            row[e + "_rss_mib"], row[e + "_rss_mib"] / row["ort_rss_mib"])
                    for e in engines), flush=True)
    # Median over rounds, then the best round: on a shared machine the best round is the closest
    # to an idle one, the median shows what a user sees.
    print("\n| model | T | ORT ms | f32 ms (ratio) | q8 ms (ratio) | q4 ms (ratio) | best-round ratios f32/q8/q4 "
          "| ORT RSS MiB | f32 RSS (ratio) | q8 RSS (ratio) | q4 RSS (ratio) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        best = {e: min(r[e + "_ms_all"]) for e in engines}
        print("| %s | %d | %.1f | %s | %s | %.0f | %s |" % (
            r["model"], r["threads"], r["ort_ms"],
            " | ".join("%.1f (%.2f)" % (r[e + "_ms"], r[e + "_ms"] / r["ort_ms"]) for e in engines[1:]),
            " / ".join("%.2f" % (best[e] / best["ort"]) for e in engines[1:]),
            r["ort_rss_mib"],
            " | ".join("%.0f (%.2f)" % (r[e + "_rss_mib"], r[e + "_rss_mib"] / r["ort_rss_mib"]) for e in engines[1:])))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"ort_import_rss_mib": ort_floor, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
