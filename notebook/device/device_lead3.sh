#!/usr/bin/env bash
# Fidelity rows whose kernels changed since they were measured (v9's header cp_async_ring.cuh, t2/t3's
# hopper.cuh) and the first rows of the split-K models (sk, gv, sx), into results/<gpu>/fidelity.csv.
# Logs in $OUT/lead3/. Usage: bash scripts/device_trial.sh lead3:110
source scripts/device_step.sh
dir=$OUT/lead3; mkdir -p "$dir"
TAIL=30 step fidelity_sgemm 65 gpulab fidelity sgemm --variant v9,sk,gv,sx
TAIL=20 step fidelity_bf16 40 gpulab fidelity gemm_bf16 --variant t2,t3
