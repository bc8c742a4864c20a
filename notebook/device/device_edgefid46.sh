#!/usr/bin/env bash
# t4's edge model (gemm_bf16/access.py _edge_instructions) against Nsight Compute: fidelity rows for
# EDGE=2 where there is an edge: 258x514x72 (two rows and columns, K unstaged), 129x257x65 in clusters
# of one (one of each, K staged) and 4097^3 (the tune's pick there). Logs in $OUT/edgefid46/.
# Usage: bash scripts/device_trial.sh edgefid46:200
set -u
source scripts/device_step.sh
trials_begin edgefid46 190
TAIL=6 trial fid_small 60 gpulab fidelity gemm_bf16 --variant t4 -p EDGE=2 --shape 258x514x72
TAIL=6 trial fid_c1 50 gpulab fidelity gemm_bf16 --variant t4 -p EDGE=2 -p CLUSTER=1 --shape 129x257x65
TAIL=6 trial fid_4097 70 gpulab fidelity gemm_bf16 --variant t4 -p EDGE=2 --shape 4097x4097x4097
trials_end
