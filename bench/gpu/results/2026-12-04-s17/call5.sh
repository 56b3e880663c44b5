# Session 17 call 5: split at level fast on 1x1 convs too (LOWCONV_CL_SPLIT_1X1=1, A) against k x k only (B):
# resnet34-112 b1 f32/q8/q4 suites interleaved twice; IResNet34 f32 cold start with A's rule.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT; d=/tmp/c5; mkdir -p $d
{
date +%T
for r in 1 2; do for ab in B A; do for w in f32 q8 q4; do
  s1=""; [ $ab = A ] && s1=1
  LOWCONV_CL_SPLIT_1X1=$s1 LOWCONV_CACHE_DIR=/tmp/lc5-$ab timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w \
    --tune fast --json --repeat 50 --warmup 3 > $d/s_${ab}_${w}_$r.jsonl 2>/dev/null
done; done; done
python3 - $d <<'PY'
import json, sys, math
d = sys.argv[1]
def load(ab, w, r):
    return {j["name"]: j for j in map(json.loads, (l for l in open(f"{d}/s_{ab}_{w}_{r}.jsonl") if l.startswith("{")))}
for w in ("f32", "q8", "q4"):
    A, B = load("A", w, 2), load("B", w, 2)
    A1, B1 = load("A", w, 1), load("B", w, 1)
    g = []
    for n in B:
        a = min(A[n]["median_ms"], A1[n]["median_ms"]); b = min(B[n]["median_ms"], B1[n]["median_ms"])
        g.append(a / b)
        if A[n]["variant"] != B[n]["variant"]:
            print(f"{w} {n:16s} A {A[n]['variant']:16s} {a*1e3:7.1f} us | B {B[n]['variant']:16s} {b*1e3:7.1f} us")
    print(f"{w}: geomean A/B {math.exp(sum(map(math.log, g)) / len(g)):.3f} over {len(g)} layers")
for ab in ("A", "B"):
    f = {n: min(load(ab, "f32", r)[n]["median_ms"] for r in (1, 2)) for n in load(ab, "f32", 1)}
    for w in ("q8", "q4"):
        q = {n: min(load(ab, w, r)[n]["median_ms"] for r in (1, 2)) for n in f}
        g = [q[n] / f[n] for n in f]
        print(f"{ab}: {w} / f32 geomean {math.exp(sum(map(math.log, g)) / len(g)):.3f}, max {max(g):.2f}")
PY
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
for ab in A B; do
  s1=""; [ $ab = A ] && s1=1
  rm -rf /tmp/lc-irc /tmp/cc-irc
  CUDA_CACHE_PATH=/tmp/cc-irc LOWCONV_CL_SPLIT_1X1=$s1 LOWCONV_CACHE_DIR=/tmp/lc-irc timeout 60 $lc bench /tmp/ir34.onnx --device opencl --json --repeat 20 2>/dev/null > $d/irc_$ab.json
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('ir34 f32 cold $ab start_ms', j['start_ms'], 'compile_ms', j['compile_ms'], 'tune_ms', j['tune_ms'], 'median_ms', j['median_ms'])" $d/irc_$ab.json
done
echo "== done $(date +%T)"
} 2>&1 | tee $d/summary.txt
tar czf $o/call5.tgz -C $d . ; cp $d/summary.txt $o/
