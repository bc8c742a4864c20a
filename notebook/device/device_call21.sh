#!/usr/bin/env bash
# call 21 (2026-12-05): at 128 tokens call 18's tune of ks made ks 'tuned here' where kc and t4 ran
# 1.2-1.25x faster in the same suite run (128x8192x8192, 128x8192x28672, 128x10240x8192: a tune of
# one variant says which of its configs is best, not which variant is). kc and t4 tuned at the same
# shapes (probes/ks/m128.toml) so the card decides among them, then the llm suite on gemm_bf16 again.
# Measured: kc tuned at the 8 shapes (BN 128 and 256, SPLIT 2-4, GROUP_M searched too); t4's tune cut short at
# 60 s (its rows kept, no pick saved); the llm
# suite: best row 0.79-1.06x cuBLAS BF16 (geomean 0.95), picks within 5% at 36 of 40.
# Usage (on the card, from the repository root): bash notebook/device/device_call21.sh
set -u
source scripts/device_step.sh
call_begin call21 285
P=notebook/probes/ks
TAIL=20 trial tune_kc 65 gpulab tune gemm_bf16 kc -p BN=128,256 -p SPLIT=2,3,4 -p STAGES=4 --suite $P/m128.toml
TAIL=20 trial tune_t4 60 gpulab tune gemm_bf16 t4 -p BN=128,256 -p CLUSTER=1 -p SCHEDULE=0,1 --suite $P/m128.toml
TAIL=8 trial llm_bf16 150 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
call_end call21
exit 0
