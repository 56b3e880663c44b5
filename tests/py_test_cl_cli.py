#!/usr/bin/env python3
"""`lowconv devices` and `lowconv conv --device opencl` end to end (stdlib only): a checked run per
weight format, the JSON device fields, a warm start (second process: no program built, no
timing), and the errors a user meets: no OpenCL library, no platform, bad indices, bad names.
Skips (passes) when no OpenCL device opens, unless LC_REQUIRE_OPENCL=1."""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import py_test_cli as t  # noqa: E402  (check, run and json_lines, with their pass/fail counts)

check, run, jl = t.check, t.run, t.json_lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv", required=True)
    ap.add_argument("--build-dir")
    t.CLI = ap.parse_args().lowconv
    cache = tempfile.mkdtemp(prefix="lc_cl_cli_")
    # a warm start builds nothing: on PoCL too, where programs are not saved by default
    env = {"LOWCONV_CACHE_DIR": cache, "LOWCONV_CL_PROGRAM_BINARIES": "1"}

    r = run(["devices", "--json"], env)
    check(r.returncode == 0, f"devices exits 0: {r.stderr}")
    devs = [d for d in jl(r.stdout) if d.get("device", "").startswith("opencl:")]
    if not devs:
        req = os.environ.get("LC_REQUIRE_OPENCL") == "1"
        print(f"no OpenCL device ({r.stdout.strip()}){'' if req else ' (skipped)'}")
        check(not req, "LC_REQUIRE_OPENCL=1 but `lowconv devices` lists no OpenCL device")
    else:
        d = devs[0]
        check(d.get("fingerprint") and d.get("compute_units", 0) > 0, f"device fields: {d}")
        check(d.get("fma_gflops", 0) > 0 and d.get("read_gbs", 0) > 0 and d.get("launch_us", 0) > 0,
              f"measured limits: {d}")
        desc = "mb2ic12ih11iw9oc10kh3ph1sh2"
        for w in ("f32", "q8", "q4"):
            r = run(["conv", desc, "--device", "opencl", "--weights", w, "--check", "--json", "--repeat", "3",
                     "--tune", "none"], env)
            rows = jl(r.stdout)
            check(r.returncode == 0 and rows, f"conv --device opencl --weights {w}: {r.stderr}")
            if rows:
                x = rows[0]
                for k in ("device", "variant", "local_size", "compile_ms", "tune_ms", "wall_ms", "programs_built"):
                    check(k in x, f"JSON has {k}")
                check(x.get("max_rel_err", 1) < 1e-4, f"{w} max_rel_err {x.get('max_rel_err')}")
        # Cold then warm: the second process builds nothing and times nothing.
        big = "mb1ic16ih14oc24kh3ph1"
        cold = jl(run(["conv", big, "--device", "opencl", "--json", "--repeat", "3", "--tune", "fast"], env).stdout)
        warm = jl(run(["conv", big, "--device", "opencl", "--json", "--repeat", "3", "--tune", "fast"], env).stdout)
        check(cold and cold[0].get("candidates", 0) > 1, f"cold start tunes: {cold}")
        check(warm and warm[0].get("tune_cached") == 1 and warm[0].get("candidates") == 0 and
              warm[0].get("programs_built") == 0, f"warm start builds and times nothing: {warm}")
        check(warm and cold and warm[0].get("variant") == cold[0].get("variant"), "warm start keeps the choice")
        # Bad indices and names.
        r = run(["conv", desc, "--device", "opencl:7"], env)
        check(r.returncode == 1 and "platform 7" in r.stderr, f"opencl:7: {r.stderr}")
        r = run(["conv", desc, "--device", "opencl:0:9"], env)
        check(r.returncode == 1 and "device 9" in r.stderr, f"opencl:0:9: {r.stderr}")
        r = run(["conv", desc, "--device", "opencl"], dict(env, OCL_ICD_VENDORS=tempfile.mkdtemp()))
        check(r.returncode == 1 and "no OpenCL platform" in r.stderr, f"empty vendors folder: {r.stderr}")
        r = run(["conv", desc, "--device", "opencl"], dict(env, LOWCONV_OPENCL_DEVICE="zz"))
        check(r.returncode == 1 and "LOWCONV_OPENCL_DEVICE" in r.stderr, f"bad LOWCONV_OPENCL_DEVICE: {r.stderr}")
    r = run(["conv", "mb1ic4ih5oc4kh3", "--device", "opencl"], {"LOWCONV_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so.1"})
    check(r.returncode == 1 and "cannot load the OpenCL library" in r.stderr, f"no library: {r.stderr}")
    r = run(["devices"], {"LOWCONV_OPENCL_LIBRARY": "/nonexistent/libOpenCL.so.1"})
    check(r.returncode == 0 and "cannot load the OpenCL library" in r.stdout, f"devices without library: {r.stdout}")
    r = run(["conv", "mb1ic4ih5oc4kh3", "--device", "gpu"])
    check(r.returncode == 2 and "unknown" in r.stderr, f"--device gpu: {r.stderr}")
    r = run(["conv", "mb1ic4ih5oc4kh3", "--device", "opencl", "--tune", "max"])
    check(r.returncode == 2 and "tune" in r.stderr, f"--tune max: {r.stderr}")
    subprocess.run(["rm", "-rf", cache])
    print(f"{t.passed} passed, {t.failed} failed")
    return 1 if t.failed else 0


if __name__ == "__main__":
    sys.exit(main())
