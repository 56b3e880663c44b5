#!/usr/bin/env bash
# Stop 31, call 1: stop 30's call 1 again on this stop's tree (GPU code as f20d6a7): q8 / q4 over
# f32 at batch 1 over seven independent tunings (issue 9), IResNet-34-112's three cold and twelve
# warm starts (issue 10), the OpenCL tests on NVIDIA; then six samples of the driver's part alone
# (bench/gpu/ctx_probe.c, one process a sample). Setup as stop 30's: .cl-debs/ debs, pb/, ppocr/.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
bash bench/gpu/results/2026-12-06-s30/call1.sh
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
for k in 1 2 3 4 5 6; do echo "ctx_probe: $(.cl-debs/pb/ctx_probe)"; done | tee $OUT/ctx_probe.txt
