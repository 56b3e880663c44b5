#!/usr/bin/env bash
# Every GPU figure of docs/benchmarks.md in one call on the lent NVIDIA machine (no registry there):
# the OpenCL ICD loader and headers come as .deb files in .cl-debs/ (apt-get download
# ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers), unpacked with dpkg -x; NVIDIA's
# OpenCL driver is registered through a vendors folder. Results go to $OUT (or ./out-gpu).
# Usage: bench/gpu/run_h200.sh [full|mid|quick|models|quant|start|startp|cexp|qperf|final|probe]   (quick: correctness + one
# batch-1 suite; models: whole networks against PyTorch, bench/gpu/models.py, with PP-OCR from
# .ppocr/ when there; start: cold and warm start of the resnet34-112 suite and of IResNet34,
# Winograd's correctness and the f32 suites with it; qperf: the quantized GEMV's bandwidth per
# family and variant, GPU tests of gemvq/gemm/gemv, q8/q4 vs f32 on resnet34-112)
set -uo pipefail
cd "$(dirname "$0")/../.."
final=${OUT:-out-gpu}
out=/tmp/lc-results
mkdir -p "$out" "$final"
snap() { tar czf "$final/results.tgz" -C "$out" . 2>/dev/null; cp "$out/summary.txt" "$final/" 2>/dev/null; }
trap snap EXIT
mode=${1:-full}
ocl=/tmp/lc-ocl
mkdir -p $ocl/vendors
for f in .cl-debs/*.deb; do dpkg -x "$f" $ocl; done
echo libnvidia-opencl.so.1 > $ocl/vendors/nvidia.icd
export OCL_ICD_VENDORS=$ocl/vendors
export LOWCONV_OPENCL_LIBRARY=$ocl/usr/lib/x86_64-linux-gnu/libOpenCL.so.1
export LOWCONV_CACHE_DIR=/tmp/lc-cache
b=${LC_BUILD:-/tmp/lc-build}
[ -n "${LC_PREBUILT:-}" ] || cmake -S . -B $b -DCMAKE_BUILD_TYPE=Release -DLC_OPENCL_INCLUDE=$ocl/usr/include -DLOWCONV_BENCH=OFF >/dev/null
t0=$(date +%s)
if [ -n "${LC_PREBUILT:-}" ]; then # lowconv and tests/ built elsewhere (x86-64, glibc <= the machine's)
  b=$(cd "$LC_PREBUILT" && pwd)
else
  targets=""; [ "$mode" = qperf ] && targets="--target lowconv test_cl_gemv test_cl_conv"
  cmake --build $b -j"$(nproc)" $targets 2>&1 | grep -E "error|warning" | head -20
  echo "built in $(( $(date +%s) - t0 )) s"
fi
lc=$b/lowconv
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$out/gpu.txt"
[ "$mode" = start ] || $lc devices | tee "$out/devices.txt"

suite() { # suite mb weights tune -> lowconv JSON lines
  timeout "${TMO:-600}" $lc conv --suite "$1" --mb "$2" --device opencl --weights "$3" --tune "$4" --json --repeat 50 --warmup 3 \
    ${5:-} 2>&1
}
if [ "$mode" = qperf ]; then # issue 9's quantized gaps: GEMV bandwidth, q8/q4 vs f32 on resnet34-112
  # QPERF_S: seconds from the start of the script after which no further step begins.
  end=$(( t0 + ${QPERF_S:-600} ))
  time_for() { [ $(( end - $(date +%s) )) -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; }
  {
  echo "== GEMV K=4096 N=14336 one row: the tuner's choice (fast), float families only (nodp4a), gemvq variants"
  for w in q4 q8 f32; do
    for cfg in fast nodp4a; do
      [ $w = f32 ] && [ $cfg = nodp4a ] && continue
      time_for 4 "gemv $w $cfg" || continue
      [ $w = q8 ] && [ $cfg = nodp4a ] && continue
      t=fast; env=""; [ $cfg = nodp4a ] && env="LOWCONV_CL_DP4A=0"
      LOWCONV_CACHE_DIR=/tmp/lc-cache-gemv-$cfg env $env $lc conv mb1ic4096ih1oc14336kh1 --device opencl \
        --weights $w --block 32 --tune $t --json --repeat 200 --check --tol 0.05 | sed "s/^{/{\"cfg\":\"$cfg\",/"
    done
    [ $w = f32 ] && continue
    for v in b1 b2 b4 b8; do
      [ $w = q4 ] || continue
      time_for 4 "gemvq $w $v" || continue
      LOWCONV_CL_FAMILY=gemvq LOWCONV_CL_VARIANT=$v $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights $w \
        --block 32 --json --repeat 200 --check --tol 0.05 | sed "s/^{/{\"cfg\":\"gemvq-$v\",/"
    done
  done > "$out/gemv_q.jsonl" 2>&1
  python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
bw = float(open(f"{d}/devices.txt").read().split("read")[1].split("GB/s")[0])
for l in open(f"{d}/gemv_q.jsonl"):
    if not l.startswith("{"): print(l.rstrip()); continue
    r = json.loads(l)
    if r.get("error") or not r.get("median_ms"): print(r.get("cfg"), r.get("weights"), "error:", r.get("error")); continue
    gbs = r["weight_bytes"] / (r["median_ms"] * 1e-3) / 1e9
    print(f"GEMV {r['weights']} {r['cfg']:>9}: {r['median_ms']:.4f} ms, {r['weight_bytes']} B -> {gbs:.0f} GB/s = "
          f"{100 * gbs / bw:.0f}% of the measured {bw:.0f} GB/s read; {r.get('variant')} lws {r.get('local_size')}, "
          f"max_rel_err {r.get('max_rel_err') or float('nan'):.2e}, tune {r.get('tune_ms')} ms")
PY
  snap
  echo "== test_cl_conv quick on the GPU (gemvq: PTX dp4a), resnet34-112 q8/q4 vs f32 (tuning fast) at batch 1"
  echo "   and 32, test_cl_conv quick (gemm), test_cl_gemv (gemv + gemvq)"
  for mb in gemvq gemmq 1 32 gemm gemv; do
    if [ $mb = gemv ]; then
      time_for 20 "test_cl_gemv" && LC_REQUIRE_OPENCL=1 timeout $(( end - $(date +%s) )) $b/tests/test_cl_gemv 2>&1 | tail -3
      continue
    fi
    if [ $mb = gemvq ] || [ $mb = gemmq ] || [ $mb = gemm ]; then
      time_for 15 "test_cl_conv $mb" || continue
      LOWCONV_CL_FAMILY=$mb LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout $(( end - $(date +%s) )) $b/tests/test_cl_conv 2>&1 | tail -3
      continue
    fi
    for w in f32 q8 q4; do
      time_for 10 "resnet34-112 b$mb $w" || continue
      timeout $(( end - $(date +%s) )) $lc conv --suite resnet34-112 --mb $mb --device opencl --weights $w --tune fast \
        --json --repeat 20 --warmup 3 > "$out/resnet34-112_b${mb}_${w}_q.jsonl" 2>&1
      snap
    done
  done
  echo "== gemmq (dp4a implicit GEMM) forced per variant, resnet34-112 q4 (batch 32, then 1 with split-K)"
  for mb in 32 1; do
    for v in 128x128 128x64 64x128 64x64 32x32 64x64s 32x32s; do
      [ $mb = 32 ] && [ "${v%s}" != "$v" ] && continue
      time_for 10 "gemmq $v b$mb" || continue
      LOWCONV_CL_FAMILY=gemmq LOWCONV_CL_VARIANT=$v timeout $(( end - $(date +%s) )) $lc conv --suite resnet34-112 \
        --mb $mb --device opencl --weights q4 --json --repeat 20 --warmup 3 > "$out/resnet34-112_b${mb}_q4_gemmq_$v.jsonl" 2>&1
    done
  done
  python3 - "$out" <<'PY'
import glob, json, math, sys
d = sys.argv[1]
load = lambda p: {r["desc"]: r for r in map(json.loads, (l for l in open(p) if l.startswith("{")))}
for mb in (1, 32):
    try: f = load(f"{d}/resnet34-112_b{mb}_f32_q.jsonl")
    except (OSError, ValueError): continue
    for p in sorted(glob.glob(f"{d}/resnet34-112_b{mb}_q4_gemmq_*.jsonl")):
        q = load(p)
        r = {k: q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f and q[k].get("median_ms") and f[k].get("median_ms")}
        if r: print(f"b{mb} q4 gemmq {p.rsplit('_', 1)[1][:-6]}/f32 tuned: geomean "
                    f"{math.exp(sum(map(math.log, r.values())) / len(r)):.3f} over {len(r)} layers, "
                    + " ".join(f"{v:.2f}" for v in r.values()))
for mb in (1, 32):
    try: f = load(f"{d}/resnet34-112_b{mb}_f32_q.jsonl")
    except (OSError, ValueError): continue
    for w in ("q8", "q4"):
        try: q = load(f"{d}/resnet34-112_b{mb}_{w}_q.jsonl")
        except (OSError, ValueError): continue
        r = {k: q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f and q[k].get("median_ms") and f[k].get("median_ms")}
        if not r: continue
        worst = max(r, key=r.get)
        print(f"resnet34-112 b{mb} {w}/f32 geomean {math.exp(sum(map(math.log, r.values())) / len(r)):.3f} "
              f"max {r[worst]:.2f} ({q[worst].get('name', worst)}: {q[worst].get('variant')} vs {f[worst].get('variant')})")
PY
  } 2>&1 | tee "$out/summary.txt" "$final/summary_live.txt"
  exit 0
fi
if [ "$mode" = probe ]; then # where whole-network time goes: host enqueue vs device, per layer; warm start phases
  end=$(( t0 + ${PROBE_S:-240} ))
  left() { echo $(( end - $(date +%s) )); }
  go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
  python3 - <<'PY'
import sys; sys.path.insert(0, 'tests/models'); import iresnet34, onnx
m = iresnet34.build(112); onnx.save(m, '/tmp/ir34.onnx')
for v in list(m.graph.input) + list(m.graph.output): v.type.tensor_type.shape.dim[0].dim_value = 32
onnx.save(m, '/tmp/ir34_b32.onnx')
PY
  pl() { # tag model shape extra... : per-layer profile + host enqueue/wait split
    local tag=$1 f=$2 shp=$3; shift 3
    go 20 "$tag" || return
    LOWCONV_CL_TIMING=1 timeout $(left) $lc bench "$f" --shape "$shp" --device opencl --repeat 20 "$@" > "$out/pl_$tag.txt" 2> "$out/pl_$tag.err"
    LOWCONV_CL_TIMING=1 timeout $(left) $lc bench "$f" --shape "$shp" --device opencl --repeat 20 --per-layer "$@" > "$out/pl_$tag.layers.txt" 2>> "$out/pl_$tag.err"
    grep -h "median\|device runs\|plan:\|start-up" "$out/pl_$tag.txt" "$out/pl_$tag.err"
    sed -n '/^op type/,/^$/p' "$out/pl_$tag.layers.txt" | head -16; grep -h "device time" "$out/pl_$tag.layers.txt"; }
  python3 -c "import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx; onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
  {
  if [ -n "${PROBE_NETS:-}" ]; then # e.g. "od96 od96_q4": the OCR-det-like net at neck 96, f32 / q4
    for n in $PROBE_NETS; do
      case $n in od96) pl od96 /tmp/od96.onnx input=1x3x640x640 ;; od96_q4) pl od96_q4 /tmp/od96.onnx input=1x3x640x640 --weights q4 ;;
      ir34) pl ir34_b1 /tmp/ir34.onnx input=1x3x112x112 ;; esac
    done
    for n in $PROBE_NETS; do t=$n; [ $n = ir34 ] && t=ir34_b1; echo "-- $t: slowest layers"
      grep -E "^[0-9]+ " "$out/pl_$t.layers.txt" | sort -k6 -rn | head -14 | cut -c1-150; done
  else
  pl cls .ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx x=1x3x48x192
  pl rec .ppocr/ch_PP-OCRv4_rec_infer.onnx x=1x3x48x320
  pl det .ppocr/ch_PP-OCRv4_det_infer.onnx x=1x3x640x640
  pl ir34_b1 /tmp/ir34.onnx input=1x3x112x112
  pl ir34_b1_q4 /tmp/ir34.onnx input=1x3x112x112 --weights q4
  pl ir34_b32 /tmp/ir34_b32.onnx input=32x3x112x112
  go 10 "warm start twice more (phases)" && for i in 1 2; do LOWCONV_CL_TIMING=1 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 2>&1 | grep -h "plan:\|start-up\|start (load"; done
  fi
  } 2>&1 | tee "$out/summary.txt" "$final/summary_live.txt"
  exit 0
fi
if [ "$mode" = flush ]; then # when to flush the queue: LOWCONV_CL_FLUSH_US per net, configurations interleaved
  end=$(( t0 + ${PROBE_S:-240} ))
  left() { echo $(( end - $(date +%s) )); }
  python3 - <<'PY'
import sys; sys.path.insert(0, 'tests/models'); import iresnet34, ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); m = iresnet34.build(112); onnx.save(m, '/tmp/ir34.onnx')
for v in list(m.graph.input) + list(m.graph.output): v.type.tensor_type.shape.dim[0].dim_value = 32
onnx.save(m, '/tmp/ir34_b32.onnx')
PY
  {
  for a in "/tmp/od96.onnx" ".ppocr/ch_PP-OCRv4_det_infer.onnx --shape x=1x3x640x640" ".ppocr/ch_PP-OCRv4_rec_infer.onnx --shape x=1x3x48x320" \
           ".ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx --shape x=1x3x48x192" "/tmp/ir34.onnx" "/tmp/ir34_b32.onnx" "/tmp/od96.onnx --weights q4"; do
    [ "$(left)" -ge 15 ] || { echo "skipped: $a"; continue; }
    timeout $(left) $lc bench $a --device opencl --repeat 3 > /dev/null 2>&1 # tunes once
    for r in 1 2; do for fu in ${FLUSH_US:-0 25 100 400}; do
      printf "%s | flush_us %s: " "$(echo $a | sed 's/--shape [^ ]*//; s/.*\///')" $fu
      LOWCONV_CL_TIMING=1 LOWCONV_CL_FLUSH_US=$fu timeout 30 $lc bench $a --device opencl --repeat 30 2>&1 | grep -h "median\|device runs" | sed 's/.*median/median/; s/ (p90.*//; s/lowconv: device runs: [0-9]*, //' | tr '\n' ' '; echo
    done; done
  done
  [ "$(left)" -ge 15 ] && LOWCONV_CL_TIMING=1 timeout $(left) $lc bench /tmp/od96.onnx --device opencl --repeat 20 --per-layer > "$out/od96_layers.txt" 2>&1 &&
    grep -h "device time\|^op type" -A12 "$out/od96_layers.txt" | head -16
  } 2>&1 | tee "$out/summary.txt" "$final/summary_live.txt"
  exit 0
fi
if [ "$mode" = cexp ]; then # compile time against speed: kernel build options tried on the resnet34-112 suites
  end=$(( t0 + ${PROBE_S:-300} ))
  left() { echo $(( end - $(date +%s) )); }
  go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
  {
  i=0; IFS=';' read -ra cfgs <<< "${CEXP_CFGS:-;-DLC_EPI_NOINLINE;-DLC_KK_UNROLL_N=2;-DLC_EPI_NOINLINE -DLC_KK_UNROLL_N=2}"
  for cfg in "${cfgs[@]}"; do
    i=$((i + 1)); export LOWCONV_CL_EXTRA_OPTIONS="$cfg" LOWCONV_CACHE_DIR=/tmp/lc-cexp-$i CUDA_CACHE_PATH=/tmp/cc-cexp-$i
    rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
    for mb in 1 32; do
      go 25 "options [$cfg] b$mb cold" || continue
      ( time LOWCONV_CL_TIMING=2 TMO=$(left) suite resnet34-112 $mb f32 fast > "$out/cexp${i}_b$mb.jsonl" ) 2>&1 | grep real
      grep -h "built " "$out/cexp${i}_b$mb.jsonl" | sed 's/.*LC_WANT_//' | tr '\n' ' '; echo
      grep -h "start-up" "$out/cexp${i}_b$mb.jsonl" | cut -c1-160
    done
    [ -n "$cfg" ] && go 20 "test_cl_conv quick gemm [$cfg]" && LOWCONV_CL_FAMILY=gemm LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 \
      timeout 60 $b/tests/test_cl_conv 2>&1 | tail -1
  done
  unset LOWCONV_CL_EXTRA_OPTIONS CUDA_CACHE_PATH
  python3 - "$out" <<'PY'
import json, math, sys
d = sys.argv[1]
load = lambda p: {r["desc"]: r for r in map(json.loads, (l for l in open(p) if l.startswith("{"))) if r.get("median_ms")}
for mb in (1, 32):
    try: base = load(f"{d}/cexp1_b{mb}.jsonl")
    except OSError: continue
    for i in range(2, 10):
        try: q = load(f"{d}/cexp{i}_b{mb}.jsonl")
        except OSError: continue
        r = [q[k]["median_ms"] / base[k]["median_ms"] for k in q if k in base]
        if r: print(f"b{mb} config {i} / default: geomean {math.exp(sum(map(math.log, r)) / len(r)):.3f} over {len(r)} layers, max {max(r):.2f}")
PY
  } 2>&1 | tee "$out/summary.txt" "$final/summary_live.txt"
  exit 0
fi
if [ "$mode" = startp ]; then # where a start goes: context phases, each program's build (serial vs parallel), warm phases
  end=$(( t0 + ${PROBE_S:-300} ))
  left() { echo $(( end - $(date +%s) )); }
  go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
  python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
  sp() { grep -h "built \|context:\|op init\|plan:\|start-up" "$@" | cut -c1-220; }
  mst() { LOWCONV_CL_TIMING=2 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 10 "${@:2}" 2>"$out/ir34_$1.err" > "$out/ir34_$1.json"
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('iresnet34 $1 start_ms', j['start_ms'], j.get('start_phases_ms'), 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" "$out/ir34_$1.json"
    sp "$out/ir34_$1.err"; }
  {
  go 40 "suite cold: empty lowconv cache, fresh driver cache (CUDA_CACHE_PATH), parallel builds" && {
    rm -rf $LOWCONV_CACHE_DIR /tmp/cc1; ( time CUDA_CACHE_PATH=/tmp/cc1 LOWCONV_CL_TIMING=2 TMO=$(left) suite resnet34-112 1 f32 fast \
      > "$out/s_cold.jsonl" ) 2>&1 | tail -3; sp "$out/s_cold.jsonl"; }
  go 20 "suite warm (both caches from the cold run)" && { ( time CUDA_CACHE_PATH=/tmp/cc1 LOWCONV_CL_TIMING=2 TMO=$(left) \
    suite resnet34-112 1 f32 fast > "$out/s_warm.jsonl" ) 2>&1 | tail -3; sp "$out/s_warm.jsonl"; }
  go 40 "suite cold, builds one after another" && { rm -rf $LOWCONV_CACHE_DIR /tmp/cc2
    ( time CUDA_CACHE_PATH=/tmp/cc2 LOWCONV_CL_BUILD_THREADS=1 LOWCONV_CL_TIMING=2 TMO=$(left) suite resnet34-112 1 f32 fast \
      > "$out/s_cold1.jsonl" ) 2>&1 | tail -3; sp "$out/s_cold1.jsonl"; }
  go 40 "IResNet34 cold (empty caches), warm twice, warm without pinned uploads" && { rm -rf $LOWCONV_CACHE_DIR /tmp/cc3
    export CUDA_CACHE_PATH=/tmp/cc3; mst cold; mst warm1; mst warm2; LOWCONV_CL_PINNED=0 mst warm_nopin; mst warm3; unset CUDA_CACHE_PATH; }
  go 20 "PyTorch: import, CUDA init + first tensor, first conv" && python3 -c "
import time; t = time.time(); import torch; t1 = time.time(); x = torch.zeros(1, device='cuda'); torch.cuda.synchronize(); t2 = time.time()
c = torch.nn.Conv2d(64, 64, 3, padding=1).cuda(); y = c(torch.randn(1, 64, 56, 56, device='cuda')); torch.cuda.synchronize(); t3 = time.time()
print(f'torch import {1e3*(t1-t):.0f} ms, CUDA init + first tensor {1e3*(t2-t1):.0f} ms, first conv {1e3*(t3-t2):.0f} ms')"
  go 60 "OCR-det-like nets vs PyTorch (neck 96 = the issue's reference net, and 256)" &&
    PYTHONUNBUFFERED=1 timeout $(left) python3 bench/gpu/models.py --lowconv $lc --only ocr_det96,ocr_det --reps 10 > "$out/models_det.jsonl"
  cat "$out/models_det.jsonl" | cut -c1-400
  } 2>&1 | tee "$out/summary.txt" "$final/summary_live.txt"
  exit 0
fi
if [ "$mode" = final ]; then # one call for every issue 9/10 figure, most important first, within FINAL_S s
  end=$(( t0 + ${FINAL_S:-520} ))
  left() { echo $(( end - $(date +%s) )); }
  go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
  {
  # Cold: lowconv's caches and the driver's JIT cache empty (a fresh CUDA_CACHE_PATH); warm: both as
  # the cold run left them, as a user's second start finds them.
  go 60 "cold start, resnet34-112 b1 f32 suite, empty lowconv and driver caches, then warm" && {
    rm -rf $LOWCONV_CACHE_DIR /tmp/cc-final; export CUDA_CACHE_PATH=/tmp/cc-final
    ( time LOWCONV_CL_TIMING=1 TMO=$(left) suite resnet34-112 1 f32 fast > "$out/r34_b1_cold.jsonl" ) 2>&1 | tail -3
    ( time LOWCONV_CL_TIMING=1 TMO=$(left) suite resnet34-112 1 f32 fast > "$out/r34_b1_warm.jsonl" ) 2>&1 | tail -3
    grep -h "start-up\|context:" "$out"/r34_b1_*.jsonl | cut -c1-200; snap; }
  python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
  # Warm starts as users run them (20:52: 0.32 s with LOWCONV_CL_TIMING, 0.24-0.25 s plain), then
  # one with LOWCONV_CL_TIMING for where the time goes.
  mstart() { local tv=1; case $1 in warm[0-9]*) tv= ;; esac
    env ${tv:+LOWCONV_CL_TIMING=1} timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>"$out/ir34_$1.err" > "$out/ir34_$1.json"
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('iresnet34 b1 $1 start_ms', j['start_ms'], j.get('start_phases_ms'), 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" "$out/ir34_$1.json"
    grep -h "start-up\|context:\|op init" "$out/ir34_$1.err" | cut -c1-200; }
  go 60 "IResNet34-112 load to first result: empty lowconv and driver caches, then warm twice" && {
    rm -rf $LOWCONV_CACHE_DIR /tmp/cc-final; mstart cold; mstart warm1; mstart warm2; mstart warm_timing; snap; }
  for fam in ${FAMS:-wino gemvq gemm}; do
    go 30 "test_cl_conv quick, family $fam, on the GPU" &&
      LOWCONV_CL_FAMILY=$fam LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_conv 2>&1 | tail -2
  done
  go 30 "test_cl_gemv on the GPU" && LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/test_cl_gemv 2>&1 | tail -2
  for t in test_cl_inaff test_cl_ops; do
    [ -x $b/tests/$t ] && go 20 "$t on the GPU" && LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 60 $b/tests/$t 2>&1 | tail -1
  done
  for mb in 1 32; do
    for w in f32 q8 q4; do
      n=resnet34-112_b${mb}_$w.jsonl; [ $w = f32 ] && n=resnet34-112_b${mb}_f32_r1.jsonl
      go 40 "resnet34-112 b$mb $w, tuning fast" && TMO=$(left) suite resnet34-112 $mb $w fast > "$out/$n"
    done
    go 30 "cuDNN resnet34-112 b$mb" &&
      timeout $(left) python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb $mb > "$out/resnet34-112_b${mb}_cudnn_r1.jsonl"
    snap
  done
  go 90 "whole models against PyTorch (same graph)" &&
    PYTHONUNBUFFERED=1 timeout $(left) python3 bench/gpu/models.py --lowconv $lc --ppocr .ppocr --reps ${REPS:-10} > "$out/models.jsonl"
  snap
  python3 - <<'PY'
import sys; sys.path.insert(0, 'tests/models'); import iresnet34, onnx
m = iresnet34.build(112)
for v in list(m.graph.input) + list(m.graph.output): v.type.tensor_type.shape.dim[0].dim_value = 32
onnx.save(m, '/tmp/ir34_b32.onnx')
PY
  for a in "/tmp/ir34.onnx" "/tmp/ir34.onnx --weights q4" "/tmp/ir34_b32.onnx" ".ppocr/ch_PP-OCRv4_det_infer.onnx --shape x=1x3x640x640" \
           ".ppocr/ch_ppocr_mobile_v2.0_cls_infer.onnx --shape x=1x3x48x192" ".ppocr/ch_PP-OCRv4_rec_infer.onnx --shape x=1x3x48x320"; do
    go 8 "host enqueue vs device wait: $a" && LOWCONV_CL_TIMING=1 timeout 30 $lc bench $a --device opencl --repeat 40 2>&1 |
      grep "device runs\|median" | cut -c1-160
  done
  for w in q4 q8 f32; do
    go 10 "GEMV K=4096 N=14336 $w" && $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights $w --block 32 --rotate 4 \
      --json --repeat 100 --check --tol 0.05 > "$out/gemv_$w.jsonl"
  done
  for v in w1:128 w2:64 w1u8:128 s2:128 s2:256 b4:64; do # gemvq variants forced, q4
    go 6 "GEMV q4 gemvq ${v%%:*} at ${v#*:} items" && LOWCONV_CL_FAMILY=gemvq LOWCONV_CL_VARIANT=${v%%:*} \
      LOWCONV_CL_GEMVQ_LWS=${v#*:} timeout 20 $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights q4 --block 32 --json \
      --repeat 200 --check --tol 0.05 | sed "s/^{/{\"cfg\":\"gemvq-$v\",/" >> "$out/gemv_q.jsonl"
  done
  python3 bench/gpu/summarize.py "$out"
  } 2>&1 | tee "$out/summary.txt" "$final/summary_live.txt"
  cp "$out/models.jsonl" "$final/" 2>/dev/null
  exit 0
fi
if [ "$mode" != models ] && [ "$mode" != quant ] && [ "$mode" != start ]; then
echo "== correctness on the GPU (test_cl_conv, quick)"
LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 300 $b/tests/test_cl_conv 2>&1 | tail -5 | tee "$out/test_cl_conv.txt"
fi
if [ "$mode" = start ]; then
echo "== cold start, programs built one after another (LOWCONV_CL_BUILD_THREADS=1)"
rm -rf $LOWCONV_CACHE_DIR
( time CUDA_CACHE_DISABLE=1 LOWCONV_CL_BUILD_THREADS=1 LOWCONV_CL_TIMING=1 suite resnet34-112 1 f32 fast > "$out/r34_b1_cold1.jsonl" ) 2>&1 | tail -3
grep -h "start-up" "$out/r34_b1_cold1.jsonl"; snap
fi
if [ "$mode" != models ] && [ "$mode" != quant ]; then
echo "== cold start: empty caches, driver JIT cache off, tuning fast"
rm -rf $LOWCONV_CACHE_DIR
( time CUDA_CACHE_DISABLE=1 LOWCONV_CL_TIMING=1 suite resnet34-112 1 f32 fast > "$out/r34_b1_cold.jsonl" ) 2>&1 | tail -3
echo "== warm start"
( time LOWCONV_CL_TIMING=1 suite resnet34-112 1 f32 fast > "$out/r34_b1_warm.jsonl" ) 2>&1 | tail -3
grep -h "start-up" "$out"/r34_b1_*.jsonl
fi
if [ "$mode" = start ]; then
  echo "== second warm start (the driver's JIT cache now warm too)"
  ( time LOWCONV_CL_TIMING=1 suite resnet34-112 1 f32 fast > "$out/r34_b1_warm2.jsonl" ) 2>&1 | tail -3
  grep -h "start-up" "$out/r34_b1_warm2.jsonl"; snap
  python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
  mstart() { LOWCONV_CL_TIMING=1 timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>"$out/ir34_$1.err" > "$out/ir34_$1.json"
    python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('iresnet34 b1 $1 start_ms', j['start_ms'], j.get('start_phases_ms'), 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" "$out/ir34_$1.json"
    grep -h "start-up" "$out/ir34_$1.err"; }
  rm -rf $LOWCONV_CACHE_DIR
  echo "== IResNet34-112 start: fresh caches (CUDA_CACHE_DISABLE=1), then warm twice"
  CUDA_CACHE_DISABLE=1 mstart cold; mstart warm1; mstart warm2; snap
  echo "== Winograd on the GPU (test_cl_conv, family wino)"
  LOWCONV_CL_FAMILY=wino LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 40 $b/tests/test_cl_conv 2>&1 | tail -4 | tee "$out/test_cl_wino.txt"
  for mb in 1 32; do
    echo "== resnet34-112 b$mb f32 (tuning fast, Winograd among the candidates) and cuDNN"
    TMO=40 suite resnet34-112 $mb f32 fast > "$out/resnet34-112_b${mb}_f32_r1.jsonl"
    timeout 60 python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb $mb > "$out/resnet34-112_b${mb}_cudnn_r1.jsonl"
    snap
  done
  echo "== Winograd variants forced (3x3 stride-1 layers)"
  for mv in 1:f4x4_32x32 1:f2x2_32x32 32:f4x4_64x64 32:f4x4_128x128 32:f2x2_64x64 32:f2x2_128x128; do
    mb=${mv%%:*} v=${mv#*:}
    LOWCONV_CL_FAMILY=wino LOWCONV_CL_VARIANT=$v timeout 30 $lc conv --suite resnet34-112 --mb $mb --device opencl \
      --weights f32 --tune none --json --repeat 20 --warmup 3 > "$out/resnet34-112_b${mb}_wino_$v.jsonl" 2>&1
  done
  snap
  python3 bench/gpu/summarize.py "$out" | tee "$out/summary.txt"
  exit 0
fi
if [ "$mode" = quant ]; then # q8/q4 against f32 on the resnet34-112 layers, and a model's warm start
  for mb in 1 32; do for w in f32 q8 q4; do suite resnet34-112 $mb $w fast > "$out/resnet34-112_b${mb}_${w}_q.jsonl"; done; done
  python3 - "$out" <<'PY'
import json, math, sys
d = sys.argv[1]
load = lambda p: {r["desc"]: r for r in map(json.loads, (l for l in open(p) if l.startswith("{")))}
for mb in (1, 32):
    f = load(f"{d}/resnet34-112_b{mb}_f32_q.jsonl")
    for w in ("q8", "q4"):
        q = load(f"{d}/resnet34-112_b{mb}_{w}_q.jsonl")
        r = [q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f]
        print(f"resnet34-112 b{mb} {w}/f32 geomean {math.exp(sum(map(math.log, r)) / len(r)):.3f} max {max(r):.2f}")
PY
  python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
  for t in first second; do $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); print('iresnet34 b1 $t start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])"; done
  exit 0
fi
if [ "$mode" = models ]; then # whole networks (issue 10): lowconv on the device vs PyTorch, same graph
  # PP-OCR det/cls/rec: the .onnx of the rapidocr-onnxruntime wheel in .ppocr/ (carried; git-ignored)
  PYTHONUNBUFFERED=1 python3 bench/gpu/models.py --lowconv $lc --ppocr .ppocr --reps ${REPS:-20} ${MODELS_ONLY:+--only $MODELS_ONLY} | tee "$out/models.jsonl" "$final/models.jsonl"
  exit 0
fi
if [ "$mode" = quick ]; then
  python3 bench/gpu/torch_conv.py --lowconv $lc --suite resnet34-112 --mb 1 > "$out/cudnn_r34_b1.jsonl"
  python3 bench/gpu/summarize.py "$out" | tee "$out/summary.txt"
  exit 0
fi
echo "== GEMV K=4096 N=14336 (1x1 conv on one pixel)"
for w in q4 q8 f32; do
  $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights $w --block 32 --json --repeat 100 --check \
    > "$out/gemv_$w.jsonl"
done
snap
# full: both suites at batch 1 and 32; mid: the batch-32 OCR suite left out (its 9x9 layers at
# 160x160 take minutes).
for round in 1 2; do
  for s in resnet34-112 ocr-det; do
    for mb in 1 32; do
      [ "$mode" = mid ] && [ $s = ocr-det ] && { [ $mb = 32 ] || [ $round = 2 ]; } && continue
      suite $s $mb f32 fast > "$out/${s}_b${mb}_f32_r$round.jsonl"
      python3 bench/gpu/torch_conv.py --lowconv $lc --suite $s --mb $mb > "$out/${s}_b${mb}_cudnn_r$round.jsonl"
      [ $round = 1 ] && for w in q8 q4; do suite $s $mb $w fast > "$out/${s}_b${mb}_${w}.jsonl"; done
      snap; echo "done $s b$mb round $round: $(date +%T)"
    done
  done
done
python3 bench/gpu/summarize.py "$out" | tee "$out/summary.txt"
