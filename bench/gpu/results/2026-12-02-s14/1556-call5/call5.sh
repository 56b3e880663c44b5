# Session 14 call 5: the q4/q8/f32 GEMV streamed over weight copies (--rotate) next to its event time;
# every candidate's time on the resnet34-112 b1 suite (f32, q8, q4) for level fast's lists.
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh; o=$OUT
{
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
$lc devices | grep -i "measured" | head -2
echo "== GEMV K=4096 N=14336: events vs streamed over 4 copies (rotate) $(date +%T)"
export LOWCONV_CACHE_DIR=/tmp/lc-g
for w in q4 q8 f32; do for rot in 1 4 8; do
  timeout 60 $lc conv mb1ic4096ih1oc14336kh1 --device opencl --weights $w --block 32 --tune fast --json --repeat 400 --rotate $rot 2>/dev/null | python3 -c "
import json,sys; j=json.loads(sys.stdin.read().strip().splitlines()[-1]); B=j['weight_bytes']
print('$w rotate $rot: %s events median %.4f ms (%.0f GB/s), wall %.4f ms per run (%.0f GB/s), weight bytes %d' % (j['variant'], j['median_ms'], B/j['median_ms']/1e6, j['wall_ms'], B/j['wall_ms']/1e6, B))"
done; done
echo "== resnet34-112 b1 every candidate (fast, fresh cache) $(date +%T)"
for w in f32 q8 q4; do export LOWCONV_CACHE_DIR=/tmp/lc-s$w
  LOWCONV_CL_DEBUG=1 timeout 200 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights $w --tune fast --json --repeat 50 --warmup 3 > $o/s_$w.txt 2>&1
  grep -c "tune:" $o/s_$w.txt
done
echo "== done $(date +%T)"
} 2>&1 | tee $o/summary.txt
