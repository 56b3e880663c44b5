#!/usr/bin/env python3
"""The shared library exports the public API and nothing else: every dynamic symbol liblowconv.so
defines starts with lc_ and is declared LC_API in an installed header, and every such declaration
is exported (stdlib only; needs nm from binutils)."""
import argparse
import glob
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
HEADERS = ["lowconv.h", "lowconv_model.h"]
# Defined by the linker or the sanitizer runtime's instrumentation, not by lowconv's code.
TOOLCHAIN = re.compile(r"^(_init|_fini|_edata|_end|__bss_start|__odr_asan\..*|__asan_.*|__ubsan_.*)$")


def declared():
    names = set()
    for h in HEADERS:
        text = open(os.path.join(HERE, "..", "include", h)).read()
        for decl in re.findall(r"^LC_API\s[^;]*;", text, re.M):
            m = re.search(r"(\w+)\s*\(", decl)
            names.add(m.group(1))
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lowconv")
    ap.add_argument("--build-dir", required=True)
    a = ap.parse_args()
    libs = sorted(glob.glob(os.path.join(a.build_dir, "liblowconv.so*")), key=len)
    if not libs:
        print(f"FAIL: no liblowconv.so in {a.build_dir}", file=sys.stderr)
        return 1
    out = subprocess.run(["nm", "-D", "--defined-only", libs[0]], capture_output=True, text=True, check=True).stdout
    exported = {l.split()[-1].split("@")[0] for l in out.splitlines() if l.strip()}
    exported = {s for s in exported if not TOOLCHAIN.match(s)}
    want = declared()
    bad = sorted(s for s in exported if not s.startswith("lc_") or s not in want)
    missing = sorted(want - exported)
    for s in bad:
        print(f"FAIL: exported but not public: {s}", file=sys.stderr)
    for s in missing:
        print(f"FAIL: declared LC_API but not exported: {s}", file=sys.stderr)
    ok = not bad and not missing and len(want) > 40
    print(f"{len(exported)} exported, {len(want)} declared; {1 if ok else 0} passed, {0 if ok else 1} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
