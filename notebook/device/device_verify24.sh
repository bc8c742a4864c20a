#!/usr/bin/env bash
# For the next session's first device call: what 2026-12-02 changed after its last GPU run, checked
# on the card. The whole GPU suite and the exclusive tests on the committed tree (the CLI's SIGTERM
# handling, the tune's interrupt handling and the tuned-default tie-break are Python that the GPU
# paths run), then t2 benched at 2048^3, where the tie-break now picks its 4096^3 config (the README
# table holds the 1024^3 config's run: 54% of cuBLAS), and the README tables regenerated from it
# (gpulab readme, here or on the card). Logs in $OUT/verify24/.
# Usage: bash scripts/device_trial.sh verify24:480
set -u
source scripts/device_step.sh
trials_begin verify24 470
TAIL=8 trial gpu 330 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" tests/gpu
TAIL=4 trial exclusive 60 python3 -m pytest -q -p no:cacheprovider -m "gpu and exclusive" tests/gpu
TAIL=14 trial bench_t2 60 gpulab bench gemm_bf16 --variant t2,best --size 2048
trials_end
