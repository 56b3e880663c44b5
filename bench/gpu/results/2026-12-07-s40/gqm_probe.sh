#!/usr/bin/env bash
# Stop 40 (issue 9): gemmq's level-fast short list, 3 tiles (the default) against 4 and 5
# (LOWCONV_CL_GQM_FAST): q4 / f32 at batch 1 over ROUNDS independent tunings of resnet34-112
# (empty lowconv caches, interleaved), and the q4 suite's cold start (empty lowconv and driver
# caches) at 3 and 5. Binaries of the tip built here into .cl-debs/pb; run from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
end=$(( $(date +%s) + ${LIMIT_S:-400} ))
left() { echo $(( end - $(date +%s) )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/gqm; mkdir -p $o
S() { timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 --tune fast "$@" 2>/dev/null; }
for g in 3 5; do
  rm -rf /tmp/lc-c /tmp/cc-c
  LOWCONV_CL_GQM_FAST=$g LOWCONV_CACHE_DIR=/tmp/lc-c CUDA_CACHE_PATH=/tmp/cc-c S --weights q4 > $o/cold_q4_g$g.jsonl
done
for r in $(seq ${ROUNDS:-4}); do
  cs="f32 3 4 5"; [ $((r % 2)) = 0 ] && cs="5 4 3 f32"
  for c in $cs; do
    [ "$(left)" -ge 20 ] || { echo "skipped round $r $c (time)"; continue; }
    rm -rf /tmp/lc-s
    if [ $c = f32 ]; then LOWCONV_CACHE_DIR=/tmp/lc-s S --weights f32 > $o/b1_f32_$r.jsonl
    else LOWCONV_CL_GQM_FAST=$c LOWCONV_CACHE_DIR=/tmp/lc-s S --weights q4 > $o/b1_q4g${c}_$r.jsonl; fi
  done
done
for g in 3 5; do
  python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]; print('cold q4 suite, list of $g: create + prepare %.0f ms over %d convs' % (sum(x.get('setup_ms', 0) for x in r), len(r)))" $o/cold_q4_g$g.jsonl
done
for g in 3 4 5; do python3 bench/gpu/qf_ratio.py $o b1_f32 b1_q4g$g "list of $g"; done
cd $OUT && tar czf gqm.tgz gqm && rm -rf gqm
