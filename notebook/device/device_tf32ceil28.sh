#!/usr/bin/env bash
# sgemm v14 against what it runs on: the TF32 wgmma ceiling (gpulab ceilings measures only the tensor
# rows, since the stored file lacks tensor_tf32), the GPU tests of the tensor ceilings, v14's ncu
# evidence beside v13 at 4096^3 (profile.csv) with its new access model's predictions, the model's
# fidelity rows, and v14 and the best row benched again so their records carry the new ceiling.
# Logs in $OUT/tf32ceil28/.
# Usage: bash scripts/device_trial.sh tf32ceil28:560
set -u
source scripts/device_step.sh
trials_begin tf32ceil28 555
TAIL=20 trial ceilings 60 gpulab ceilings
TAIL=12 trial tests 90 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k "ceilings"
TAIL=60 trial compare 120 gpulab compare sgemm v13 v14 --size 4096
TAIL=40 trial fidelity 120 gpulab fidelity sgemm -v v14
TAIL=40 trial bench 200 gpulab bench sgemm --variant v14,best
trials_end
