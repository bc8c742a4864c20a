#!/usr/bin/env bash
# Is the move of t4's smem_store_ideal_wavefronts at 300x388x200 (8,200 -> 8,482, exact before) the
# descriptor change's or the count's own noise (it already read 32,996 against 32,800 at 1024^3)?
# t4's fidelity rows once more with the change, then with the change reversed in place, each file kept.
# Run on 2026-12-01 with the change in the tree, where it now is.
# Usage: bash scripts/device_trial.sh fidnoise:150
set -u
source scripts/device_step.sh
T4=src/gpulab/experiments/gemm_bf16/t4_persistent_cluster.cu
trials_begin fidnoise 140
TAIL=4 trial after 40 gpulab fidelity gemm_bf16 --variant t4 --shapes both
cp results/h200/fidelity.csv "$dir/fidelity-after.csv"
patch -R -s $T4 notebook/patches/t4_desc_tree.patch
TAIL=4 trial before 40 gpulab fidelity gemm_bf16 --variant t4 --shapes both
cp results/h200/fidelity.csv "$dir/fidelity-before.csv"
patch -s $T4 notebook/patches/t4_desc_tree.patch
TAIL=4 trial after2 40 gpulab fidelity gemm_bf16 --variant t4 --shapes both
cp results/h200/fidelity.csv "$dir/fidelity-after2.csv"
trials_end
