#!/usr/bin/env bash
# Stop 20, call 4: every issue 9/10 figure on the final tree (q8/q4 direct and split weights staged
# in local memory, dw as before): bench/gpu/run_h200.sh final on the binaries built here, the
# GPU tests of the changed families first.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb FAMS="direct split dw" FINAL_S=${FINAL_S:-430} exec bash bench/gpu/run_h200.sh final
