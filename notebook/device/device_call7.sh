#!/usr/bin/env bash
# Call 7 (session of 2026-12-04, second): issue 42's sanitizer records and the parser's fixtures
# (notebook/probes/resanitize.py: the configs last racechecked with "--launch-count 2"; the planted
# racy_v1 and an unguarded read past K under memcheck and racecheck, logs kept; a racecheck log of
# the tool's own fault, reproduced with "--launch-count 2"); then issue 39's main job in full,
# `gpulab run --full` from an empty compile cache, its output piped and stamped with the seconds
# since the start (the old main job took 432 s on 2026-12-03). Logs come back as call7.tgz.
# Usage (on the card, from the repository root): bash notebook/device/device_call7.sh
set -u
BACK=$OUT
export OUT=/tmp/call7; mkdir -p "$OUT"
source scripts/device_setup.sh || exit 1
source scripts/device_step.sh
trials_begin call7 560
LOGS=$dir/logs; mkdir -p "$LOGS"
TAIL=14 trial resanitize 60 python3 notebook/probes/resanitize.py
# The read past K with a variant header, so that `gpulab sanitize --kernel` takes it
{ printf '/* gpulab variant\nname:    reads_past_k\nsummary: planted: v1 loading A without its k < K guard\n'
  printf 'param:   TILE = 16 in 16 | the tile side\ngrid:    ceil_div(N, TILE), ceil_div(M, TILE)\nblock:   TILE, TILE\n*/\n'
  grep -v '^#define TILE' tests/gpu/planted/reads_past_k.cu; } >/tmp/reads_past_k.cu
TAIL=8 trial planted 60 bash -c "gpulab sanitize sgemm --kernel tests/gpu/planted/racy_v1.cu -v racy_v1 \
    --tool memcheck,racecheck --logs $LOGS --out $dir/sanitize-planted.csv; \
    gpulab sanitize sgemm --kernel /tmp/reads_past_k.cu -v reads_past_k --tool memcheck,racecheck --logs $LOGS \
    --out $dir/sanitize-planted.csv; exit 0"
TAIL=4 trial toolfault 40 python3 notebook/probes/probe_racecheck_filter.py --case t4-c2-plain --way count2 \
    --keep-logs "$LOGS" --timeout 35
stamp='import sys, time
t = time.time()
for line in sys.stdin:
    print(f"{time.time() - t:7.1f} {line}", end="", flush=True)'
TAIL=30 trial full 420 bash -c "GPULAB_CACHE=/tmp/fresh-full gpulab run --full 2>&1 | python3 -c '$stamp'"
trials_end
tar czf "$BACK/call7.tgz" -C "$OUT" . -C "$PWD" results/h200 2>/dev/null
exit 0
