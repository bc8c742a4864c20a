#!/usr/bin/env bash
# call 22 (2026-12-05): ks's fixed cost at the small decode layers (~3.5 us over cuBLAS's in call 21's
# fit). The fixup's tail after the stream: one acquire-release ticket where a __threadfence and a
# relaxed atomicAdd took two trips, the partials loaded several at a time (probes/ks/ks_fixup.patch),
# timed against the kernel before in interleaved rounds (the change is kept for the rest of the call
# only where it was faster more often than slower); empty kernels with 0-200 KiB of shared memory (does
# the carve-out cost at launch?); compute-sanitizer on the changed kernel; d0 tuned at the smaller
# decode layers (probes/ks/decode_small.toml) so the card decides between d0 and ks; t4 tuned at the
# two 1024-token layers where its best row ran 0.79 and 0.94x cuBLAS (never tuned at M = 1024); then
# the llm suite on gemm_bf16.
# Usage (on the card, from the repository root): bash notebook/device/device_call22.sh
set -u
source scripts/device_step.sh
call_begin call22 570
P=notebook/probes/ks
KS=src/gpulab/experiments/gemm_bf16/ks_stream_k_swap.cu
patch -R -s -o /tmp/ks_before.cu $KS $P/ks_fixup.patch
TAIL=30 trial fixed_cost 110 python3 $P/fixed_cost.py /tmp/ks_before.cu "$dir/fixed-cost.csv"
python3 - "$dir/fixed-cost.csv" <<'PY' || { echo "ks: the change lost, the kernel before restored"; cp /tmp/ks_before.cu $KS; }
import csv, sys
words = [r["verdict"] for r in csv.DictReader(open(sys.argv[1])) if r.get("verdict")]
print("ks after/before:", words)
sys.exit(0 if words.count("faster") >= words.count("slower") and words else 1)
PY
TAIL=12 trial sanitize_ks 50 gpulab sanitize gemm_bf16 -v ks -j 8
TAIL=30 trial tune_d0 140 gpulab tune gemm_bf16 d0 -p G=1,2 -p U=2,4 -p KW=4,8 -p S=0 -p MINB=1,2 -p DEPTH=1 \
    --suite $P/decode_small.toml
TAIL=20 trial tune_t4 50 gpulab tune gemm_bf16 t4 -p BN=128,256 -p CLUSTER=1,2 -p SCHEDULE=0,1 -p STAGES=4 \
    -p GROUP_M=8 -p STORE=1 -p PINGPONG=0 -p EDGE=0 --shape 1024x6144x4096 --shape 1024x8192x8192
TAIL=8 trial llm_bf16 165 gpulab bench gemm_bf16 --suite llm --contenders 1.5 --no-sanitize
call_end call22
exit 0
