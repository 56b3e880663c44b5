"""The Python package's pytest suite (tests/python) against this build's shared library
(tests/py_test_pip_install.py covers `pip install .`).
In a sanitizer build the library needs the ASan runtime preloaded into Python; leak checks are off
there (the interpreter itself keeps memory at exit).
Usage: py_test_python.py --lowconv CLI --build-dir DIR"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from pyvenv import build_args, require, sanitizer_build  # noqa: E402

if not require("numpy", "onnx", "onnxruntime", "pytest"):
    print("numpy/onnx/onnxruntime/pytest not available (tests/requirements.txt): 0 passed, 0 failed, 1 skipped")
    sys.exit(0)


def sanitizer_env(build_dir):
    if not sanitizer_build(build_dir):
        return {}
    libs = []
    for name in ("libasan.so", "libubsan.so"):
        p = subprocess.run(["cc", "-print-file-name=" + name], capture_output=True, text=True).stdout.strip()
        if os.path.isabs(p) and os.path.exists(p):
            libs.append(p)
    if len(libs) < 2:
        return None
    return {"LD_PRELOAD": " ".join(libs), "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=1"}


def main():
    a = build_args()
    lib = os.path.join(a.build_dir, "liblowconv.so")
    if not os.path.exists(lib):
        print("FAIL: %s not built" % lib)
        return 1
    env = dict(os.environ, LOWCONV_LIBRARY=lib, LOWCONV_CLI=a.lowconv or "")
    san = sanitizer_env(a.build_dir)
    if san is None:
        print("sanitizer build without a preloadable ASan runtime: 0 passed, 0 failed, 1 skipped")
        return 0
    env.update(san)
    # pytest prints its own "N passed" closing line
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           os.path.join(HERE, "python")], env=env, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())
