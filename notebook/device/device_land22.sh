#!/usr/bin/env bash
# t4 with scale-d = 0 on each unit's first wgmma (no zeroing of the accumulators), as committed: the
# tensor-core and gemm_bf16 GPU tests, t4's fidelity rows for both recorded configs, and the README's
# gemm_bf16 rows again (t4 at SCHEDULE=0 and the best row, every default shape). hopper.cuh is also
# t0-t3's and the wgmma ceiling's source: their SASS is byte-identical before and after
# (scripts/sass_digest.py; the ceiling kernel's disassembly compared), so t2's and t3's fidelity rows
# were re-stamped. Logs in $OUT/land22/. Usage: bash scripts/device_trial.sh land22:420
set -u
source scripts/device_step.sh
trials_begin land22 410
TAIL=4 trial wgmma 70 python3 -m pytest -q -p no:cacheprovider -n 16 -m gpu tests/gpu/test_wgmma_gpu.py
TAIL=4 trial tests 130 python3 -m pytest -q -p no:cacheprovider -n 16 -m "gpu and not exclusive" \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_skinny_gpu.py tests/gpu/test_profile_gpu.py
TAIL=3 trial fidelity 50 gpulab fidelity gemm_bf16 --variant t4 --shapes both
TAIL=3 trial fidelity_cfg 50 gpulab fidelity gemm_bf16 --variant t4 --shapes both \
    -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1
TAIL=14 trial bench_t4 60 gpulab bench gemm_bf16 --variant t4 -p SCHEDULE=0
TAIL=14 trial bench_best 60 gpulab bench gemm_bf16 --variant best
trials_end
