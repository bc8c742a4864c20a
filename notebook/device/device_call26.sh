#!/usr/bin/env bash
# call 26 (written 2026-12-05, not run: no device was lent this session): sgemm's 32-wide sx tiles
# for a few columns (BN = 32, WN = 32, WNITER = 1: skinny.policy.SX_NARROW, which the best row now
# runs where N <= 32 < M and nothing is tuned near). No ring kernel of sgemm has run WNITER = 1 on a
# card before: their GPU tests first (random and exact, ragged, N below, at and above one tile; the
# same bits every launch); then the shapes of notebook/probes/narrow/narrow.toml (issue 40's own
# 2049x31x4093 at 0.36x cuBLAS FP32 and 8191x33x8193 at 0.54x, 2048x31x4096 at 0.50x in call 15)
# with the model's pick and its contenders beside cuBLAS; sx tuned over the 32-wide tiles at two of
# them; the shapes again, now with the tune; the tuned 32-wide configs under compute-sanitizer. And
# first, both GEMMs at the shapes issue 40 was filed with (notebook/probes/issue40/issue40.toml),
# none of which was timed again since 2026-12-03.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call26.sh PART
# PART issue40 (about 2.5 min): both GEMMs at issue 40's shapes; PART narrow (about 6 min): the rest.
set -u
source scripts/device_step.sh
part=${1:?say issue40 or narrow}
call_begin "call26-$part" 400
mkdir -p "$dir/narrow" "$dir/issue40"
if [ "$part" = issue40 ]; then
for exp in gemm_bf16 sgemm; do
    TAIL=14 trial "issue40_$exp" 60 gpulab bench "$exp" --suite notebook/probes/issue40/issue40.toml --contenders 1.5 \
        --no-sanitize --out "$dir/issue40/$exp-issue40.csv"
done
else
TAIL=12 trial tests 70 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 8 -m gpu \
    tests/gpu/test_skinny_gpu.py tests/gpu/test_sk_gpu.py -k "narrow or best_row"
TAIL=12 trial narrow_before 45 gpulab bench sgemm --suite notebook/probes/narrow/narrow.toml --contenders 1.5 \
    --no-sanitize --out "$dir/narrow/sgemm-narrow-before.csv"
TAIL=20 trial tune_sx 100 gpulab tune sgemm sx -p BN=32 -p WN=32 -p WNITER=1 -p BM=64,128 -p WM=16,32 \
    -p BK=16,32 -p STAGES=3,4 -p S=4,8,16 --shape 2048x31x4096 --shape 8192x16x4096
TAIL=12 trial narrow_after 60 gpulab bench sgemm --suite notebook/probes/narrow/narrow.toml --contenders 1.5 \
    --no-sanitize --out "$dir/narrow/sgemm-narrow-after.csv"
TAIL=12 trial sanitize 60 gpulab sanitize sgemm -v sx -p BN=32 --tool memcheck,racecheck
fi
call_end "call26-$part"
exit 0
