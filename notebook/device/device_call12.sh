#!/usr/bin/env bash
# Call 12 (written 2026-12-04, not run: no device was lent after call 10): the whole GPU suite on the
# tree that has the blocked timing and the best-row model's changes since call 10 (no GPU test has
# run on them), then the sgemm llm suite and the shapes of no suite on both GEMMs, timed on that
# model (after device_call11.sh, whose calibration rows the gemm_bf16 picks then read). The model
# changed again in the session after (docs/notes/sgemm-notes.md, "The best-row model on split
# launches"): sgemm's picks at 16 and 128 tokens moved to sx's decode tiles and v13 planned for 3
# blocks an SM, configs call 10 did not time there; this suite times them.
# Usage (on the card, from the repository root): bash notebook/device/device_call12.sh
set -u
source scripts/device_step.sh
call_begin call12 590
gpu_suite 380 60
U=notebook/probes/unlisted
TAIL=6 trial llm_sgemm 110 gpulab bench sgemm --suite llm --contenders 1.3 --no-sanitize  # call 10: done within 110
TAIL=12 trial unlisted_bf16 25 gpulab bench gemm_bf16 --suite $U/unlisted.toml --contenders 1.5 --no-sanitize \
    --out "$dir/gemm_bf16-unlisted.csv"
TAIL=12 trial unlisted_sgemm 25 gpulab bench sgemm --suite $U/unlisted.toml --contenders 1.3 --no-sanitize \
    --out "$dir/sgemm-unlisted.csv"
call_end call12
exit 0
