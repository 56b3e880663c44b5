#!/usr/bin/env bash
# Stop 41 (issue 9): Winograd from the codes (q8/q4) with each tap's scale x coefficient loaded a K
# tile ahead (conv_gemm.cl LCG_WQ_PF=1) against the scales read at staging (LCG_WQ_PF=0, through
# LOWCONV_CL_EXTRA_OPTIONS): family wino's GPU test, then forced F(4x4) tiles on resnet34-112's
# 3x3 stride-1 layers (f32 / q4 PF1 / q4 PF0, interleaved; the new 64x128 tile too), then q4 / f32 over independent
# tunings at level normal (where q is offered Winograd). Binaries built here into
# .cl-debs/pb41; run from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb41; . bench/gpu/cl_env.sh # $lc and the time guard (go, LIMIT_S)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
b=.cl-debs/pb41 o=$OUT/s41
mkdir -p $o
go 60 "test_cl_conv quick, family wino" && LOWCONV_CL_FAMILY=wino LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 \
  LOWCONV_CACHE_DIR=/tmp/lc-t timeout 120 $b/tests/test_cl_conv 2>&1 | tail -4
L="mb1ic64ih112oc64kh3ph1n\"s1.conv1.first\" mb1ic64ih56oc128kh3ph1n\"s2.conv1.first\" mb1ic128ih28oc256kh3ph1n\"s3.conv1.first\" mb1ic256ih14oc512kh3ph1n\"s4.conv1.first\" mb1ic64ih56oc64kh3ph1n\"s1.conv\" mb1ic128ih28oc128kh3ph1n\"s2.conv\""
F() { # label, weights, extra env...
  local lab=$1 w=$2; shift 2
  env "$@" LOWCONV_CACHE_DIR=/tmp/lc-f LOWCONV_CL_FAMILY=wino timeout 60 $lc conv $L --device opencl --json --repeat 50 \
    --warmup 3 --weights $w --tune fast 2>/dev/null >> $o/forced_$lab.jsonl
}
for r in 1 2; do
  for v in f4x4_64x64 f4x4_32x32 f4x4_64x128; do
    go 30 "forced $v round $r" || continue
    rm -rf /tmp/lc-f
    F f32_$v f32 LOWCONV_CL_VARIANT=$v
    F q4pf1_$v q4 LOWCONV_CL_VARIANT=$v
    F q4pf0_$v q4 LOWCONV_CL_VARIANT=$v LOWCONV_CL_EXTRA_OPTIONS=-DLCG_WQ_PF=0
  done
done
S() { rm -rf /tmp/lc-s; env "$@" LOWCONV_CACHE_DIR=/tmp/lc-s timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl \
  --json --repeat 50 --warmup 3 2>/dev/null; }
for r in $(seq ${ROUNDS:-3}); do
  cs="f32 pf1 pf0"; [ $((r % 2)) = 0 ] && cs="pf0 pf1 f32"
  for c in $cs; do
    go 25 "suite normal round $r $c" || continue
    case $c in
      f32) S --weights f32 --tune normal > $o/n_f32_$r.jsonl ;;
      pf1) S --weights q4 --tune normal > $o/n_q4pf1_$r.jsonl ;;
      pf0) S --weights q4 --tune normal LOWCONV_CL_EXTRA_OPTIONS=-DLCG_WQ_PF=0 > $o/n_q4pf0_$r.jsonl ;;
    esac
  done
done
python3 - $o <<'PY'
import glob, json, statistics, sys
d = sys.argv[1]
rows = {}
for p in sorted(glob.glob(f"{d}/forced_*.jsonl")):
    lab = p.rsplit("forced_", 1)[1][:-6]
    for l in open(p):
        if l.startswith("{"):
            j = json.loads(l); rows.setdefault((j.get("name"), lab), []).append((j["median_ms"] * 1e3, j.get("variant", "")))
for (n, lab), xs in sorted(rows.items()):
    print(f"{n:16s} {lab:22s} " + ", ".join(f"{x:.1f} {v}" for x, v in xs))
PY
for c in pf1 pf0; do python3 bench/gpu/qf_ratio.py $o n_f32 n_q4$c "level normal, q4 $c"; done
for f in $o/n_*_1.jsonl; do echo "$f: $(python3 -c "import json,sys; print(' '.join(j['name']+'='+j.get('variant','') for j in map(json.loads,(l for l in open(sys.argv[1]) if l.startswith('{'))) if 'conv1.first' in j.get('name','')))" $f)"; done
cd $OUT && tar czf s41.tgz s41 && rm -rf s41
