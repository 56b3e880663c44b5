#!/usr/bin/env bash
# Stop 27, call 9: is the tuner's spread transient? The b1 suites f32 / q8 / q4, three fresh tunings
# each, with the candidates' median (default) and with their least time (LC_EXP_TUNE_MIN=1, an
# experiment), interleaved; LOWCONV_CL_DEBUG=1 lists every run of every candidate.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c9; mkdir -p $o/raw
S() { timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@"; }
for r in 1 2 3; do for m in med min; do for w in f32 q8 q4; do
  rm -rf /tmp/lc-d; ( [ $m = min ] && export LC_EXP_TUNE_MIN=1; LOWCONV_CACHE_DIR=/tmp/lc-d LOWCONV_CL_DEBUG=1 S --weights $w --tune fast > $o/raw/${m}_${w}_r$r.jsonl 2> $o/raw/${m}_${w}_r$r.err )
done; done; done
cd $o && tar czf raw.tgz raw && rm -rf raw
