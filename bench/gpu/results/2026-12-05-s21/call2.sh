#!/usr/bin/env bash
# Stop 21, call 2: the tuner's choice, old (host time of every run, .cl-debs/pb-old = 96d7ef7) against
# new (least host time, device time for the early stop, ~20 ms of load before the first timing):
# resnet34-112 b1 f32 and q4 suites tuned from empty caches, 3 rounds interleaved; every candidate's
# time of one fresh tuning (LOWCONV_CL_DEBUG); od96's per-layer profile at f32 and q4; the q4/q8
# GEMV K=4096 N=14336 with the new streamed gemvq variants s2/s4 forced against w1/w2, and test_cl_gemv.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
old=$(cd .cl-debs/pb-old && pwd)/lowconv
o=/tmp/c2; mkdir -p $o; t0=$(date +%s); end=$(( t0 + ${END_S:-280} ))
left() { echo $(( end - $(date +%s) )); }
go() { [ "$(left)" -ge "$1" ] || { echo "skipped: $2 (time)"; return 1; }; echo "== $2 ($(date +%T))"; }
snap() { tar czf $OUT/c2.tgz -C $o . 2>/dev/null; cp $o/summary.txt $OUT/ 2>/dev/null; }
trap snap EXIT
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
$lc devices | tail -2
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
# the driver's JIT cache warm for both binaries' kernels (same sources): compile time out of the rounds
for bin in $old $lc; do LOWCONV_CACHE_DIR=/tmp/lc-pre timeout 60 $bin conv --suite resnet34-112 --mb 1 --device opencl --weights q4 --tune fast --json --repeat 3 >/dev/null 2>&1; done
go 150 "tuner A/B: old / new, resnet34-112 b1 f32 and q4 from empty caches, 3 rounds" && {
  for r in 1 2 3; do for w in f32 q4; do for t in old new; do
    bin=$lc; [ $t = old ] && bin=$old; rm -rf /tmp/lc-t; sleep 2
    LOWCONV_CACHE_DIR=/tmp/lc-t timeout 60 $bin conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/t_${w}_$t$r.jsonl 2>&1
  done; done; done; snap; }
python3 - "$o" <<'PY'
import json, sys, math, os, statistics
d = sys.argv[1]
def load(f): return {j['name']: j for j in (json.loads(l) for l in open(f) if l.startswith('{'))} if os.path.exists(f) else {}
for w in ('f32', 'q4'):
  for t in ('old', 'new'):
    runs = [load(f'{d}/t_{w}_{t}{r}.jsonl') for r in (1, 2, 3)]
    runs = [x for x in runs if x]
    if len(runs) < 2: continue
    names = list(runs[0])
    # per layer: spread = max/min of the chosen variants' medians over the rounds
    sp = [max(x[k]['median_ms'] for x in runs) / min(x[k]['median_ms'] for x in runs) for k in names]
    tot = [sum(x[k]['median_ms'] for k in names) for x in runs]
    print(f"{w} {t}: suite sum per round {' '.join('%.3f' % v for v in tot)} ms; per-layer max/min over rounds: geomean {math.exp(sum(map(math.log, sp))/len(sp)):.3f}, worst {max(sp):.2f}, layers > 1.10: {sum(s > 1.10 for s in sp)}")
  f = [load(f'{d}/t_f32_new{r}.jsonl') for r in (1, 2, 3)]; q = [load(f'{d}/t_q4_new{r}.jsonl') for r in (1, 2, 3)]
for t in ('old', 'new'):
  for r in (1, 2, 3):
    f, q = load(f'{d}/t_f32_{t}{r}.jsonl'), load(f'{d}/t_q4_{t}{r}.jsonl')
    if f and q and set(f) == set(q):
      print(f"{t} round {r}: q4 / f32 geomean {math.exp(sum(math.log(q[k]['median_ms'] / f[k]['median_ms']) for k in f) / len(f)):.3f}")
for w in ('f32', 'q4'):
  for k in load(f'{d}/t_{w}_new1.jsonl'):
    row = []
    for t in ('old', 'new'):
      for r in (1, 2, 3):
        x = load(f'{d}/t_{w}_{t}{r}.jsonl').get(k)
        row.append('%5.1f %-15s' % (x['median_ms'] * 1e3, x['variant']) if x else '-')
    print(f"  {w} {k:16s} " + ' | '.join(row))
PY
go 30 "every candidate of one fresh tuning, b1 f32 and q4 (new)" && for w in f32 q4; do rm -rf /tmp/lc-d
  LOWCONV_CL_DEBUG=1 LOWCONV_CACHE_DIR=/tmp/lc-d timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 20 > $o/debug_$w.jsonl 2> $o/debug_$w.err; grep -c "tune:" $o/debug_$w.err; done
go 30 "od96 per layer, f32 and q4 (new)" && for w in f32 q4; do
  LOWCONV_CACHE_DIR=/tmp/lc-od timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1
  LOWCONV_CACHE_DIR=/tmp/lc-od timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --per-layer --repeat 20 > $o/od96_${w}_pl.txt 2>&1; tail -3 $o/od96_${w}_pl.txt; done
go 40 "GEMV K=4096 N=14336: gemvq variants forced (s2/s4 new), q4 and q8, then the tuner's choice" && {
  for w in q4 q8; do for v in w1:128 w2:64 w1u8:128 s2:64 s2:128 s2:256 s4:64 s4:128 s4:256; do
    LOWCONV_CACHE_DIR=/tmp/lc-gv LOWCONV_CL_FAMILY=gemvq LOWCONV_CL_VARIANT=${v%:*} LOWCONV_CL_GEMVQ_LWS=${v#*:} timeout 20 $lc conv mb1ic4096ih1oc14336kh1 \
      --device opencl --weights $w --block 32 --json --repeat 200 --check --tol 0.05 > $o/gv_${w}_${v/:/_}.json 2>&1
    python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('$w $v', '%.4f ms' % j['median_ms'], '%.1f GB/s' % (j['weight_bytes'] / j['median_ms'] / 1e6), j['variant'], j['local_size'], j['max_rel_err'])" $o/gv_${w}_${v/:/_}.json 2>&1 | tail -1
  done
  LOWCONV_CACHE_DIR=/tmp/lc-gv2 timeout 30 $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights $w --block 32 --json --repeat 200 --check --tol 0.05 | cut -c1-300; done
  LC_REQUIRE_OPENCL=1 timeout 60 .cl-debs/pb/tests/test_cl_gemv 2>&1 | tail -1; snap; }
} 2>&1 | tee $o/summary.txt
