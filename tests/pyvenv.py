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
