#!/usr/bin/env bash
# Stop 28, call 2: issue 9's q8 / q4 <= f32 at batch 1 over several tunings (each round f32, q8 and
# q4 of the resnet34-112 suite with an empty cache, tuning fast), IResNet-34 warm starts; on an H200
# then every issue 9/10 figure again (run_h200.sh final): stop 27 measured none against cuDNN there.
cd "$(dirname "$0")/../../../.."
ln -sfn .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c2; mkdir -p $o/raw
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
S() { timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
{
echo "$gpu"; nvidia-smi --query-gpu=driver_version,persistence_mode --format=csv,noheader
for r in 1 2 3 4 5; do
  for w in f32 q8 q4; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast > $o/raw/b1_${w}_r$r.jsonl; done
  python3 - $o/raw $r <<'PY'
import json, math, sys
d, r = sys.argv[1], sys.argv[2]
load = lambda w: {x["desc"]: x for x in map(json.loads, (l for l in open(f"{d}/b1_{w}_r{r}.jsonl") if l.startswith("{")))}
f = load("f32")
for w in ("q8", "q4"):
    q = load(w)
    g = [q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f]
    print(f"round {r}: {w}/f32 geomean {math.exp(sum(map(math.log, g)) / len(g)):.3f} over {len(g)} layers, max {max(g):.2f}")
PY
done
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
export LOWCONV_CACHE_DIR=/tmp/lc-ir
timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 >/dev/null 2>&1
for k in 1 2 3 4 5; do
  timeout 60 $lc bench /tmp/ir34.onnx --device opencl --repeat 10 --json 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); print('ir34 warm start_ms', j['start_ms'], 'median_ms', round(j['median_ms'], 4))"
done
unset LOWCONV_CACHE_DIR
} 2>&1 | tee $o/summary.txt
case "$gpu" in *H200*)
  LC_PREBUILT=.cl-debs/pb FINAL_S=330 FAMS="gemmq wino" bash bench/gpu/run_h200.sh final > /dev/null 2>&1
  mv $OUT/summary.txt $OUT/final_summary.txt 2>/dev/null ;;
esac
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
