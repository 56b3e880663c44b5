#!/usr/bin/env bash
# Stop 19, call 3: IResNet-34 cold / warm with the upload scratch taken at context open (and kernel
# groups); every candidate's time at level heavy on the resnet34-112 layers where q8/q4 trail f32.
set -uo pipefail
cd "$(dirname "$0")/../../../.."
LC_PREBUILT=.cl-debs/pb; . bench/gpu/cl_env.sh
o=/tmp/c3; mkdir -p $o
python3 -c "import sys; sys.path.insert(0,'tests/models'); import iresnet34, onnx; onnx.save(iresnet34.build(112), '/tmp/ir34.onnx')"
ir() { timeout 120 $lc bench /tmp/ir34.onnx --device opencl --repeat 20 --json > $o/$1.json 2> $o/$1.err
  python3 -c "import json; j=json.load(open('$o/$1.json')); print('$1 start_ms %.1f' % j['start_ms'], j.get('start_phases_ms'), 'compile %.1f tune %.1f median %.4f' % (j['compile_ms'], j['tune_ms'], j['median_ms']))"
  grep -h "start-up" $o/$1.err | sed 's/.*packing/  packing/' | cut -c1-150; }
for i in 1 2 3 4; do rm -rf /tmp/lc-c /tmp/cc-c; CUDA_CACHE_PATH=/tmp/cc-c LOWCONV_CACHE_DIR=/tmp/lc-c LOWCONV_CL_TIMING=1 ir ir_cold$i; done
export CUDA_CACHE_PATH=/tmp/cc-c LOWCONV_CACHE_DIR=/tmp/lc-c
for i in 1 2 3; do ir ir_warm$i; done
unset CUDA_CACHE_PATH LOWCONV_CACHE_DIR
echo "== level heavy, every candidate (ms), f32 / q8 / q4"
for d in mb1ic64ih112oc64oh56kh1sh2ph0 mb1ic256ih14oc512oh7kh1sh2ph0 mb1ic3ih112oc64oh112kh3ph1 mb1ic64ih112oc64oh112kh3ph1 mb1ic512ih14oc512oh7kh3sh2ph1; do
  for w in f32 q8 q4; do
    LOWCONV_CACHE_DIR=/tmp/lc-h LOWCONV_CL_DEBUG=1 timeout 60 $lc conv $d --device opencl --weights $w --tune heavy --repeat 50 --json > $o/h_${d}_$w.txt 2>&1
    echo "-- $d $w: best 5 of $(grep -c 'tune:' $o/h_${d}_$w.txt)"; grep "tune:" $o/h_${d}_$w.txt | grep -v "does not" | awk '{print "   ", $3, $4, $6, $7}' | sort -k4 -g | head -5
    grep '^{' $o/h_${d}_$w.txt | python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print('   chosen', j['variant'], j['local_size'], 'median %.4f ms' % j['median_ms'])"
  done; done
tar czf $OUT/c3.tgz -C $o .
