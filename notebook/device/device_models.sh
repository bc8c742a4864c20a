#!/usr/bin/env bash
# The H200 trial of the access models of sgemm's few-tile kernels: sk (sliced K), gv (GEMV rows,
# split K, ordered fixup) and sx (v9's ring split K across blocks, ordered fixup). `gpulab fidelity`
# profiles each run once under Nsight Compute (after checking its answer on random inputs: a wrong
# kernel is an error row) and compares every counted quantity with the model's prediction. One
# script, <= 140 s, every step under a timeout, going on past a failing step. Logs and CSVs go to
# $OUT/models/ (never results/): fidelity.csv (one row per run and quantity), quantities.txt (every
# row: predicted, measured, verdict). The last lines of trial.log (the summary step) say per run how
# many counted quantities were exact and list each one that differs, predicted -> measured.
#   sx        default (S=4) at 512^3 (float4 path, whole tiles), 300x388x196 (float4, ragged, edge
#             blocks moved inward), 129x67x33 (scalar path); S=2 at 40x100x250 (M < BM: the checked path)
#   gv        default (BM=1, S=16) at 1x2048x1024 (float4), 3x1000x777 (M=3: three block-rows, ragged
#             K slices), 1x1531x777 (scalar path, ragged N); BM=4 MINB=2 at 3x1000x777 (a row past M)
#   sk        default (KS=2) at 64x256x256 and 17x65x33 (ragged everywhere); the "one row" config
#             (BM=1 BN=32 BK=64 KS=8) at 1x1531x777; BN == TN = 4, KS=4 (LDS.128 / STS.128) at 33x20x100
# What a failure means: "error: ... wrong answer" = the kernel (the `#pragma unroll 1` edits) is
# wrong; a quantity that differs = the model miscounts it (the note says more; a gmem_load_* off by
# a few requests per tile in gv/sx would be CCTL.IVALL or the atomic being counted as loads, which
# the model assumes they are not).
# Usage: source scripts/device_setup.sh && bash notebook/device/device_models.sh  (or: bash scripts/device_trial.sh models)
set -u
OUT=${OUT:-/tmp/gpulab-out}
dir=$OUT/models; mkdir -p "$dir"
: >"$dir/summary.txt"
source scripts/device_step.sh  # step / trial NAME SECONDS COMMAND...
BUDGET=140  # seconds for the whole script: each step's limit is cut to what is left
FAILED=""
CSV=$dir/fidelity.csv
FID="gpulab fidelity sgemm --out $CSV"

TAIL=6 trial sx 40 $FID -v sx --shape 512x512x512,300x388x196,129x67x33
TAIL=6 trial gv 30 $FID -v gv --shape 1x2048x1024,3x1000x777,1x1531x777
TAIL=6 trial sk 25 $FID -v sk --shape 64x256x256,17x65x33
TAIL=4 trial sx_s2 12 $FID -v sx -p S=2 --shape 40x100x250
TAIL=4 trial gv_bm4 12 $FID -v gv -p BM=4 -p MINB=2 --shape 3x1000x777
TAIL=4 trial sk_row 12 $FID -v sk -p BM=1 -p BN=32 -p BK=64 -p TM=1 -p TN=1 -p KS=8 --shape 1x1531x777
TAIL=4 trial sk_vec 12 $FID -v sk -p BM=16 -p BN=4 -p TM=1 -p TN=4 -p KS=4 --shape 33x20x100

# Per run: counted quantities exact of judged, each one that differs; every row into quantities.txt.
TAIL=30 trial summary 10 python3 - "$CSV" "$dir/quantities.txt" <<'PY'
import csv, sys
from gpulab import quantities as Q
rows = list(csv.DictReader(open(sys.argv[1])))
counted = set(Q.held_exactly())
with open(sys.argv[2], "w") as f:
    for r in rows:
        f.write(f"{r['variant']} {r['params']} {r['shape']} {r['quantity']}: predicted {r['predicted']} "
                f"measured {r['measured']} {r['verdict']} {r['note']}\n")
runs = {}
for r in rows:
    runs.setdefault((r["variant"], r["params"], r["shape"]), []).append(r)
for (v, params, shape), rs in runs.items():
    judged = [r for r in rs if r["quantity"] in counted and r["verdict"] in ("exact", "differs")]
    bad = [r for r in rs if r["verdict"] in ("differs", "error")]
    print(f"{v} {shape} [{params}]: {sum(r['verdict'] == 'exact' for r in judged)}/{len(judged)} exact"
          + "".join(f"\n    {r['quantity']}: {r['predicted']} -> {r['measured']} {r['note'][:90]}" for r in bad))
PY
echo "failed steps:${FAILED:- none}"
