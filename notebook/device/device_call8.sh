#!/usr/bin/env bash
# Call 8 (session of 2026-12-04, second): issue 42 section 2, the counts at ragged K measured again
# (fidelity of t1, t4 and v14 at 1536x2560x1000; notebook/probes/probe_ragged_counts.py's TMA bytes
# and t1 sectors), profiles read through the ncu-report wheel carried in .whl/; then issue 40's llm
# suite on both GEMMs with today's model (the calibration rows of call 6 in results/h200), so the
# picks are timed where the model now makes them. Logs and results come back as call8.tgz.
# Usage (on the card, from the repository root, carry [".whl"]): bash notebook/device/device_call8.sh
set -u
BACK=$OUT
export OUT=/tmp/call8; mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-index --target /tmp/site .whl/ncu_report*.whl && export PYTHONPATH=/tmp/site
source scripts/device_setup.sh || exit 1
source scripts/device_step.sh
trials_begin call8 470
TAIL=14 trial fid_bf16 70 gpulab fidelity gemm_bf16 -v t1,t4 --shape 1536x2560x1000 --out "$dir/fid.csv"
TAIL=12 trial fid_v14 40 gpulab fidelity sgemm -v v14 --shape 1536x2560x1000 --out "$dir/fid.csv"
TAIL=4 trial tma 50 python3 notebook/probes/probe_ragged_counts.py --set tma --csv "$dir/tma.csv"
TAIL=4 trial t1 25 python3 notebook/probes/probe_ragged_counts.py --set t1 --csv "$dir/t1.csv"
TAIL=6 trial llm_bf16 150 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
TAIL=6 trial llm_sgemm 110 gpulab bench sgemm --suite llm --contenders 1.3 --no-sanitize
trials_end
tar czf "$BACK/call8.tgz" -C "$OUT" . -C "$PWD" results/h200 2>/dev/null
exit 0
