#!/usr/bin/env bash
# Stop 19, call 1: where the cold start's build time goes. Per-program build times of IResNet-34 and
# of the resnet34-112 suite (builds one after another), the same cold with the default parallel
# builds, and whether one program holding several kernels builds cheaper than one program each.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c1; mkdir -p $o
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
cold() { rm -rf /tmp/lc-c /tmp/cc-c; CUDA_CACHE_PATH=/tmp/cc-c LOWCONV_CACHE_DIR=/tmp/lc-c "$@"; }
echo "== IResNet-34 cold, builds serial"
cold env LOWCONV_CL_BUILD_THREADS=1 LOWCONV_CL_TIMING=2 timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 --json > $o/ir_serial.json 2> $o/ir_serial.err
grep -E "built|op init|start-up|context" $o/ir_serial.err | cut -c1-220
python3 -c "import json; j=json.load(open('$o/ir_serial.json')); print('start_ms', j['start_ms'], 'compile', j['compile_ms'], 'tune', j['tune_ms'])"
for i in 1 2; do echo "== IResNet-34 cold, default builds ($i)"
cold env LOWCONV_CL_TIMING=2 timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 5 --json > $o/ir_par$i.json 2> $o/ir_par$i.err
grep -E "built|op init|start-up|context|planning" $o/ir_par$i.err | cut -c1-220
python3 -c "import json; j=json.load(open('$o/ir_par$i.json')); print('start_ms', j['start_ms'], j.get('start_phases_ms'), 'compile', j['compile_ms'], 'tune', j['tune_ms'])"
done
echo "== resnet34-112 b1 f32 suite cold, builds serial"
cold env LOWCONV_CL_BUILD_THREADS=1 LOWCONV_CL_TIMING=2 timeout 120 $lc conv --suite resnet34-112 --mb 1 --device opencl --weights f32 --tune fast --json --repeat 20 > $o/r34.jsonl 2>&1
grep -E "built|start-up" $o/r34.jsonl | cut -c1-200
echo "== one program per kernel against several kernels in one program (2 builds each, driver cache off)"
k=src/backend/opencl
for f in direct gemm gemv wino; do cat $k/cl_conv_args.h $k/kernels/common.cl $k/kernels/conv_$f.cl > /tmp/$f.cl; done
bp() { CUDA_CACHE_DISABLE=1 LD_LIBRARY_PATH=$ocl/usr/lib/x86_64-linux-gnu timeout 120 .cl-debs/build_probe "$@" | sed 's/, threads.*//'; }
W() { local s=""; for x in "$@"; do s="$s -DLC_WANT_$x"; done; echo "-DWFMT=0 -DASYM=0 -DLC_ONE_KERNEL$s"; }
for set in "conv_c4h1w1" "conv_c4h1w2" "conv_c8h2w1" "conv_c4h1w1 conv_c4h1w2 conv_c8h2w1"; do echo "direct [$set]: $(bp /tmp/direct.cl 2 "$(W $set)")"; done
echo "direct [all]: $(bp /tmp/direct.cl 2 "-DWFMT=0 -DASYM=0")"
for set in "gemm_32x32" "gemm_64x64" "gemm_32x32 gemm_64x64"; do echo "gemm [$set]: $(bp /tmp/gemm.cl 2 "$(W $set)")"; done
for set in "gemv_r1" "gemv_p1" "gemv_r1 gemv_p1"; do echo "gemv [$set]: $(bp /tmp/gemv.cl 2 "$(W $set)")"; done
echo "direct q4 [conv_c4h1w2]: $(bp /tmp/direct.cl 2 "-DWFMT=2 -DASYM=0 -DLC_ONE_KERNEL -DLC_WANT_conv_c4h1w2")"
echo "gemm [gemm_32x32] -cl-nv-opt-level=1: $(bp /tmp/gemm.cl 2 "$(W gemm_32x32) -cl-nv-opt-level=1")"
echo "gemm [gemm_32x32] -cl-mad-enable: $(bp /tmp/gemm.cl 2 "$(W gemm_32x32) -cl-mad-enable")"
tar czf $OUT/c1.tgz -C $o .
