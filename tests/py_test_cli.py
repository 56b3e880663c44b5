#!/usr/bin/env python3
"""End-to-end tests of `lowconv conv` (stdlib only): routes x layouts checked against the
reference, JSON keys, suites, usage errors (exit 2 + message), and that the ORT peer's
descriptor parser agrees with the CLI's."""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
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


def main():
    global CLI
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir")
    a = ap.parse_args()
    CLI = os.path.abspath(a.lowconv)
    for t in (test_help, test_usage_errors, test_routes, test_json_and_options, test_suites, test_peer_parser_agrees):
        t()
    print(f"py_test_cli: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
