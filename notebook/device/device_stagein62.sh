#!/usr/bin/env bash
# t4 STAGING=1, second version: lanes by nines (one register word per 16 bytes in flight, the next
# lane's word by shuffle), 4 row groups in flight at the producer's 72 registers, pieces prefetched
# into L2 two ahead. Its GPU tests, then t4 in alternation with STAGING 0 and 1 at the two staged
# target shapes. Logs in $OUT/stagein62/. Usage: bash scripts/device_trial.sh stagein62:200
# The change is notebook/patches/t4_staging_nines.patch (git apply, on 3eb2822): it was not kept
# (docs/notes/gemm_bf16-notes.md, "The staging copy inside t4").
set -u
source scripts/device_step.sh
trials_begin stagein62 195
TAIL=12 trial tests 80 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k "staging"
TAIL=5 trial ab_777 40 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x777 --rounds 7 \
    --run t4:BN=192,CLUSTER=1,EDGE=2 --run t4:BN=192,CLUSTER=1,EDGE=2,STAGING=1
TAIL=5 trial ab_4097 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 --rounds 5 \
    --run t4:EDGE=2 --run t4:EDGE=2,STAGING=1
trials_end
