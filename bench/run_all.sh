#!/usr/bin/env bash
# Every figure in docs/benchmarks.md, in one run: conv suites against ONNX Runtime and oneDNN
# (1 and 2 threads), the 9x9 budget check, fp32 vs q8 vs q4 on the suites, the q4 GEMV against
# MatMulNBits and DRAM bandwidth, and the end-to-end models. Output: out/bench/*.txt.
# At the end: IResNet-34's saved-q4 start-up (bench/q4_load.py) and the figures docs/img/*.png
# (bench/plot.py; skipped when matplotlib is absent).
# Usage: bench/run_all.sh [build dir]   (needs scripts/test.sh's venv and libdnnl-dev;
# figures: .venv/bin/pip install -r bench/requirements.txt)
set -euo pipefail
cd "$(dirname "$0")/.."
b=${1:-build}
py=.venv/bin/python
out=out/bench
mkdir -p "$out"
lscpu | grep -E 'Model name|^CPU\(s\)' > "$out/machine.txt"
for suite in resnet34-112 ocr-det; do
  $py bench/run_peers.py --suite $suite --threads 1,2 --lowconv "$b/lowconv" --onednn "$b/bench/onednn_conv" \
    | tee "$out/peers-$suite.txt"
done
{
  for t in 1 2; do
    for budget in 0 $((t * 2))M; do
      "$b/lowconv" conv mb1ic256ih80oc256kh9ph4 --threads $t --budget $budget --repeat 3 --json
    done
    "$b/lowconv" conv mb1ic256ih80oc256kh9ph4 --threads $t --budget $((t * 2))M --route igemm --repeat 3 --json || true
  done
} | tee "$out/budget-9x9.txt"
for suite in resnet34-112 ocr-det; do
  for w in f32 q8 q4; do
    "$b/lowconv" conv --suite $suite --weights $w --block 32 | tail -n 1 | sed "s/^/$suite $w: /"
  done
done | tee "$out/quant-suites.txt"
$py bench/peers/ort_matmulnbits.py --lowconv "$b/lowconv" | tee "$out/gemv.txt"
$py bench/bench_models.py --lowconv "$b/lowconv" --build-dir "$b" --rounds 2 | tee "$out/models.txt"
# The quantizer's targets (issue #13): PP-OCR det/cls/rec from the models tests/py_test_rapidocr.py
# fetched into the build dir, and IResNet-34-112's `lowconv run` memory and start-up.
$py bench/quant_bench.py --lowconv "$b/lowconv" --ocr-dir "$b/rapidocr" --out "$out/quant" --json "$out/quant.json" \
  | tee "$out/quant.txt"
$py bench/q4_load.py --lowconv "$b/lowconv" --out "$out/q4load" --json "$out/q4_load.json" | tee "$out/q4_load.txt"
if $py -c 'import matplotlib' 2>/dev/null; then
  gpu=$(ls -d bench/gpu/results/*-final 2>/dev/null | tail -n 1)
  $py bench/plot.py --cpu-peers "$out"/peers-*.txt --cpu-models "$out/models.txt" ${gpu:+--gpu-dir "$gpu"} \
    --q4-run "$out/q4_load.json" --machine "$(sed -n 's/^Model name: *//p' "$out/machine.txt"), $(nproc) CPUs" \
    --date "$(date -u '+%Y-%m-%d %H:%M UTC')" --command "bench/run_all.sh $b" --out docs/img
else
  echo "bench/run_all.sh: matplotlib is not installed (.venv/bin/pip install -r bench/requirements.txt): figures in docs/img not regenerated"
fi
