#!/usr/bin/env bash
# Stop 19, call 6: call 5 again on the next build, the loop now over the 4 lanes only (CB x HT x WT
# inlined copies, no stack), against once per element (-DLCD_EPI_UNROLLED).
CALL=6 exec bash "$(dirname "$0")/call5.sh"
