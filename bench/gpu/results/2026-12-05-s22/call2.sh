#!/usr/bin/env bash
# Stop 22, call 2: every issue 9/10 figure on this stop's tree (bench/gpu/run_h200.sh final, PyTorch +
# cuDNN in the same call), first: od96 f32/q4 in three interleaved rounds (the host moves it by
# ~0.1 ms), the host cost of a launch by argument form (enqueue_probe), batch-32 Winograd from the
# codes against q4's tuned choice, and 2 of the host CPU's cores at 1 and 2 threads on three CPU
# layers (bench_pool's machine probe, then lowconv conv, taskset).
cd "$(dirname "$0")/../../../.."
[ -e .ppocr ] || ln -s .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/od; mkdir -p $o
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)"
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx')"
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], j.get('kernels'))" $1; }
for w in f32 q4; do LOWCONV_CACHE_DIR=/tmp/lc-od timeout 90 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done
for r in 1 2 3; do for w in f32 q4; do for io in io noio; do
  x=""; [ $io = noio ] && x="--no-io"
  LOWCONV_CACHE_DIR=/tmp/lc-od timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json $x > $o/od96_${w}_${io}_$r.json 2>/dev/null
  echo "od96 $w $io round $r: $(med $o/od96_${w}_${io}_$r.json) ms, kernels"
done; done; done
echo "== enqueue_probe: host cost of a launch by what it carries $(date +%T)"
LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 60 .cl-debs/pb/enqueue_probe 2000 2>&1 | tail -14
echo "== batch 32: q4 tuned (fast) against Winograd from the codes forced, f32 Winograd beside $(date +%T)"
for d in mb32ic64ih56oc64kh3ph1 mb32ic128ih28oc128kh3ph1 mb32ic256ih14oc256kh3ph1; do
  for c in "q4 fast" "q4 f4x4_128x128" "q4 f4x4_64x64" "f32 f4x4_128x128"; do set -- $c
    e=""; [ $2 = fast ] || e="LOWCONV_CL_FAMILY=wino LOWCONV_CL_VARIANT=$2"
    env $e LOWCONV_CACHE_DIR=/tmp/lc-b32 timeout 60 $lc conv $d --device opencl --weights $1 --json --repeat 30 --check 2>&1 | python3 -c "
import json,sys
for l in sys.stdin:
    if l.startswith('{'): j=json.loads(l); print('$d $1 $2', '%.4f' % j['median_ms'], j.get('variant'), 'err %.1e' % (j.get('max_rel_err') or 0))"
  done
done
echo "== host CPU, cores 2-3: machine probe and three layers at 1 / 2 threads $(date +%T)"
taskset -c 2,3 .cl-debs/pb/bench_pool 2 1 "" 2>/dev/null | head -1
for d in mb1ic3ih112oc64kh3ph1 mb1ic128ih28oc128kh3ph1 mb1ic128ih56oc128oh28kh3sh2ph1; do for t in 1 2 1 2; do
  taskset -c 2,3 $lc conv $d --threads $t --repeat 50 --json 2>/dev/null | python3 -c "import json,sys; j=json.loads(sys.stdin.readline()); print('$d', j['threads'], '%.3f'%j['median_ms'], '%.3f'%j['min_ms'], j['route'])"
done; done
} 2>&1 | tee $o/summary.txt
tar czf $OUT/od.tgz -C $o . 2>/dev/null
LC_PREBUILT=.cl-debs/pb FAMS="wino gemm gemvq" FINAL_S=${FINAL_S:-430} exec bash bench/gpu/run_h200.sh final
