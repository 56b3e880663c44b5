"""pytest setup: lowconv from the source tree (python/) with the library of the build under test
(LOWCONV_LIBRARY, set by tests/py_test_python.py), unless an installed package is asked for."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
if not os.environ.get("LOWCONV_TEST_INSTALLED"):
    sys.path.insert(0, os.path.join(ROOT, "python"))
