#!/usr/bin/env bash
# Does a user who installs gpulab today get the FP32 rates the README quotes? pip brings NVRTC 13.5,
# the card has 13.0, and they compile v13's loop differently (13.5: 168 registers and 136 FFMA with
# two reads in one bank per 1,024; 13.0: 161 and 122, by scripts/sass_banks.py). v13 and cuBLAS in
# alternation under each, one process each. Needs the 13.5 wheel carried in .whl/.
# Usage: bash scripts/device_trial.sh nvrtc:300   (run with carry [".whl"])
set -u
source scripts/device_step.sh
mkdir -p /tmp/nvrtc135 && python3 -m zipfile -e .whl/nvidia_cuda_nvrtc-13.5.37-*.whl /tmp/nvrtc135
trials_begin nvrtc 290
TAIL=12 trial nvrtc130 140 python3 notebook/probes/ab_rungs.py sgemm 2048x2048x2048 4096x4096x4096 \
    --run v13 --run v13:S=16 --rounds 3
TAIL=12 trial nvrtc135 140 python3 scripts/with_nvrtc.py /tmp/nvrtc135/nvidia/cu13/lib notebook/probes/ab_rungs.py sgemm \
    2048x2048x2048 4096x4096x4096 --run v13 --run v13:S=16 --rounds 3
trials_end
