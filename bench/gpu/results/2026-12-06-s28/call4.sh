#!/usr/bin/env bash
# Stop 28, call 4: the tuner ranks candidates at the host's floor by their device time (call 3: every
# 1x1 shortcut's split candidates, 11-13 us on the device, scored at the same 14-16 us floor, so
# the first timed won). A/B against f33d4fe (lowconv, call 2's binary), interleaved: five rounds of
# resnet34-112 b1 f32 / q8 / q4, empty caches, tuning fast; then IResNet-34 b1 f32 / q4 whole.
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/c4; mkdir -p $o/raw
new=$(dirname $lc)/lowconv_new
S() { local b=$1; shift; timeout 60 $b conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
g() { python3 - $o/raw $1 <<'PY'
import json, math, sys
d, tag = sys.argv[1], sys.argv[2]
load = lambda w: {x["desc"]: x for x in map(json.loads, (l for l in open(f"{d}/b1_{w}_{tag}.jsonl") if l.startswith("{")))}
f = load("f32")
out = []
for w in ("q8", "q4"):
    q = load(w)
    r = [q[k]["median_ms"] / f[k]["median_ms"] for k in q if k in f]
    out.append(f"{w}/f32 {math.exp(sum(map(math.log, r)) / len(r)):.3f}")
print(tag, " ".join(out), "f32 sum %.1f us" % (sum(x["median_ms"] for x in f.values()) * 1e3))
PY
}
{
nvidia-smi --query-gpu=name --format=csv,noheader
for r in 1 2 3 4 5; do for v in new base; do
  b=$new; [ $v = base ] && b=$lc
  for w in f32 q8 q4; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S $b --weights $w --tune fast > $o/raw/b1_${w}_${v}$r.jsonl; done
  g ${v}$r
done; done
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
for r in 1 2; do for v in new base; do for w in f32 q4; do
  b=$new; [ $v = base ] && b=$lc
  rm -rf /tmp/lc-m; LOWCONV_CACHE_DIR=/tmp/lc-m timeout 90 $b bench /tmp/ir34.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1
  LOWCONV_CACHE_DIR=/tmp/lc-m timeout 60 $b bench /tmp/ir34.onnx --device opencl --weights $w --repeat 300 --json 2>/dev/null | python3 -c "import json,sys; j=json.load(sys.stdin); print('ir34 $v $w round $r median_ms', round(j['median_ms'], 4), 'min', round(j['min_ms'], 4))"
done; done; done
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
