#!/usr/bin/env bash
# Stop 26, call 1: stop 25's call 1, which never ran there (no device was lent): the copies'
# ceiling, od96 f32 / q4 with and without transfers in four interleaved rounds, IResNet-34's cold
# start and six warm ones. Output under $OUT/c1; summary in call1/.
exec bash "$(dirname "$0")/../2026-12-06-s25/call1.sh"
