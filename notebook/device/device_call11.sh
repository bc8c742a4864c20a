#!/usr/bin/env bash
# Call 11 (session of 2026-12-04, third): issue 41's timing in blocks (each block on buffers placed
# anew, the interval widened by the spread between blocks): the timing GPU tests, one bench twice
# (each median against the other's interval), and the cost against the code before it (.old/src,
# carried); then issue 40: calibration rows for gemm_bf16 on a grid of decode and prefill shapes no
# suite has (M = 2, 8, 32, 64, 256 by four weight shapes), and the llm suite timed on the model they
# calibrate (the rule-1 change: a one-variant tune yields where the model expects a rival well ahead).
# Not run on 2026-12-04 (no device was lent after call 10). .old/src is the code before blocks:
#   rm -rf .old && mkdir .old && git archive 37fffb1 src | tar -x -C .old
# Usage (on the card, from the repository root, carry [".old"]): bash notebook/device/device_call11.sh
set -u
source scripts/device_step.sh
call_begin call11 540
TAIL=12 trial tests 80 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -m gpu tests/gpu/test_timing_gpu.py
mkdir -p "$dir/twice"
TAIL=12 trial twice 60 bash -c "TIMEFORMAT='bench wall time: %R s'; for i in 1 2; do { time gpulab bench sgemm --size 2048 \
    --no-sanitize --out $dir/twice/twice_\$i.csv >$dir/twice/twice_\$i.log 2>&1 || exit 1; } 2>&1; done; \
    python3 notebook/device/device_timing_summary.py twice $dir/twice"
TAIL=3 trial old_bench 30 bash -c "TIMEFORMAT='old bench wall time: %R s'; time env PYTHONPATH=.old/src python3 -m gpulab.cli \
    bench sgemm --size 2048 --no-sanitize --out $dir/old_bench.csv"
TAIL=6 trial calibrate_bf16 150 gpulab bench gemm_bf16 --variant t3,t4,d0,kc --no-sanitize --shape 2x5120x5120 --shape 2x16384x8192 --shape 2x24576x6144 --shape 2x12288x12288 --shape 8x5120x5120 --shape 8x16384x8192 --shape 8x24576x6144 --shape 8x12288x12288 --shape 32x5120x5120 --shape 32x16384x8192 --shape 32x24576x6144 --shape 32x12288x12288 --shape 64x5120x5120 --shape 64x16384x8192 --shape 64x24576x6144 --shape 64x12288x12288 --shape 256x5120x5120 --shape 256x16384x8192 --shape 256x24576x6144 --shape 256x12288x12288
TAIL=6 trial llm_bf16 150 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
TAIL=20 trial llm_figure 15 python3 -c 'import sys; from gpulab.report.picks import summary; print(summary(sys.argv[1:]))' \
    results/h200/gemm_bf16-llm.csv
call_end call11
exit 0
