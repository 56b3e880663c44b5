#!/usr/bin/env bash
# Stop 33, call 3 (issue 9): stop 32's A/B with "new" = split's q rows staged with every load of an
# item's round issued first and "old" = LOWCONV_CL_EXTRA_OPTIONS=-DLCS_SERIAL (the loop that waited
# for each element's load). Needs the binaries of branch s33-split-loads (88fe5e8) in .cl-debs/pb:
# main has no LCS_SERIAL. Ran as `TAG=c3 ROUNDS=4 TESTS=1` (the tunings failed: the script called a
# shell function through env) and, fixed, `TAG=c3 ROUNDS=4` and `TAG=c4 ROUNDS=4`.
OLD_ENV=LOWCONV_CL_EXTRA_OPTIONS=-DLCS_SERIAL exec bash "$(dirname "$0")/../2026-12-06-s32/ab.sh"
