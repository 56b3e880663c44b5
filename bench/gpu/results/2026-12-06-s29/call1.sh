#!/usr/bin/env bash
# Stop 29, call 1: IResNet-34-112 load to first result with the device opened on a thread of its
# own while the host folds, fuses and packs the weights (issue 10), A/B interleaved against the
# tree before it (lowconv_base = 7ef9d0d), both on one warmed cache; then the OpenCL tests of the
# change on NVIDIA. Setup: .cl-debs/ holds the ICD debs (bench/gpu/cl_env.sh) and pb/ the binaries.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
new=$lc base=$(cd .cl-debs/pb && pwd)/lowconv_base
o=$OUT/c1; mkdir -p $o
export LOWCONV_CACHE_DIR=/tmp/lc-s29 CUDA_CACHE_PATH=/tmp/cc-s29; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
# one start: label, binary, env...; start_ms and phases to stdout, the timing lines to $o/LABEL.err
st() { local l=$1 b=$2; shift 2
  env "$@" timeout 60 $b bench /tmp/ir34.onnx --device opencl --json --repeat 5 2>$o/$l.err | python3 -c "
import json,sys; j=json.load(sys.stdin); p=j.get('start_phases_ms', {})
print('%-22s start_ms %7.1f  load %5.1f plan %6.1f first_run %5.1f  median_ms %.3f' % ('$l', j['start_ms'], p.get('load',0), p.get('plan',0), p.get('first_run',0), j['median_ms']))"; }
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
python3 -c "import torch, onnx, numpy; print('torch', torch.__version__, 'onnx', onnx.__version__, 'numpy', numpy.__version__)"
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== cold, then warm-up ($(date +%T))"
st cold_base $base X=1; st cold_new $new X=1; st warm_base $base X=1; st warm_new $new X=1
echo "== interleaved warm starts ($(date +%T))"
for r in 1 2 3 4 5 6 7 8; do
  if [ $((r % 2)) = 1 ]; then a=base b=new; else a=new b=base; fi
  for v in $a $b; do bin=$base; [ $v = new ] && bin=$new; st ${v}_plain_$r $bin X=1; done
  for v in $b $a; do bin=$base; [ $v = new ] && bin=$new; st ${v}_timing_$r $bin LOWCONV_CL_TIMING=1; done
  st new_nostage_$r $new LOWCONV_CL_STAGE=0
  st new_serial_$r $new LOWCONV_DEVICE_OPEN=serial
done
echo "== timing lines of round 8"
for v in base new; do echo "-- $v"; grep -h "context:\|plan:\|op init\|start-up" $o/${v}_timing_8.err | cut -c1-330; done
echo "== LOWCONV_CL_TIMING=2 and 3, new"
LOWCONV_CL_TIMING=2 st new_t2 $new X=1; LOWCONV_CL_TIMING=3 st new_t3 $new X=1
grep -h "context:\|plan:\|op init\|start-up\|collect" $o/new_t3.err | cut -c1-330
echo "== OpenCL tests of the change ($(date +%T))"
for t in test_cl_faults test_context_shared test_cl_cache; do
  echo "-- $t"; LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 .cl-debs/pb/tests/$t 2>&1 | tail -3
done
mkdir -p /tmp/lc-bd && ln -sfn "$(pwd)/.cl-debs/ppocr" /tmp/lc-bd/rapidocr
echo "-- py_test_device_nets.py ($(date +%T))"
timeout 200 python3 tests/py_test_device_nets.py --lowconv $new --build-dir /tmp/lc-bd 2>&1 | tail -45
echo "== done ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c1.tgz c1 && rm -rf c1
