#!/usr/bin/env bash
# Call 6 (session of 2026-12-04, second): issue 40's calibration rows where the model's picks missed
# on the llm suite (t3 never timed at M <= 16, v12 never below M = 1000, kc and t4 near M = 1024),
# then shapes no suite or calibration has (notebook/probes/unlisted/unlisted.toml, contenders within
# 1.5x beside cuBLAS); issue 42: racecheck with "--launch-count 2" against without it on the cases
# that faulted, and the clustered configs sanitized again with today's command; issue 43: t4 and v14
# tuned exhaustively over a restricted set at one skinny layer shape (128x6144x4096) for the
# bayes-against-random replay. Logs and results come back as call6.tgz.
# Usage (on the card, from the repository root): bash notebook/device/device_call6.sh
set -u
BACK=$OUT
export OUT=/tmp/call6; mkdir -p "$OUT"
source scripts/device_setup.sh || exit 1
source scripts/device_step.sh
trials_begin call6 545
export GPULAB_RUN_TIMEOUT=60
U=notebook/probes/unlisted
TAIL=6 trial calibrate_bf16 70 gpulab bench gemm_bf16 --variant t3,t4,d0,kc --no-sanitize --shape 1x12288x4096 \
    --shape 4x16384x8192 --shape 64x8192x8192 --shape 1024x5120x4096 --shape 512x12288x8192
TAIL=6 trial calibrate_sgemm 70 gpulab bench sgemm --variant v12,v13,sx,v11,gv --no-sanitize --shape 16x12288x4096 \
    --shape 16x5120x5120 --shape 128x5120x5120 --shape 256x12288x4096 --shape 4x16384x8192
TAIL=12 trial unlisted_bf16 50 gpulab bench gemm_bf16 --suite $U/unlisted.toml --contenders 1.5 --no-sanitize \
    --out "$dir/gemm_bf16-unlisted.csv"
TAIL=12 trial unlisted_sgemm 50 gpulab bench sgemm --suite $U/unlisted.toml --contenders 1.3 --no-sanitize \
    --out "$dir/sgemm-unlisted.csv"
TAIL=12 trial racecheck_count 45 python3 notebook/probes/probe_racecheck_filter.py --jobs 10 --timeout 40 \
    --case t4-c2-staged --case t4-c2-plain --case v14-c2 --case kc --way filtered --way count2
TAIL=14 trial sanitize_clusters 60 gpulab sanitize gemm_bf16 sgemm -v t4,v14 -p CLUSTER=2 -j 8 --logs "$dir/logs"
T4="-p BN=128,192,256 -p STAGES=4,6 -p CLUSTER=1,2 -p PINGPONG=0,1 -p SCHEDULE=0,1 -p EDGE=0,2 -p GROUP_M=8 -p STORE=1"
V14="-p BN=128,192 -p STAGES=3,4,6 -p GROUP_M=1,8 -p CLUSTER=1,2 -p SCHEDULE=0,1 -p FLUSH=2,8 -p STORE=1"
TAIL=3 trial precompile 60 bash -c "python3 scripts/precompile.py gemm_bf16 t4 $T4 & python3 scripts/precompile.py sgemm v14 $V14; wait"
TAIL=6 trial tune_t4 90 gpulab tune gemm_bf16 t4 $T4 --shape 128x6144x4096 --strategy grid
TAIL=6 trial tune_v14 120 gpulab tune sgemm v14 $V14 --shape 128x6144x4096 --strategy grid
trials_end
tar czf "$BACK/call6.tgz" -C "$OUT" . -C "$PWD" results/h200 2>/dev/null
exit 0
