#!/usr/bin/env bash
# The staging copy's pitch rounded up to 128 bytes (gemm_bf16.staging: K = 4097 read at a pitch of
# 4160, not 4104) and t4's edge stepping by the row pitch the host passes: the GPU tests at the staged
# and edge shapes, the new pitch against the old (notebook/probes/ab_pitch.py 8) at 4097^3 and 1000x3000x777,
# the fidelity rows whose operands or kernel changed (the staged 131x67x37 for t2, t3 and t4's five
# configs; the edge configs), then the bench rows the README quotes there.
# Logs in $OUT/pitch53/. Usage: bash scripts/device_trial.sh pitch53:370
set -u
source scripts/device_step.sh
trials_begin pitch53 365
TAIL=6 trial tests 110 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py tests/gpu/test_wgmma_gpu.py -k "777 or 4097 or 65 or 37 or edge or four"
RUNS="--run t4:EDGE=2 --run t4:BN=192,CLUSTER=1 --run t4:BN=200,CLUSTER=4"
TAIL=8 trial ab_new 30 python3 notebook/probes/ab_rungs.py gemm_bf16 4097x4097x4097 1000x3000x777 $RUNS --rounds 3
TAIL=8 trial ab_old 30 python3 notebook/probes/ab_pitch.py 8 gemm_bf16 4097x4097x4097 1000x3000x777 $RUNS --rounds 3
F="gpulab fidelity gemm_bf16"
TAIL=2 trial fid_t23 25 $F --variant t2,t3 --shape 131x67x37
TAIL=2 trial fid_t4 16 $F --variant t4 --shape 131x67x37
TAIL=2 trial fid_c1 16 $F --variant t4 -p BN=192 -p CLUSTER=1 --shape 131x67x37
TAIL=2 trial fid_192 16 $F --variant t4 -p BN=192 --shape 131x67x37
TAIL=2 trial fid_pp 16 $F --variant t4 -p STORE=0 -p BN=128 -p STAGES=6 -p PINGPONG=1 --shape 131x67x37
TAIL=2 trial fid_c4 16 $F --variant t4 -p BN=200 -p CLUSTER=4 --shape 131x67x37
TAIL=2 trial fid_e_small 16 $F --variant t4 -p EDGE=2 --shape 258x514x72
TAIL=2 trial fid_e_c1 16 $F --variant t4 -p EDGE=2 -p CLUSTER=1 --shape 129x257x65
TAIL=2 trial fid_e_4097 45 $F --variant t4 -p EDGE=2 --shape 4097x4097x4097
TAIL=8 trial bench 25 gpulab bench gemm_bf16 --variant t4,best --shape 4097x4097x4097 --shape 1000x3000x777
trials_end
