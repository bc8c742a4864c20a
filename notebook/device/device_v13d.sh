#!/usr/bin/env bash
# The H200 after split_k.cuh's last_to_arrive lost its static __shared__ flag (device_v13b.sh's ncu
# compare: with it, the dynamic cp.async ring of sx and v13 started 16 bytes into a 128-byte line;
# 5/3 the cp.async shared wavefronts of v11's same ring). Logs go to $OUT/v13d/. summary.txt first.
#   tests     GPU tests of every kernel that includes split_k.cuh (v13, sx, gv): test_split_tail_gpu,
#             test_skinny_gpu, and their rows of test_sgemm_gpu
#   ab        v11 (tuned), v13, v13 S=1 (never split), alternating, 3 rounds, 4096^3, 8192^3, 2048^3
#   fidelity  sx's and gv's fidelity rows again on the new source (results/h200/fidelity.csv's runs
#             and tests/fixtures/fidelity_h200_split.csv's): is sx's sector surplus gone?
#   tune      gpulab tune sgemm v13 over BK x S again (the rates of device_v13c.sh had the offset ring)
#   bench     v11, v13 and the best row at the README's best-per-shape shapes, cuBLAS beside
# Usage: source scripts/device_setup.sh && bash notebook/device/device_v13d.sh  (or: bash scripts/device_trial.sh v13d:540)
set -u
source scripts/device_step.sh
trials_begin v13d 530
V11="v11:BM=64,BN=128,BK=16,WM=32,WN=64,WNITER=2,STAGES=2,MINB=1"

trial tests 110 python3 -m pytest -m gpu -q -n 8 -p no:cacheprovider tests/gpu/test_split_tail_gpu.py \
    tests/gpu/test_skinny_gpu.py tests/gpu/test_sgemm_gpu.py -k "v13 or sx or gv or split_tail or skinny"
trial ab 100 python3 notebook/probes/ab_rungs.py sgemm 4096x4096x4096 8192x8192x8192 2048x2048x2048 \
    --run "$V11" --run v13 --run v13:S=1 --rounds 3
trial fid_main 50 gpulab fidelity sgemm -v sx,gv --shape 512x512x512,300x388x196,129x67x33 --out "$dir/fid_main.csv"
trial fid_gv 30 gpulab fidelity sgemm -v gv --shape 1x1531x777,1x2048x1024,3x1000x777 --out "$dir/fid_fixture.csv"
trial fid_gv4 15 gpulab fidelity sgemm -v gv -p BM=4 -p MINB=2 --shape 3x1000x777 --out "$dir/fid_fixture.csv"
trial fid_sx2 15 gpulab fidelity sgemm -v sx -p S=2 --shape 40x100x250 --out "$dir/fid_fixture.csv"
trial tune 60 gpulab tune sgemm v13 -p BM=64 -p BN=128 -p WM=32 -p WN=64 -p WNITER=2 -p STAGES=2 -p MINB=1 -p GROUP_M=8 \
    -p RESIDENT=3 -p BK=8,16 -p S=8,16 --size 1024,2048,4096,4097,8192 --shape 1000x3000x777
trial bench 130 gpulab bench sgemm --variant v11,v13,best --size 512,1024,2048,4000,4096,4097,8192 \
    --shape 1000x3000x777 --shape 4096x64x4096 --shape 64x4096x4096 --shape 1x8192x8192 --shape 8192x1x8192
trials_end
