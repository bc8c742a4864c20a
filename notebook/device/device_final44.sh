#!/usr/bin/env bash
# This session's final tree (t4's EDGE, retuned): sgemm v14's fidelity rows measured again (it
# includes t4's source), t4's default config captured once more at its fidelity shapes (its shared
# store wavefronts at 1024^3 read 34,226 in tune43's capture, 32,800 before: the hardware count the
# notes saw move between captures), then the GPU suite. Logs in $OUT/final44/.
# Usage: bash scripts/device_trial.sh final44:520
set -u
source scripts/device_step.sh
trials_begin final44 510
TAIL=3 trial fid_v14 45 gpulab fidelity sgemm --variant v14 --shapes both
TAIL=3 trial fid_t4_out 40 gpulab fidelity gemm_bf16 --variant t4 --shapes both --out "$dir/fidelity-t4-again.csv"
gpu_suite 350 55
trials_end
