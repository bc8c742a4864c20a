#!/usr/bin/env bash
# t4 with BN=200 and clusters of four, as a param (grid sized by gpulab.gpu.clusters: 30 clusters of
# four on the H200): the new GPU tests (clusters of four beside every consumer schedule, BN=200's
# register-stored last columns, the edge), what the driver says fits, then why the staged
# 1000x3000x777 loses BN=200's gain: pad_k's grid one chunk per thread (1.5 waves) against capped at
# 8 and 4 blocks per SM, and the launch behind the copy against an ordinary one.
# Logs in $OUT/c4_49/. Usage: bash scripts/device_trial.sh c4_49:330
set -u
source scripts/device_step.sh
trials_begin c4_49 320
TAIL=8 trial tests 110 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 16 -m gpu \
    tests/gpu/test_gemm_bf16_gpu.py -k "clusters_of_four or edge_correct or t4-"
TAIL=4 trial occupancy 20 python3 notebook/probes/probe_cluster_occupancy.py 200
RUNS="--run t4:BN=192,CLUSTER=1 --run t4:BN=200,CLUSTER=1 --run t4:BN=192 --run t4:BN=200,CLUSTER=4"
TAIL=7 trial wave_all 40 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x777 $RUNS --rounds 7
TAIL=7 trial wave_8 40 python3 scripts/ab_staging_wave.py 8 gemm_bf16 1000x3000x777 $RUNS --rounds 7
TAIL=7 trial wave_4 40 python3 scripts/ab_staging_wave.py 4 gemm_bf16 1000x3000x777 $RUNS --rounds 7
TAIL=8 trial pdl 40 python3 notebook/probes/ab_pdl.py 1000x3000x777 --run t4:BN=200,CLUSTER=4 --run t4:BN=192,CLUSTER=1 --rounds 7
TAIL=7 trial aligned 30 python3 notebook/probes/ab_rungs.py gemm_bf16 1000x3000x776 $RUNS --rounds 7
trials_end
