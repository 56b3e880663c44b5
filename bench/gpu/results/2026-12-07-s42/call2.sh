#!/usr/bin/env bash
# Stop 42 (issue 9), call 2: q / f32 at batch 1 over independent tunings. First family wino's GPU
# test (the early scales and the 64x128 tile removed), then ROUNDS tunings of resnet34-112 at level
# fast, f32 / q4 / q8 interleaved from empty lowconv caches, NROUNDS at level normal (f32 / q4), and
# cuDNN on the same layers. Before them the suite's cold start (empty lowconv and driver caches) for
# f32, q4 and q8 with every program's build printed (LOWCONV_CL_TIMING=2), and each one warm.
# START_W, ROUNDS, NROUNDS and Q8= (q8 out of the rounds) shorten it. Binaries of the tip built
# here into .cl-debs/pb; run from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
o=$OUT/s42; mkdir -p $o
go 60 "test_cl_conv quick, family wino" && LOWCONV_CL_FAMILY=wino LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 \
  LOWCONV_CACHE_DIR=/tmp/lc-t timeout 120 .cl-debs/pb/tests/test_cl_conv 2>&1 | tail -3
C() { # weights: cold, then warm from the same caches
  rm -rf /tmp/lc-c$1 /tmp/cc-c$1
  for k in cold warm; do
    LOWCONV_CL_TIMING=2 LOWCONV_CACHE_DIR=/tmp/lc-c$1 CUDA_CACHE_PATH=/tmp/cc-c$1 timeout 90 $lc conv --suite resnet34-112 \
      --mb 1 --device opencl --json --repeat 5 --warmup 1 --tune fast --weights $1 > $o/start_${k}_$1.jsonl 2> $o/start_${k}_$1.err
    python3 -c "import json,sys; r=[json.loads(l) for l in open(sys.argv[1]) if l.startswith('{')]; print('$k $1: create + prepare %.0f ms over %d convs, compile %.0f, tune %.0f' % tuple([sum(x.get(k, 0) for x in r) for k in ('setup_ms',)] + [len(r)] + [sum(x.get(k, 0) for x in r) for k in ('compile_ms', 'tune_ms')]))" $o/start_${k}_$1.jsonl
  done
  grep -c "built " $o/start_cold_$1.err; grep "built " $o/start_cold_$1.err | awk '{print $(NF-1), $0}' | sort -n | cut -c1-170 | tail -25
}
for w in ${START_W:-f32 q4 q8}; do go 60 "start $w" && C $w; done
S() { # output file, level, weights
  rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s timeout 90 $lc conv --suite resnet34-112 --mb 1 --device opencl \
    --json --repeat 50 --warmup 3 --tune $2 --weights $3 > $o/$1 2>$o/$1.err
}
for r in $(seq ${ROUNDS:-5}); do
  ws="f32 q4 ${Q8-q8}"; [ $((r % 2)) = 0 ] && ws="${Q8-q8} q4 f32"
  for w in $ws; do go 20 "fast round $r $w" && S fast_${w}_$r.jsonl fast $w; done
done
go 40 "cuDNN resnet34-112 b1" && timeout 60 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb 1 > $o/cudnn_b1.jsonl 2>/dev/null
for r in $(seq ${NROUNDS:-2}); do
  ws="f32 q4"; [ $((r % 2)) = 0 ] && ws="q4 f32"
  for w in $ws; do go 45 "normal round $r $w" && S normal_${w}_$r.jsonl normal $w; done
done
for x in fast_q4 fast_q8 normal_q4; do python3 bench/gpu/qf_ratio.py $o ${x%_*}_f32 $x "$x"; done
python3 - $o <<'PY'
import glob, json, math, sys
d = sys.argv[1]
def load(p):
    try: return {j["name"]: j for j in map(json.loads, (l for l in open(p) if l.startswith("{"))) if "name" in j}
    except Exception: return {}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
cu = load(f"{d}/cudnn_b1.jsonl")
for p in sorted(glob.glob(f"{d}/fast_f32_*.jsonl")):
    a = load(p)
    if cu and a: print(f"{p.rsplit('/',1)[1]}: f32 / cuDNN device {gm([a[n]['median_ms'] / cu[n]['device_ms'] for n in a if n in cu]):.3f},"
                       f" graph {gm([a[n]['median_ms'] / cu[n]['graph_ms'] for n in a if n in cu]):.3f}")
rows = {}
for p in sorted(glob.glob(f"{d}/*_*_*.jsonl")):
    lvl, w, r = p.rsplit("/", 1)[1][:-6].split("_")
    for n, j in load(p).items(): rows.setdefault((n, lvl, w), []).append(f"{j['median_ms'] * 1e3:.1f} {j.get('variant', '')}")
for (n, lvl, w), v in sorted(rows.items()): print(f"{n:16s} {lvl:6s} {w:3s} " + ", ".join(v))
PY
cd $OUT && tar czf s42.tgz s42 && rm -rf s42
