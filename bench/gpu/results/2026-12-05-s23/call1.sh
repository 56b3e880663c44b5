#!/usr/bin/env bash
# Prepared in stop 23 and not run (the device tool refused every call of that session): every issue 9/10 figure on this stop's tree (bench/gpu/run_h200.sh final, PyTorch +
# cuDNN in the same call), after: the weight prefetch (lc_gemm_params.pf) and the AVX-512 q8 GEMV on
# the lent machine's host CPU (a second Intel CPU: lowconv_base = main before this stop, b1cc807),
# and od96 f32/q4 in three interleaved rounds.
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
for d in "mb1ic512ih7oc512kh3ph1 winograd" "mb1ic256ih14oc256kh3ph1 winograd" "mb1ic512ih14oc512kh3sh2ph1 taprows" "mb1ic128ih28oc256kh3ph1 winograd4"; do set -- $d
  for b in bench_conv_cold_base bench_conv_cold bench_conv_cold_base bench_conv_cold; do
    echo "$b $(taskset -c 2 $pb/$b $1 1 12 20 $2 | sed 's/.*route //')"; done; done
echo "== host CPU (core 2 / cores 2-3): IResNet-34-112 end to end, base then new, f32 and q4 $(date +%T)"
for t in 1 2; do cs=2; [ $t = 2 ] && cs=2,3
  for r in 1 2; do for b in lowconv_base lowconv; do for w in f32 "q4:fast --block 32"; do
    echo "T$t $b $w $(taskset -c $cs $pb/$b bench /tmp/ir34cpu.onnx --threads $t --repeat 15 --weights $w 2>/dev/null | grep -o 'median [0-9.]* ms')"
  done; done; done; done
med() { python3 -c "import json,sys; j=json.loads(open(sys.argv[1]).read()); print('%.4f' % j['median_ms'], j.get('kernels'))" $1; }
for w in f32 q4; do LOWCONV_CACHE_DIR=/tmp/lc-od timeout 90 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 5 >/dev/null 2>&1; done
for r in 1 2 3; do for w in f32 q4; do for io in io noio; do
  x=""; [ $io = noio ] && x="--no-io"
  LOWCONV_CACHE_DIR=/tmp/lc-od timeout 60 $lc bench /tmp/od96.onnx --device opencl --weights $w --repeat 300 --json $x > $o/od96_${w}_${io}_$r.json 2>/dev/null
  echo "od96 $w $io round $r: $(med $o/od96_${w}_${io}_$r.json) ms, kernels"
done; done; done
} 2>&1 | tee $o/summary.txt
tar czf $OUT/od.tgz -C $o . 2>/dev/null
LC_PREBUILT=.cl-debs/pb FAMS="wino gemm gemvq" FINAL_S=${FINAL_S:-380} exec bash bench/gpu/run_h200.sh final
