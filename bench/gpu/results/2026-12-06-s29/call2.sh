#!/usr/bin/env bash
# Stop 29, call 2: the final default (the device opened on its own thread from the plan's start,
# no early packing: LOWCONV_CL_STAGE=1 turns it on) against lowconv_base (7ef9d0d), interleaved,
# IResNet-34-112 warm starts on one warmed cache; then py_test_device_nets and test_cl_faults.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
new=$lc base=$(cd .cl-debs/pb && pwd)/lowconv_base
o=$OUT/c2; mkdir -p $o
export LOWCONV_CACHE_DIR=/tmp/lc-s29 CUDA_CACHE_PATH=/tmp/cc-s29; rm -rf $LOWCONV_CACHE_DIR $CUDA_CACHE_PATH
st() { local l=$1 b=$2; shift 2
  env "$@" timeout 60 $b bench /tmp/ir34.onnx --device opencl --json --repeat 5 2>$o/$l.err | python3 -c "
import json,sys; j=json.load(sys.stdin); p=j.get('start_phases_ms', {})
print('%-22s start_ms %7.1f  load %5.1f plan %6.1f first_run %5.1f  median_ms %.3f' % ('$l', j['start_ms'], p.get('load',0), p.get('plan',0), p.get('first_run',0), j['median_ms']))"; }
{
nvidia-smi --query-gpu=name,driver_version,persistence_mode --format=csv,noheader
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
echo "== cold, then warm-up ($(date +%T))"
st cold_base $base X=1; st cold_new $new X=1; st warm_base $base X=1; st warm_new $new X=1
echo "== interleaved warm starts ($(date +%T))"
for r in 1 2 3 4 5 6 7 8 9 10 11 12; do
  if [ $((r % 2)) = 1 ]; then a=base b=new; else a=new b=base; fi
  for v in $a $b; do bin=$base; [ $v = new ] && bin=$new; st ${v}_plain_$r $bin X=1; done
  if [ $r -le 6 ]; then
    for v in $b $a; do bin=$base; [ $v = new ] && bin=$new; st ${v}_timing_$r $bin LOWCONV_CL_TIMING=1; done
    st new_stage_$r $new LOWCONV_CL_STAGE=1
  fi
done
for v in base new; do echo "-- timing lines, $v, round 6"; grep -h "context:\|plan:\|op init\|start-up" $o/${v}_timing_6.err | cut -c1-330; done
echo "== OpenCL tests ($(date +%T))"
echo "-- test_cl_faults"; LC_TEST_QUICK=1 LC_REQUIRE_OPENCL=1 timeout 90 .cl-debs/pb/tests/test_cl_faults 2>&1 | tail -4
mkdir -p /tmp/lc-bd && ln -sfn "$(pwd)/.cl-debs/ppocr" /tmp/lc-bd/rapidocr
echo "-- py_test_device_nets.py ($(date +%T))"
timeout 200 python3 tests/py_test_device_nets.py --lowconv $new --build-dir /tmp/lc-bd > $o/device_nets.txt 2>&1
grep -v "^  .*PASS" $o/device_nets.txt | tail -20; grep "async open" $o/device_nets.txt
echo "== done ($(date +%T))"
} 2>&1 | tee $o/summary.txt
cd $OUT && tar czf c2.tgz c2 && rm -rf c2
