#!/usr/bin/env bash
# Stop 34, call 2 (issue 9): stop 33's split A/B (branch s33-split-loads, 88fe5e8: split's staged q
# rows with every load of an item's round issued first, "old" = -DLCS_SERIAL) on the card the issue
# names, an H200. Its binaries are built here into .cl-debs/pb-split and copied over the device's copy
# of .cl-debs/pb (main has no LCS_SERIAL). Run from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
cp .cl-debs/pb-split/lowconv .cl-debs/pb/lowconv && cp .cl-debs/pb-split/tests/test_cl_conv .cl-debs/pb/tests/
TAG=${TAG:-ab} ROUNDS=${ROUNDS:-4} TESTS=${TESTS:-1} bash bench/gpu/results/2026-12-06-s33/ab.sh
