#!/usr/bin/env bash
# The lead's measurements that no helper's trial covers: the memory experiments re-benched with the
# hold-kernel timing, the grayscale fidelity run left from an older metric list, the recorded ncu
# output the CPU tests parse. Results land in results/<gpu>/ and tests/fixtures/ncu; logs in $OUT/lead/.
# Usage: bash scripts/device_trial.sh lead:150
source scripts/device_step.sh
dir=$OUT/lead; mkdir -p "$dir"
for e in coalesce stencil grayscale; do TAIL=4 step "bench_$e" 50 gpulab bench "$e"; done
TAIL=6 step fidelity_gray 30 gpulab fidelity grayscale --variant wide --shapes ragged
TAIL=4 step ncu_fixtures 60 python3 scripts/ncu_capture_fixtures.py --out tests/fixtures/ncu
