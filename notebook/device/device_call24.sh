#!/usr/bin/env bash
# call 24 (written 2026-12-05, not run: no device was lent after call 23): the llm shapes still under
# target after call 22, tuned where a tune has not
# looked: d0 over its k slices and warps at 16x4096x14336 and 16x8192x8192 (0.89x and 0.94x cuBLAS
# BF16), kc over its tile width, split and ring depth at 128x4096x14336 and 128x6144x4096 (0.89x,
# 0.82x; its 128 x 128 tiles split two ways fill 96 of 132 SMs there), ks's counters at 128x6144x4096
# in TN = 128 (29.3 us against cuBLAS's 18.2 in call 21), t4 over
# its tile width, clusters and schedule at 1024x6144x4096 (0.946x). Then the llm suite on gemm_bf16
# with notebook/patches/best_alike_configs.patch applied (a variant's configs the model times alike
# count once among the three it evaluates: t4 in SCHEDULE=1 becomes the pick at 1024x10240x8192, where
# kc ran 0.875x cuBLAS in call 22, and at four shapes no card has timed it at; keep the patch, and
# drop the strict xfail in tests/test_best.py, only if those rows hold up), the few-tile kernels'
# access models against Nsight Compute (d0, kc and ks had no
# fidelity rows), the shapes of no list, and the GPU tests changed since call 23 (the profile tests'
# reports under tmp, the ceilings test that found a negative interval), results/ checked unchanged.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call24.sh PART
# PART tunes (about 4 min): the tunes and ks's counters; PART rest (about 6.5 min, on a tree holding
# the tunes' results): the rest. Two calls, since lent machines were taken back mid-call (2026-12-05).
set -u
source scripts/device_step.sh
part=${1:?say tunes or rest}
call_begin "call24-$part" 400
if [ "$part" = tunes ]; then
TAIL=20 trial tune_d0 45 gpulab tune gemm_bf16 d0 -p G=1 -p U=4 -p KW=4,8,16 -p S=0,2,3,4 -p MINB=1,2 -p DEPTH=1 \
    --shape 16x4096x14336 --shape 16x8192x8192
TAIL=20 trial tune_kc 65 gpulab tune gemm_bf16 kc -p BN=64,128,192 -p SPLIT=2,3,4 -p STAGES=4,6 -p GROUP_M=4,8 \
    --shape 128x4096x14336 --shape 128x6144x4096
# ks in TN = 128 ran 29.3 us at 128x6144x4096 against cuBLAS's 18.2 (call 21): its counters, to see why
TAIL=25 trial profile_ks 30 gpulab profile gemm_bf16 ks -p TN=128 -p STAGES=6 -p BPS=1 --shape 128x6144x4096 \
    --csv "$dir/ks-profile.csv"
TAIL=20 trial tune_t4 35 gpulab tune gemm_bf16 t4 -p BN=128,192,256 -p CLUSTER=1,2 -p SCHEDULE=0,1 -p STAGES=4,6 \
    -p GROUP_M=8 -p STORE=1 -p PINGPONG=0 -p EDGE=0 --shape 1024x6144x4096
else
patch -s -p1 <notebook/patches/best_alike_configs.patch  # as it ran; the patch is in the tree since (2026-12-05) and gone
TAIL=8 trial llm_bf16 160 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
TAIL=25 trial fidelity 75 gpulab fidelity gemm_bf16 -v d0,kc,ks --shape 16x4096x4096,13x1000x776
mkdir -p "$dir/unlisted"
TAIL=12 trial unlisted_bf16 40 gpulab bench gemm_bf16 --suite notebook/probes/unlisted/unlisted.toml --contenders 1.5 \
    --no-sanitize --out "$dir/unlisted/gemm_bf16-unlisted.csv"
find results -type f | sort | xargs md5sum >"$dir/results-before.md5"
TAIL=12 trial tests 90 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 8 -m gpu \
    tests/gpu/test_profile_gpu.py tests/gpu/test_memory_experiments_gpu.py -k "profile or ceilings"
find results -type f | sort | xargs md5sum >"$dir/results-after.md5"
TAIL=5 trial results_unchanged 5 diff "$dir/results-before.md5" "$dir/results-after.md5"
fi
rm -rf results/h200/reports  # the captures (git ignores them) stay on the card
call_end "call24-$part"
exit 0
