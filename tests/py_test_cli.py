#!/usr/bin/env python3
"""End-to-end tests of the CLI (stdlib only): `lowconv conv` routes x layouts checked against the
reference, JSON keys, suites, usage errors (exit 2 + message), the ORT peer's descriptor parser
agreeing with the CLI's; the front door of every subcommand: --help generated from the option
tables, the measured and cached peak, symbolic shapes from .npy inputs, --output-dir, the messages
of bad input (exit 2 usage, 1 failure, no partial output files)."""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mini_onnx  # noqa: E402
KEYS = {"route", "median_ms", "gflops", "peak_fraction", "workspace_bytes", "max_rel_err", "desc", "threads",
        "layout", "isa", "min_ms"}
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {what}", file=sys.stderr)


def run(args, env=None, timeout=600):
    e = dict(os.environ, **(env or {}))
    return subprocess.run([CLI] + args, capture_output=True, text=True, timeout=timeout, env=e)


def json_lines(out):
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]


def test_help():
    r = run(["--help"])
    check(r.returncode == 0 and "conv" in r.stdout, "lowconv --help")
    r = run(["conv", "--help"])
    check(r.returncode == 0 and "mb1" in r.stdout and "benchdnn" in r.stdout, "lowconv conv --help")
    r = run([])
    check(r.returncode == 2 and "usage" in r.stderr, "lowconv without a command exits 2")


def test_usage_errors():
    cases = [
        (["nosuchcmd"], "unknown command"),
        (["conv"], "no descriptor"),
        (["conv", "ic3ih8oc4kh3", "--frobnicate"], "unknown option"),
        (["conv", "ic3ih8oc4kh3zz"], "invalid descriptor"),
        (["conv", "ic3ih8oc4kh9"], "extent"),
        (["conv", "ic3ih8oc4kh3", "--route", "fft"], "unknown route"),
        (["conv", "ic3ih8oc4kh3", "--budget", "12Q"], "--budget"),
        (["conv", "ic3ih8oc4kh3", "--layout", "chwn"], "unknown layout"),
        (["conv", "ic3ih8oc4kh3", "--isa", "neon"], "unknown isa"),
        (["conv", "ic3ih8oc4kh3", "--threads", "0"], "--threads"),
        (["conv", "ic3ih8oc4kh3", "--repeat"], "needs a value"),
        (["conv", "ic3ih8oc4kh3", "--act", "gelu"], "unknown act 'gelu' for --act (none|relu"),
        (["conv", "--suite", "vgg"], "unknown suite"),
    ]
    for args, needle in cases:
        r = run(args)
        check(r.returncode == 2 and needle in r.stderr, f"{args}: exit {r.returncode}, stderr {r.stderr!r}")
    r = run(["conv", "ic3ih8oc4kh3"], env={"LOWCONV_PEAK_GFLOPS": "fast"})
    check(r.returncode == 2 and "LOWCONV_PEAK_GFLOPS" in r.stderr, "bad LOWCONV_PEAK_GFLOPS")


# (descriptor, route): small shapes each route can run.
ROUTE_CASES = [
    ("mb1ic5ih9iw11oc7kh3kw3ph1pw1", "direct"),
    ("mb2ic19ih7oc13kh1", "gemm1x1"),
    ("mb1ic6ih13oc9kh3sh2ph1", "im2col"),
    ("mb1ic8ih12oc10kh3ph2dh1", "igemm"),
    ("mb1ic16ih10oc16kh3ph1", "igemm"),
    ("g12mb1ic12ih11oc12kh3sh2ph1", "depthwise"),
    ("g2mb1ic8ih9oc6kh3ph1", "auto"),
    ("mb1ic3ih17oc8oh9kh3sh2", "auto"),
]


def test_routes():
    for desc, route in ROUTE_CASES:
        for layout in ("nchw", "nhwc"):
            args = ["conv", desc, "--route", route, "--layout", layout, "--check", "--json", "--repeat", "2",
                    "--bias", "--act", "relu"]
            r = run(args)
            what = f"{desc} --route {route} --layout {layout}"
            objs = json_lines(r.stdout)
            check(r.returncode == 0 and len(objs) == 1, f"{what}: exit {r.returncode} {r.stderr.strip()} {r.stdout}")
            if len(objs) != 1:
                continue
            o = objs[0]
            check(KEYS <= set(o), f"{what}: keys {sorted(o)}")
            check(route == "auto" or o.get("route") == route, f"{what}: ran route {o.get('route')}")
            err = o.get("max_rel_err")
            check(isinstance(err, float) and err < 1e-4, f"{what}: max_rel_err {err}")
            check(o.get("layout") == layout and o.get("threads") == 1, f"{what}: layout/threads {o}")
            check(o.get("median_ms", 0) > 0 and o.get("min_ms", 0) <= o.get("median_ms", 0), f"{what}: times {o}")


def test_json_and_options():
    r = run(["conv", "ic4ih10oc8kh3ph1", "--json", "--repeat", "3", "--threads", "2", "--budget", "64K"],
            env={"LOWCONV_PEAK_GFLOPS": "50"})
    objs = json_lines(r.stdout)
    check(r.returncode == 0 and len(objs) == 1, f"json run: {r.stderr}")
    if objs:
        o = objs[0]
        check(KEYS <= set(o) and o["max_rel_err"] is None, f"max_rel_err is null without --check: {o}")
        check(o["threads"] == 2, "threads in JSON")
        check(o["workspace_bytes"] <= 64 * 1024, f"workspace {o['workspace_bytes']} within --budget 64K")
        want = o["gflops"] / (50.0 * 2)
        check(abs(o["peak_fraction"] - want) <= 1e-6 * max(1.0, want), f"peak_fraction {o['peak_fraction']} vs {want}")
    r = run(["conv", "ic4ih10oc8kh3ph1", "ic4ih6oc4kh1", "--json-array", "--repeat", "1", "--check"])
    try:
        arr = json.loads(r.stdout)
    except ValueError:
        arr = None
    check(r.returncode == 0 and isinstance(arr, list) and len(arr) == 2, f"--json-array: {r.stdout!r}")
    r = run(["conv", "ic4ih10oc8kh3ph1", "--repeat", "1", "--check"])
    check(r.returncode == 0 and "max_rel_err" in r.stdout and "GFLOP/s" in r.stdout, f"text output: {r.stdout}")
    r = run(["conv", "ic32ih10oc16kh3ph1", "--check", "--tol", "0", "--json", "--repeat", "1"])
    objs = json_lines(r.stdout)
    err = objs[0]["max_rel_err"] if objs else None
    check(err is not None and r.returncode == (1 if err > 0 else 0), f"--tol 0: exit {r.returncode}, err {err}")
    r = run(["conv", "ic64ih56oc64kh3ph1", "--route", "im2col", "--budget", "1", "--repeat", "1"])
    check(r.returncode == 1 and "budget" in r.stderr, f"over budget: exit {r.returncode}, {r.stderr!r}")
    r = run(["conv", "--dry-run", "--mb", "4", "ic4ih10oc8kh3"])
    objs = json_lines(r.stdout)
    check(r.returncode == 0 and objs and objs[0]["mb"] == 4 and objs[0]["oh"] == 8, f"--mb override: {r.stdout}")


def test_suites():
    expect = {"resnet34-112": 37, "resnet50": 53, "mobilenetv2": 52, "ocr-det": None}
    r = run(["conv", "--suite", "list"])
    for name in expect:
        check(name in r.stdout, f"--suite list names {name}")
    for name, total in expect.items():
        r = run(["conv", "--suite", name, "--dry-run"])
        objs = json_lines(r.stdout)
        check(r.returncode == 0 and objs, f"suite {name} parses: {r.stderr}")
        descs = [o["desc"] for o in objs]
        check(len(set(descs)) == len(descs), f"suite {name} lists each shape once")
        if total:
            check(sum(o["count"] for o in objs) == total, f"suite {name}: {sum(o['count'] for o in objs)} convs")
    ocr = json_lines(run(["conv", "--suite", "ocr-det", "--dry-run"]).stdout)
    for d in ("mb1ic256ih80oc256oh80kh9ph4", "mb1ic256ih160oc256oh160kh9ph4"):
        check(any(o["desc"] == d for o in ocr), f"ocr-det has {d}")
    r = run(["conv", "--suite", "mobilenetv2", "--repeat", "1", "--warmup", "0"])
    check(r.returncode == 0 and "total" in r.stdout and "b8.dw" in r.stdout, f"suite table: {r.stderr}")
    r = run(["conv", "--suite", "mobilenetv2", "--repeat", "1", "--warmup", "0", "--json"])
    objs = json_lines(r.stdout)
    check(len(objs) == 30 and all(KEYS <= set(o) and "count" in o for o in objs), "suite --json lines")


def test_peer_parser_agrees():
    path = os.path.join(HERE, "..", "bench", "peers", "ort_conv.py")
    spec = importlib.util.spec_from_file_location("ort_conv", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # onnx/onnxruntime are imported only when it runs
    descs = [d for d, _ in ROUTE_CASES] + [
        "g1mb1ic3ih224iw224oc64oh112ow112kh7kw7sh2sw2ph3pw3", "ic4ih4oc4oh4kh2", "ic3ih10iw20oc4kh3sh2",
        "ic2iw10oc2kw3", "ic256ih56oc512oh28kh1sh2ph0", "ic32ih112oc32oh56kh3sh2ph0", "n\"x\"ic3ih8oc4kh3",
        "ic3ih10iw20oc4kh3kw5sh2sw1dh1pw2", "mb1ic64ih56oc256oh56kh1ph0n\"resnet_50:res2a_branch1*4\""]
    for name in ("resnet34-112", "resnet50", "mobilenetv2", "ocr-det"):
        descs += [o["desc"] for o in json_lines(run(["conv", "--suite", name, "--dry-run"]).stdout)]
    fields = ["g", "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "pt", "pl", "pb", "pr", "dh", "dw"]
    for d in descs:
        c = json_lines(run(["conv", "--dry-run", d]).stdout)
        p = mod.parse_desc(d)
        check(c and all(c[0][f] == p[f] for f in fields), f"parsers disagree on {d}: {c} vs {p}")
    for bad in ["", "ic3oc4", "ic3ih10oc4kh3oh3ph0", "ic3ih10oc4kh3oh3", "ic3id5ih5oc4kh3", "g3ic4ih5oc6kh3"]:
        r = run(["conv", "--dry-run", bad])
        try:
            mod.parse_desc(bad)
            py_ok = True
        except mod.DescError:
            py_ok = False
        check(r.returncode == 2 and not py_ok, f"both parsers reject '{bad}'")



def help_options(cmd):
    r = run([cmd, "--help"])
    check(r.returncode == 0 and r.stdout.startswith(f"usage: lowconv {cmd}") and "exit status" in r.stdout,
          f"{cmd} --help: exit {r.returncode} {r.stderr!r}")
    return r.stdout, [l.split()[0] for l in r.stdout.splitlines() if l.startswith("  --")]


def test_help_every_command():
    want = {
        "conv": {"--route", "--threads", "--budget", "--weights", "--block", "--device", "--tune", "--isa"},
        "gemv": {"--k", "--n", "--m", "--weights", "--block", "--mode", "--isa", "--threads"},
        "info": {"--shape", "--input", "--threads", "--budget", "--max-memory", "--weights", "--block", "--q4-policy",
                 "--no-fusion", "--device", "--json"},
        "run": {"--shape", "--input", "--output-dir", "--budget", "--max-memory", "--weights", "--block", "--q4-policy",
                "--no-fusion", "--device", "--tune"},
        "bench": {"--shape", "--input", "--per-layer", "--repeat", "--budget", "--max-memory", "--weights", "--block",
                  "--q4-policy", "--no-fusion", "--device", "--tune"},
    }
    for cmd, names in want.items():
        text, listed = help_options(cmd)
        check(names <= set(listed), f"{cmd} --help lacks {sorted(names - set(listed))}")
        # the parser accepts every option the help lists (same table): never "unknown option"
        for o in listed:
            r = run([cmd, o, "--help"])
            check(r.returncode == 0 and "unknown option" not in r.stderr, f"{cmd} {o} from the help is refused")
    text, _ = help_options("conv")
    check("winograd" in text and "99 GFLOP/s" not in text, "conv --help lists winograd, no constant peak")
    r = run(["conv", "ic3ih8oc4kh3", "--route", "fft"])
    check(r.returncode == 2 and "winograd" in r.stderr, f"unknown route lists winograd: {r.stderr!r}")


def test_peak(tmp):
    cache = os.path.join(tmp, "cache")
    env = {"XDG_CACHE_HOME": cache, "LOWCONV_PEAK_GFLOPS": ""}
    r = run(["conv", "ic4ih10oc8kh3ph1", "--repeat", "1", "--json", "--isa", "scalar"], env=env)
    objs = json_lines(r.stdout)
    path = os.path.join(cache, "lowconv", "peak")
    lines = open(path).read().splitlines() if os.path.exists(path) else []
    check(r.returncode == 0 and len(lines) == 1 and lines[0].startswith("scalar\t"), f"peak measured, cached: {lines}")
    if objs and lines:
        peak = float(lines[0].split("\t")[2])
        check(abs(objs[0]["peak_fraction"] - objs[0]["gflops"] / peak) < 1e-3 * objs[0]["peak_fraction"] + 1e-9,
              f"peak_fraction from the measured {peak}")
        # a cached value is used as is: replace it and see it in the text
        fields = lines[0].split("\t")
        open(path, "w").write(f"{fields[0]}\t{fields[1]}\t1234.5\n")
        r = run(["conv", "ic4ih10oc8kh3ph1", "--repeat", "1", "--isa", "scalar"], env=env)
        check(r.returncode == 0 and "of 1234 GFLOP/s peak" in r.stdout, f"cached peak used: {r.stdout!r}")


def test_threads_and_device():
    cores = os.cpu_count() or 1
    r = run(["conv", "ic4ih6oc4kh1", "--repeat", "1", "--threads", str(cores + 1)])
    check(r.returncode == 0 and f"exceeds the {cores} online cores" in r.stderr, f"threads warning: {r.stderr!r}")
    r = run(["conv", "ic4ih6oc4kh1", "--repeat", "1", "--threads", "1"])
    check("warning" not in r.stderr, "no warning within the cores")
    r = run(["conv", "ic4ih6oc4kh1", "--device", "tpu"])
    check(r.returncode == 2 and "use cpu, opencl" in r.stderr, f"conv --device tpu: {r.stderr!r}")
    r = run(["bench", "m.onnx", "--device", "gpu"])
    check(r.returncode == 2 and "use cpu, opencl" in r.stderr, f"bench --device gpu: {r.stderr!r}")
    r = run(["conv", "ic4ih6oc4kh1", "--repeat", "1", "--tune", "heavy", "--device", "cpu"])
    check(r.returncode == 0, f"--tune heavy --device cpu: {r.stderr!r}")
    r = run(["conv", "ic4ih6oc4kh1", "--tune", "max"])
    check(r.returncode == 2 and "none|fast|normal|heavy" in r.stderr, f"bad --tune: {r.stderr!r}")
    r = run(["gemv", "--k", "64", "--n", "64", "--isa", "avx512", "--repeat", "1"])
    check(r.returncode == 0 or (r.returncode == 1 and "runs at most" in r.stderr), f"gemv --isa avx512: {r.stderr!r}")


def test_conv_messages():
    r = run(["conv", "mb1ic4ih8oc8kh3ph1", "--route", "depthwise", "--repeat", "1"])
    check(r.returncode == 1 and "depthwise needs groups == in_channels == out_channels" in r.stderr and
          "released" not in r.stderr, f"forced depthwise: {r.stderr!r}")
    r = run(["conv", "mb1ic4ih8oc4kh1", "--route", "winograd", "--repeat", "1"])
    check(r.returncode == 1 and "winograd needs a 3x3 kernel" in r.stderr, f"forced winograd: {r.stderr!r}")
    # the CLI's own buffers too large: a message with the size, no bare colon
    r = run(["conv", "mb64ic1024ih4096oc1024kh1", "--repeat", "1"], env={"ASAN_OPTIONS": "allocator_may_return_null=1"})
    check(r.returncode == 1 and "out of memory (" in r.stderr and not r.stderr.rstrip().endswith(":"),
          f"out of memory: {r.stderr!r}")


def test_model_front_door(tmp):
    model, img, i64 = (os.path.join(tmp, n) for n in ("dyn.onnx", "img.npy", "i64.npy"))
    mini_onnx.conv_model(model)
    mini_onnx.write_npy(img, (1, 3, 20, 24))
    mini_onnx.write_npy(i64, (1, 3, 20, 24), dtype="<i8")
    r = run(["info", model])
    check(r.returncode == 0 and "Nx3xHxW" in r.stdout and "--shape x=" in r.stdout, f"info symbolic: {r.stdout!r}")
    r = run(["info", model, "--json"])
    o = json.loads(r.stdout) if r.returncode == 0 else {}
    check(o.get("planned") is False and o["inputs"][0]["symbolic"] == ["N", None, "H", "W"], f"info --json: {o}")
    r = run(["info", model, "--input", "x=" + img])
    check(r.returncode == 0 and "1x4x20x24" in r.stdout and "conv routes" in r.stdout, f"info --input: {r.stdout!r}")
    out = os.path.join(tmp, "out", "a", "b")
    r = run(["run", model, "--input", "x=" + img, "--output-dir", out])
    ok = r.returncode == 0 and os.path.exists(os.path.join(out, "y.npy"))
    check(ok and mini_onnx.npy_shape(os.path.join(out, "y.npy")) == (1, 4, 20, 24),
          f"run: shapes from the .npy, --output-dir with parents: {r.stderr!r}")
    check(not [f for f in os.listdir(out) if f.endswith(".tmp")] if os.path.isdir(out) else False, "no temporaries")
    r = run(["run", model, "--input", "x=" + img, "--shape", "x=1x3x8x8", "--output-dir", out])
    check(r.returncode == 1 and "expects float32 [1x3x8x8], got float32 [1x3x20x24]" in r.stderr,
          f"--shape wins over the file: {r.stderr!r}")
    r = run(["bench", model, "--shape", "x=abc"])
    check(r.returncode == 2 and r.stderr.startswith("lowconv bench: --shape 'x=abc': bad dims") and "info" not in r.stderr,
          f"bench bad dims: {r.stderr!r}")
    r = run(["run", model, "--input", "image=" + img, "--output-dir", out])
    check(r.returncode == 2 and "no input named 'image' (inputs: 'x')" in r.stderr, f"unknown input: {r.stderr!r}")
    r = run(["run", model, "--input", "x=" + i64, "--output-dir", out])
    check(r.returncode == 1 and "expects float32" in r.stderr and "int64" in r.stderr and "dtype 1" not in r.stderr,
          f"dtype names: {r.stderr!r}")
    text = os.path.join(tmp, "text.onnx")
    open(text, "w").write("hello, this is not a model\n")
    r = run(["info", text])
    check(r.returncode == 1 and "not an ONNX file" in r.stderr and "wire type" not in r.stderr, f"text: {r.stderr!r}")
    r = run(["bench", model])
    check(r.returncode == 2 and "symbolic dims (Nx3xHxW)" in r.stderr, f"bench without shapes: {r.stderr!r}")
    for args, needle in ((["run", model, "--input", "x=" + img], "--output-dir is required"),
                         (["run", model, "--output-dir", out, "--shape", "x=1x3x8x8"], "input 'x' not given"),
                         (["info"], "no model given"), (["info", model, model], "more than one model"),
                         (["bench", model, "--max-memory", "12Q"], "--max-memory"),
                         (["info", model, "--budget", "-1"], "--budget"), (["run", "--frob"], "unknown option"),
                         (["bench", model, "--weights", "q5"], "f32|q8|q4"), (["info", model, "--shape", "x"], "NAME=")):
        r = run(args)
        check(r.returncode == 2 and needle in r.stderr, f"{args}: exit {r.returncode}, {r.stderr!r}")
    r = run(["run", os.path.join(tmp, "missing.onnx"), "--input", "x=" + img, "--output-dir", out])
    check(r.returncode == 1 and "missing.onnx" in r.stderr, f"missing model: {r.stderr!r}")
    # failures leave no output files: a plan over --max-memory (the dir is not even made) ...
    out2 = os.path.join(tmp, "out2")
    r = run(["run", model, "--input", "x=" + img, "--output-dir", out2, "--max-memory", "1K"])
    check(r.returncode == 1 and not os.path.exists(out2), f"--max-memory 1K: {r.stderr!r}")
    # ... and an output that cannot be put in place takes the others back
    out3 = os.path.join(tmp, "out3")
    os.makedirs(os.path.join(out3, "z.npy"))
    r = run(["run", model, "--input", "x=" + img, "--output-dir", out3])
    check(r.returncode == 1 and sorted(os.listdir(out3)) == ["z.npy"], f"partial outputs: {os.listdir(out3)} {r.stderr!r}")
    r = run(["run", model, "--input", "x=" + img, "--output-dir", os.path.join(text, "sub")])
    check(r.returncode == 1 and "--output-dir" in r.stderr, f"unmakeable --output-dir: {r.stderr!r}")
    r = run(["bench", model, "--input", "x=" + img, "--weights", "q4", "--repeat", "2", "--budget", "1M",
             "--max-memory", "512M", "--tune", "none"])
    check(r.returncode == 0 and "as q4" in r.stdout, f"bench q4 weight bytes: {r.stdout!r} {r.stderr!r}")
    r = run(["bench", model, "--shape", "x=1x3x16x16", "--json", "--repeat", "2"])
    o = json.loads(r.stdout) if r.returncode == 0 else {}
    check(o.get("weights") == "f32" and o.get("layers"), f"bench --json: {r.stdout!r}")


def main():
    global CLI
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir")
    a = ap.parse_args()
    CLI = os.path.abspath(a.lowconv)
    tmp = tempfile.mkdtemp(prefix="lc_cli_")
    os.environ["XDG_CACHE_HOME"] = os.path.join(tmp, "xdg")  # the measured peak is not cached in $HOME
    os.makedirs(os.environ["XDG_CACHE_HOME"])
    try:
        for t in (test_help, test_usage_errors, test_routes, test_json_and_options, test_suites, test_peer_parser_agrees,
                  test_help_every_command, test_threads_and_device, test_conv_messages):
            t()
        test_peak(tmp)
        test_model_front_door(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"py_test_cli: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
