#!/usr/bin/env python3
"""The README's C snippets, compiled exactly as printed against the public headers and the shared
library (so they need nothing the library hides), then run: the conv program alone, the model
program on a generated ONNX model with a symbolic input 'x'."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
results = []  # (ok, what)


def check(cond, what):
    results.append((bool(cond), what))
    if not cond:
        print(f"FAIL: {what}", file=sys.stderr)


def cache_value(build, key, default=""):
    try:
        for line in open(os.path.join(build, "CMakeCache.txt")):
            if line.startswith(key + ":"):
                return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return default


def make_model(path):
    import numpy as np
    from onnx import TensorProto, helper, save
    w = (np.arange(4 * 3 * 9, dtype=np.float32) % 7 - 3) * 0.05
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv0"),
             helper.make_node("Relu", ["c"], ["y"], name="relu0")]
    g = helper.make_graph(nodes, "readme", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4, "H", "W"])],
                          [helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], w.tolist())])
    save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv")
    ap.add_argument("--build-dir", required=True)
    a = ap.parse_args()
    build = os.path.abspath(a.build_dir)
    blocks = re.findall(r"^```c\n(.*?)^```", open(os.path.join(ROOT, "README.md")).read(), re.S | re.M)
    check(len(blocks) >= 2, f"README has {len(blocks)} C snippets, expected the library and the model one")
    cc = cache_value(build, "CMAKE_C_COMPILER", "cc")
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter"]
    if cache_value(build, "LOWCONV_SANITIZE") == "ON":
        flags += ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined"]
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "readme.onnx")
        make_model(model)
        for i, code in enumerate(blocks):
            src, exe = os.path.join(tmp, f"snippet{i}.c"), os.path.join(tmp, f"snippet{i}")
            open(src, "w").write(code)
            r = subprocess.run([cc] + flags + ["-I", os.path.join(ROOT, "include"), src, "-o", exe, "-L", build,
                                "-llowconv", "-Wl,-rpath," + build, "-lpthread", "-lm"], capture_output=True, text=True)
            check(r.returncode == 0, f"snippet {i} does not compile:\n{code}\n{r.stderr}")
            if r.returncode:
                continue
            needs_model = "argv[1]" in code
            r = subprocess.run([exe] + ([model] if needs_model else []), capture_output=True, text=True, timeout=300)
            check(r.returncode == 0 and r.stdout, f"snippet {i}: exit {r.returncode}, {r.stdout!r} {r.stderr!r}")
            if needs_model:
                check("conv0" in r.stdout and "y: 4 dims, 65536 bytes" in r.stdout, f"model snippet output {r.stdout!r}")
            else:
                check("output 56x56" in r.stdout, f"conv snippet output {r.stdout!r}")
    bad = sum(1 for ok, _ in results if not ok)
    print(f"{len(results) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
