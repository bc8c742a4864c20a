#!/usr/bin/env bash
# t4's access model at BN = 192 against Nsight Compute: gpulab fidelity at both of its shapes, with
# clusters of two (the pick at 1000x3000x776) and of one (at 1000x3000x777). Logs in $OUT/fid192/.
# Usage: bash scripts/device_trial.sh fid192:200
set -u
source scripts/device_step.sh
trials_begin fid192 190
TAIL=30 trial fidelity 90 gpulab fidelity gemm_bf16 --variant t4 --shapes both -p BN=192
TAIL=30 trial fidelity_c1 90 gpulab fidelity gemm_bf16 --variant t4 --shapes both -p BN=192 -p CLUSTER=1
trials_end
