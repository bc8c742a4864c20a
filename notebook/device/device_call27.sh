#!/usr/bin/env bash
# call 27 (2026-12-05, an H100; no H200 could be started): sx's 32-wide tiles on a card for the first time
# (238 GPU tests passed, sanitizer clean). What call 26 asks of any card, on this one, under
# results/h100-80gb-hbm3/: the GPU tests of sx's 32-wide tiles and the best row at 2048x31x4096, the
# card's ceilings (none recorded for an H100), both GEMMs at the shapes issue 40 was filed with and
# sgemm at the narrow shapes beside cuBLAS in the same run, sx tuned over its 32-wide tiles at two of
# them, the tuned configs sanitized. Its CSVs: notebook/probes/narrow/call27-h100/.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call27.sh
set -u
source scripts/device_step.sh
call_begin call27 575
TAIL=12 trial tests 70 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 8 -m gpu \
    tests/gpu/test_skinny_gpu.py tests/gpu/test_sk_gpu.py -k "narrow or best_row"
TAIL=20 trial ceilings 150 gpulab ceilings
mkdir -p "$dir/narrow" "$dir/issue40"
for exp in gemm_bf16 sgemm; do
    TAIL=14 trial "issue40_$exp" 60 gpulab bench "$exp" --suite notebook/probes/issue40/issue40.toml --contenders 1.5 \
        --no-sanitize --out "$dir/issue40/$exp-issue40.csv"
done
TAIL=12 trial narrow_before 45 gpulab bench sgemm --suite notebook/probes/narrow/narrow.toml --contenders 1.5 \
    --no-sanitize --out "$dir/narrow/sgemm-narrow-before.csv"
TAIL=20 trial tune_sx 80 gpulab tune sgemm sx -p BN=32 -p WN=32 -p WNITER=1 -p BM=64,128 -p WM=16,32 \
    -p BK=16,32 -p STAGES=3,4 -p S=4,8,16 --shape 2048x31x4096 --shape 8192x16x4096
TAIL=12 trial sanitize 50 gpulab sanitize sgemm -v sx -p BN=32 --tool memcheck,racecheck
call_end call27
exit 0
