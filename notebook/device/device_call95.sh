#!/usr/bin/env bash
# call 95 (2026-12-07, fourteenth session; not run): since 3d7e7fc (gv's passes
# over B that the L2 cannot keep counted as DRAM bytes, now gemm_common.passes_past_l2). That
# moved 23 of 538 recorded picks (both cards), nearly all to gv, and nearly all untimed: the moved
# shapes' best row (on a card other than an H200 as a fresh one, fresh_card, the H200's runs lent,
# as the picks were judged) beside sx and gv in their defaults and cuBLAS.
# Usage (on the card, from the repository root, carry [".whl"]): [BUDGET=S] bash notebook/device/device_call95.sh
set -u
source scripts/device_step.sh
call_begin "call95" 200
grep -q H200 "$OUT/gpu.txt" || fresh_card "call95" notebook/probes/alone-h100/ceilings.csv
MOVED=1x31x1000,3x2000x1000,3x2304x768,4x16384x2048,4x16384x8192,4x37888x3584,7x5120x3072,12x4800x1600,257x131x77,300x31x1000,300x31x2048,1x8192x8192
TAIL=40 trial gv_moved 180 gpulab bench sgemm -v best,gv,sx,cublas --shape $MOVED --no-sanitize --out "$OUT/gv-moved.csv"
rm -rf results/*/reports
call_end "call95"
