#!/usr/bin/env bash
# Stop 24, call 1: every issue 9/10 figure on main at 37cae78 (bench/gpu/run_h200.sh final, PyTorch +
# cuDNN in the same call), after a short look at stop 23's CPU changes on the lent machine's host CPU
# (lowconv_base = b1cc807, before stop 23) and od96 f32/q4 in three interleaved rounds.
cd "$(dirname "$0")/../../../.."
[ -e .ppocr ] || ln -s .cl-debs/ppocr .ppocr
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=$OUT/od; mkdir -p $o
pb=.cl-debs/pb
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
lscpu | grep -E "Model name|^CPU\(s\)|L2 cache|L3 cache"
python3 -c "
import sys; sys.path.insert(0,'tests/models'); import ocr_det, iresnet34, onnx
onnx.save(ocr_det.build(640, neck=96), '/tmp/od96.onnx'); onnx.save(iresnet34.build(112), '/tmp/ir34cpu.onnx')"
echo "== host CPU (core 2): weights cold (12 copies in turn) vs hot, base then new $(date +%T)"
for d in "mb1ic512ih7oc512kh3ph1 winograd" "mb1ic128ih28oc256kh3ph1 winograd4"; do set -- $d
  for b in bench_conv_cold_base bench_conv_cold bench_conv_cold_base bench_conv_cold; do
    echo "$b $(taskset -c 2 timeout 20 $pb/$b $1 1 12 20 $2 | sed 's/.*route //')"; done; done
echo "== host CPU (core 2 / cores 2-3): IResNet-34-112 f32 end to end, base then new $(date +%T)"
for t in 1 2; do cs=2; [ $t = 2 ] && cs=2,3
  for b in lowconv_base lowconv lowconv_base lowconv; do
    echo "T$t $b $(taskset -c $cs timeout 30 $pb/$b bench /tmp/ir34cpu.onnx --threads $t --repeat 15 2>/dev/null | grep -o 'median [0-9.]* ms')"
  done; done
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], j.get('kernels'))" $1; }
for w in f32 q4; do LOWCONV_CACHE_DIR=/tmp/lc-od timeout 90 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done
for r in 1 2 3; do for w in f32 q4; do for io in io noio; do
  x=""; [ $io = noio ] && x="--no-io"
  LOWCONV_CACHE_DIR=/tmp/lc-od timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json $x > $o/od96_${w}_${io}_$r.json 2>/dev/null
  echo "od96 $w $io round $r: $(med $o/od96_${w}_${io}_$r.json) ms, kernels"
done; done; done
} 2>&1 | tee $o/summary.txt
tar czf $OUT/od.tgz -C $o . 2>/dev/null
LC_PREBUILT=.cl-debs/pb FAMS="wino gemm gemvq" FINAL_S=${FINAL_S:-370} exec bash bench/gpu/run_h200.sh final
