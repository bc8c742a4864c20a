#!/usr/bin/env bash
# t4 with BN = 192 (m64n192k16): where 256 x 256 cluster tiles leave clusters idle (1000x3000x776: 48
# tiles for 66 clusters; 256 x 192: 64). The tensor-core GPU tests (with BN = 192's exact tests),
# then BN 192 against 256 in alternation with cuBLAS at the few-tile shapes and 2048^3, then a tune
# of t4 over BN 192 and 256 on its five tune shapes (resumed: the BN 256 rows stand), then the bench
# rows there and the gemm_bf16 GPU tests over every tuned config; first, the rest of t0's tune (cut by
# its time limit in device_tune14.sh, resumed from its CSV). Logs go to $OUT/bn192/.
# Usage: bash scripts/device_trial.sh bn192:570
set -u
source scripts/device_step.sh
trials_begin bn192 565
trial tune_t0 60 gpulab tune gemm_bf16 t0 --size 2048,4096
trial tests_wgmma 90 python3 -m pytest -m gpu -q -n 16 -p no:cacheprovider tests/gpu/test_wgmma_gpu.py
TAIL=30 trial ab 150 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x776 1000x3000x777 2048x2048x2048 \
    --run t4 --run t4:BN=192 --run t4:BN=192,CLUSTER=1 --run t4:BN=192,SCHEDULE=1 --rounds 5
trial tune 150 gpulab tune gemm_bf16 t4 -p BN=192,256 -p STAGES=4 -p GROUP_M=8 -p STORE=1 -p PINGPONG=0 \
    --shape 4096x4096x4096 --shape 8192x8192x8192 --shape 4097x4097x4097 --shape 4000x4000x4000 --shape 1000x3000x776
trial bench 60 gpulab bench gemm_bf16 --variant t4,best --shape 1000x3000x776 --shape 1000x3000x777
trial tests_bf16 100 python3 -m pytest -m gpu -q -n 8 -p no:cacheprovider tests/gpu/test_gemm_bf16_gpu.py
trials_end
