#!/usr/bin/env bash
# The staged rungs launched behind their copy only where their work starts in one round (staging.py):
# the GPU tests of the launch path (tensor-core rungs, profiles, faults, timing, own kernels), then
# t2-t4's access models against Nsight Compute again (the kernels gained griddepcontrol.wait, so their
# fidelity rows name an older source), then the README's bench row at 1000x3000x777.
# Logs in $OUT/pdl2/.
# Usage: bash scripts/device_trial.sh pdl2:560
set -u
source scripts/device_step.sh
trials_begin pdl2 555
trial tests 170 python3 -m pytest -m "gpu and not exclusive" -q -n 16 -p no:cacheprovider tests/gpu/test_wgmma_gpu.py \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_profile_gpu.py tests/gpu/test_faults_gpu.py \
    tests/gpu/test_timing_gpu.py tests/gpu/test_own_kernels_gpu.py
TAIL=12 trial fid_defaults 150 gpulab fidelity gemm_bf16 -v t2,t3,t4
TAIL=12 trial fid_bn192 110 gpulab fidelity gemm_bf16 -v t4 -p BN=192 -p CLUSTER=1,2
TAIL=12 trial fid_pingpong 60 gpulab fidelity gemm_bf16 -v t4 -p BN=128 -p STAGES=6 -p STORE=0 -p PINGPONG=1
TAIL=20 trial bench 45 gpulab bench gemm_bf16 --variant t2,t3,t4,best --shape 1000x3000x777
trials_end
