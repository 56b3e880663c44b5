#!/usr/bin/env bash
# Stop 40 (issue 9): split-K added in place, one launch (common.cl lc_kf_*), on NVIDIA. First the
# GPU tests of families gemm and gemmq (the PTX red / membar path), then ROUNDS independent
# batch-1 tunings of resnet34-112 f32 / q4 in three configurations (k1: added in place, k0:
# gemm_reduce, c8: in place with at most 8 K chunks; interleaved, empty lowconv caches), cuDNN on
# the same layers, and IResNet-34 whole at batch 1 in each. Binaries built here into .cl-debs/pb
# from af276d7^ with kfold_atomic.patch applied (not merged: docs/benchmarks.md, stop 40); run
# from the repository root.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
end=$(( $(date +%s) + ${LIMIT_S:-560} ))
left() { echo $(( end - $(date +%s) )); }
go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
b=.cl-debs/pb o=$OUT/s40
mkdir -p $o
{
for fam in gemm gemmq; do
  go 40 "test_cl_conv quick, family $fam, split-K added in place" && LOWCONV_CL_FAMILY=$fam LC_TEST_QUICK=1 \
    LC_REQUIRE_OPENCL=1 LOWCONV_CACHE_DIR=/tmp/lc-t timeout 100 $b/tests/test_cl_conv 2>&1 | tail -4
done
# configurations: k1 = added in place (default), k0 = gemm_reduce (LOWCONV_CL_KFOLD=0), c8 = in place, at most 8 chunks
cfg() { case $1 in k1) echo "LOWCONV_CL_KFOLD=1" ;; k0) echo "LOWCONV_CL_KFOLD=0" ;; c8) echo "LOWCONV_CL_KFOLD=1 LOWCONV_CL_KSPLIT_MAX=8" ;; esac; }
for r in $(seq ${ROUNDS:-2}); do
  fs="k1 k0 c8"; [ $((r % 2)) = 0 ] && fs="c8 k0 k1"
  for f in $fs; do for w in f32 q4; do
    go 25 "round $r $f $w" || continue
    rm -rf /tmp/lc-s; env $(cfg $f) LOWCONV_CACHE_DIR=/tmp/lc-s timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl \
      --json --repeat 50 --warmup 3 --weights $w --tune fast > $o/b1_${w}_${f}_$r.jsonl 2>/dev/null
  done; done
done
go 40 "cuDNN resnet34-112 b1" && timeout 60 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb 1 > $o/cudnn_b1.jsonl
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
for f in k1 k0 c8; do for w in f32 q4; do
  go 20 "IResNet-34 b1 $w $f" && rm -rf /tmp/lc-m && env $(cfg $f) LOWCONV_CACHE_DIR=/tmp/lc-m timeout 60 \
    $lc bench /tmp/ir34.onnx --device opencl --weights $w --json --repeat 300 > $o/ir34_${w}_${f}.json 2>/dev/null
done; done
python3 - $o <<'PY'
import glob, json, math, os, sys
d = sys.argv[1]
def load(p):
    try: return {j["name"]: j for j in map(json.loads, (l for l in open(p) if l.startswith("{")))}
    except Exception: return {}
gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")
cu = load(f"{d}/cudnn_b1.jsonl")
for f in ("k1", "k0", "c8"):
    for r in range(1, 10):
        a, q = load(f"{d}/b1_f32_{f}_{r}.jsonl"), load(f"{d}/b1_q4_{f}_{r}.jsonl")
        if not a or not q: continue
        k = [n for n in a if n in q]
        line = f"{f} round {r}: q4/f32 {gm([q[n]['median_ms'] / a[n]['median_ms'] for n in k]):.3f}"
        line += f", sums f32 {sum(a[n]['median_ms'] for n in k) * 1e3:.0f} q4 {sum(q[n]['median_ms'] for n in k) * 1e3:.0f} us"
        if cu: line += f", f32/cuDNN {gm([a[n]['median_ms'] / cu[n]['device_ms'] for n in k if n in cu]):.3f}"
        print(line)
for f in ("k1", "k0", "c8"):
    rows = []
    for w in ("f32", "q4"):
        xs = []
        for p in sorted(glob.glob(f"{d}/ir34_{w}_{f}.json")):
            try: xs.append(json.load(open(p))["median_ms"])
            except Exception: pass
        rows.append(f"{w} {' '.join(f'{x:.3f}' for x in xs)}")
    print(f"IResNet-34 b1 {f} (ms): " + "; ".join(rows))
a = {}
for p in sorted(glob.glob(f"{d}/b1_*_*_*.jsonl")):
    for n, j in load(p).items():
        a.setdefault((n, os.path.basename(p).split("_")[1], os.path.basename(p).split("_")[2]), []).append((j["median_ms"] * 1e3, j["variant"]))
for (n, w, k), v in sorted(a.items()):
    print(f"{n:18s} {w:3s} {k}: " + ", ".join(f"{t:.1f} {var}" for t, var in v))
PY
} 2>&1 | tee $OUT/summary.txt
cd $OUT && tar czf s40.tgz s40 && rm -rf s40
