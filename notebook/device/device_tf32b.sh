#!/usr/bin/env bash
# sgemm v14 with FLUSH (t4's consumers add each block of FLUSH k-tiles into FP32 sums with ordinary
# adds): tf32a found v14 without it 3-5x less accurate than cuBLAS FP32 and growing with K (max rel
# err 2.2e-5 at 8192^3: wrong by the check). Here: the split and v14's GPU tests, every FLUSH at
# 4096^3 and 8192^3 (time and max_rel_err beside cuBLAS), v14's tune (configs compiled on every
# core first; the tune saves as it goes and resumes), then v14, v13 and best at the FP32 targets'
# shapes. Logs and CSVs in $OUT/tf32b/.
# Usage: bash scripts/device_trial.sh tf32b:570
set -u
source scripts/device_step.sh
trials_begin tf32b 565
TUNE="-p BN=128,192 -p CLUSTER=1,2 -p SCHEDULE=0,1 -p FLUSH=2,4"
TAIL=6 trial precompile 90 python3 scripts/precompile.py sgemm v14 $TUNE -p FLUSH=1,2,4,8
TAIL=30 trial tests 100 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 \
    tests/gpu/test_tf32_split_gpu.py tests/gpu/test_sgemm_gpu.py -k "split or v14"
TAIL=30 trial flush 80 gpulab bench sgemm --variant v14 -p FLUSH=1,2,4,8 --size 4096,8192 --out "$dir/flush.csv"
TAIL=20 trial tune 200 gpulab tune sgemm v14 $TUNE
TAIL=40 trial bench 100 gpulab bench sgemm --variant v14,v13,best --size 1024,2048,4096,8192 \
    --shape 4000x4000x4000 --shape 4097x4097x4097 --shape 1000x3000x777 --out "$dir/bench.csv"
trials_end
