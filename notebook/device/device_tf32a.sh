#!/usr/bin/env bash
# sgemm v14 (3xTF32: the split, then gemm_bf16's t4 on wgmma .tf32) on the card for the first time:
# the split bit for bit and v14's results on sgemm's test shapes (random and exact), v14 at its
# defaults beside cuBLAS, its tune over BN, CLUSTER and SCHEDULE on sgemm's tune shapes (saved as
# it goes: a cut tune resumes), then v14, v13 and the best row at the shapes of the FP32 targets,
# cuBLAS beside, each row with its max_rel_err. Logs and CSVs in $OUT/tf32a/.
# Usage: bash scripts/device_trial.sh tf32a:570
set -u
source scripts/device_step.sh
trials_begin tf32a 565
TAIL=30 trial tests 150 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 \
    tests/gpu/test_tf32_split_gpu.py tests/gpu/test_sgemm_gpu.py -k "split or v14"
TAIL=20 trial defaults 60 gpulab bench sgemm --variant v14 --size 4096 --out "$dir/v14-defaults.csv"
TAIL=20 trial tune 240 gpulab tune sgemm v14 -p BN=128,192,256 -p CLUSTER=1,2 -p SCHEDULE=0,1 --workers 14
TAIL=40 trial bench 150 gpulab bench sgemm --variant v14,v13,best --size 1024,2048,4096,8192 \
    --shape 4000x4000x4000 --shape 4097x4097x4097 --shape 1000x3000x777 --out "$dir/bench.csv"
trials_end
