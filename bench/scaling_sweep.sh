#!/usr/bin/env bash
# One thread against two over a grid of common conv shapes (3x3 / 1x1, stride 1 / 2, 12 channel
# pairs, outputs 7-80 px): `lowconv conv` median of 30 runs each, the 2-thread runs after 100 ms of
# warm-up. Output files are parsed after each run: a consumer process started during a 2-thread
# run (a pipe into python) takes the second vCPU and hides the scaling.
# usage: bench/scaling_sweep.sh [LOWCONV] > OUT   (lines: desc route1 ms1 route2 ms2)
set -u
L=${1:-build/lowconv}
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
for k in "3 1 1" "3 2 1" "1 1 0" "1 2 0"; do
  set -- $k; kh=$1; s=$2; p=$3
  for c in "32 64" "64 64" "64 128" "128 128" "128 256" "256 256" "256 512" "512 512" "96 24" "24 144" "384 64" "960 160"; do
    set -- $c; ic=$1; oc=$2
    for h in 7 14 20 28 40 56 80; do
      d="mb1ic${ic}ih$((h * s))oc${oc}oh${h}kh${kh}sh${s}ph${p}"
      "$L" conv "$d" --threads 1 --repeat 30 --warmup-ms 20 > "$t/1" 2>&1
      "$L" conv "$d" --threads 2 --repeat 30 --warmup-ms 100 > "$t/2" 2>&1
      echo "$d $(awk '/route/ {print $2}' "$t/1") $(awk '/median/ {print $2}' "$t/1") $(awk '/route/ {print $2}' "$t/2") $(awk '/median/ {print $2}' "$t/2")"
    done
  done
done
