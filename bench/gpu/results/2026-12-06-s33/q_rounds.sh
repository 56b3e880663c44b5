# Sourced by call1.sh / call2.sh (stop 33): Q_ROUNDS independent tunings (level fast, empty caches)
# of f32 / q8 / q4 at batch 1 (resnet34-112) into $o, order alternating; q_summary prints q / f32.
S() { timeout 60 $lc conv --suite resnet34-112 --mb 1 --device opencl --json --repeat 50 --warmup 3 "$@" 2>/dev/null; }
q_rounds() {
  for r in $(seq "$1"); do
    ws="f32 q8 q4"; [ $((r % 2)) = 0 ] && ws="q4 q8 f32"
    for w in $ws; do rm -rf /tmp/lc-s; LOWCONV_CACHE_DIR=/tmp/lc-s S --weights $w --tune fast > $o/b1_${w}_$r.jsonl; done
  done
}
q_summary() { python3 "$(dirname "${BASH_SOURCE[0]}")/q_summary.py" "$@"; }
