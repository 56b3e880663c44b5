"""The Python tests' dependencies (numpy, onnx, onnxruntime): imported from this interpreter, or
the test re-runs itself with the repository's venv (.venv) when this one lacks them."""
import importlib
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_PY = os.path.join(ROOT, ".venv", "bin", "python")


def require(*modules):
    """True when every module imports; else re-execs in the venv, or False when that can't help."""
    try:
        for m in modules:
            importlib.import_module(m)
        return True
    except ImportError:
        # compare prefixes: the venv's python is usually a symlink to the system one
        if os.path.exists(VENV_PY) and os.path.realpath(sys.prefix) != os.path.realpath(os.path.dirname(os.path.dirname(VENV_PY))):
            os.execv(VENV_PY, [VENV_PY] + sys.argv)
        return False


def build_args():
    """--lowconv CLI and --build-dir DIR, as ctest passes them to every tests/py_test_*.py."""
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv")
    ap.add_argument("--build-dir", required=True)
    return ap.parse_args()


def sanitizer_build(build_dir):
    """True for a build configured with LOWCONV_SANITIZE (ASan + UBSan)."""
    cache = os.path.join(build_dir, "CMakeCache.txt")
    return os.path.exists(cache) and "LOWCONV_SANITIZE:BOOL=ON" in open(cache).read()
