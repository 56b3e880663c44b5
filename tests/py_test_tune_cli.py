#!/usr/bin/env python3
"""`lowconv tune` and --tune on the CPU (stdlib only): a cold tune fills the cache and labels the
convs [tuned], a warm conv/info/run reads it ([cache], no candidates timed) and gives the same
outputs as a run without --tune when the route is the same; both layouts are tuned, and a model's
tuning times its convs in both layouts (a "layout" record per shape); usage errors
exit 2; a corrupt cache warns and is rewritten; no --tune never reads the cache."""
import argparse
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mini_onnx  # noqa: E402
import py_test_cli as t  # noqa: E402  (check, run and json_lines, with their pass/fail counts)

check, run, rows_of = t.check, t.run, t.json_lines


def cache_files(d):
    return [os.path.join(d, f) for f in os.listdir(d) if f.startswith("tune-") and f.endswith(".txt")] \
        if os.path.isdir(d) else []


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir")
    a = ap.parse_args()
    t.CLI = os.path.abspath(a.lowconv)
    tmp = tempfile.mkdtemp(prefix="lc_tune_cli_")
    cache = os.path.join(tmp, "cache")
    env = {"LOWCONV_CACHE_DIR": cache, "XDG_CACHE_HOME": os.path.join(tmp, "xdg")}
    descs = ["mb1ic16ih10oc16kh3ph1", "mb1ic8ih9oc16kh1sh2"]
    try:
        r = run(["tune"] + descs + ["--level", "fast", "--threads", "2", "--json"], env)
        rows = rows_of(r.stdout)
        check(r.returncode == 0 and len(rows) == 4, f"tune: rc {r.returncode}, {len(rows)} rows: {r.stderr}")
        check({x["layout"] for x in rows} == {"nchw", "nhwc"}, "both layouts tuned")
        check(all(x.get("tuned", "").endswith("[tuned]") and x["candidates"] >= 2 and not x["tune_cached"]
                  for x in rows), f"cold rows: {rows}")
        files = cache_files(cache)
        check(len(files) == 1, f"one cache file: {files}")
        text = open(files[0]).read() if files else ""
        check(text.count("\n") == 6 and "conv t2 nhwc f32" in text, f"4 records: {text}")
        # Warm: no timing, the same routes.
        r = run(["conv"] + descs + ["--tune", "normal", "--threads", "2", "--json"], env)
        warm = rows_of(r.stdout)
        check(r.returncode == 0 and all(x.get("tune_cached") == 1 and x["candidates"] == 0 for x in warm),
              f"warm: {warm}")
        check([x["route"] for x in warm] == [x["route"] for x in rows if x["layout"] == "nchw"], "warm routes")
        check(open(files[0]).read() == text, "a warm run leaves the file alone")
        # Without --tune the cache is not read.
        r = run(["conv"] + descs + ["--threads", "2", "--json"], env)
        plain = rows_of(r.stdout)
        check(r.returncode == 0 and all("tuned" not in x for x in plain), f"untuned: {plain}")
        # A model: info --tune labels each conv; run --tune gives the untuned bits when the route is the same.
        model = os.path.join(tmp, "m.onnx")
        mini_onnx.conv_model(model, in_dims=(1, 3, 12, 12), cout=8)
        r = run(["tune", model, "--level", "fast"], env)
        check(r.returncode == 0 and "[tuned]" in r.stdout, f"tune model: {r.stdout} {r.stderr}")
        # ... and timed its conv in both layouts for the plan's layout choice (model/layout.c)
        text = open(files[0]).read() if files else ""
        check("layout t1 n1 g1 ic3 oc8 ih12 iw12 kh3 kw3" in text, f"a layout record: {text}")
        r = run(["info", model, "--tune", "fast"], env)
        check(r.returncode == 0 and "[cache]" in r.stdout, f"info warm: {r.stdout} {r.stderr}")
        route = next((l.split()[1] for l in r.stdout.splitlines() if l.strip().startswith("conv0")), "")
        xin = os.path.join(tmp, "x.npy")
        mini_onnx.write_npy(xin, [1, 3, 12, 12], 0.5)
        outs = {}
        for tune in ([], ["--tune", "fast"]):
            od = os.path.join(tmp, "out" + str(len(tune)))
            rr = run(["run", model, "--input", "x=" + xin, "--output-dir", od] + tune, env)
            check(rr.returncode == 0, f"run {tune}: {rr.stderr}")
            outs[len(tune)] = open(os.path.join(od, "y.npy"), "rb").read() if rr.returncode == 0 else b""
        r = run(["info", model], env)
        plain_route = next((l.split()[1] for l in r.stdout.splitlines() if l.strip().startswith("conv0")), "")
        if route == plain_route:
            check(outs[0] == outs[2], "tuned run with the heuristic's route gives the same bits")
        r = run(["bench", model, "--tune", "fast", "--repeat", "2"], env)
        check(r.returncode == 0, f"bench --tune: {r.stderr}")
        # Usage errors.
        for args, what in ((["tune"], "usage"), (["tune", descs[0], "--level", "extreme"], "--level"),
                           (["tune", descs[0], "--layout", "chwn"], "--layout"),
                           (["tune", descs[0], "--tune", "fast"], "--level"), (["tune", descs[0], "--level"], "needs")):
            r = run(args, env)
            check(r.returncode == 2 and what in r.stderr, f"{args}: rc {r.returncode}: {r.stderr}")
        r = run(["tune", "--help"], env)
        check(r.returncode == 0 and "--level" in r.stdout, "tune --help")
        # A corrupt cache: one warning, timed again, rewritten.
        with open(files[0], "r+b") as f:
            f.seek(40)
            f.write(b"#")
        r = run(["conv", descs[0], "--tune", "fast", "--threads", "2", "--json"], env)
        row = next(iter(rows_of(r.stdout)), {})
        check(r.returncode == 0 and "corrupt" in r.stderr and row.get("tune_cached") == 0, f"corrupt: {r.stderr}")
        check("checksum" in open(files[0]).read(), "rewritten")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"py_test_tune_cli: {t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
