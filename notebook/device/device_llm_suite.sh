#!/usr/bin/env bash
# Issue 40: gpulab's best row on the llm suite (Llama-3 linear layers, src/gpulab/suites/llm.toml),
# first run on the card, and the figure of how often the model's pick was within 5% of the fastest
# kernel timed beside it (gpulab.report.picks).
#
# What runs: with PART=8b, tests/gpu/test_suite_gpu.py (~20 s: a 6-shape suite of its own benched with
# the best row on both GEMMs, every row with the suite's columns, every best row correct with its
# chosen_by);
# then `gpulab bench EXP --suite llm --contenders F`: at each shape the best row (the pick,
# made before anything is timed there), cuBLAS, and the variants the model puts within F of its
# pick's modelled time (`gpulab best EXP --suite llm` shows them): the rungs that can win. sgemm's
# naive rungs (v0-v8, seconds a row at 8192x57344x8192) are never within 1.25 of the pick there, and
# neither is any kernel the model expects over F times slower. The figure is thus against the
# fastest of those, not of every variant.
#
# The time is the inputs': each row draws fresh random inputs on the host twice (the check's and the
# timing's), ~13 ns per element (the 16x57344x8192 rows took ~6 s each, device_bf16_small.sh), so
# the whole suite does not fit one call: PART picks a half.
#   PART=8b (default): Llama-3-8B's 4 layers x 5 M, both experiments, F = 1.25:
#       gemm_bf16 ~92 rows (~85 s of inputs, ~30 s timing), sgemm ~70 rows (~57 s, ~25 s): ~230 s
#       with the tests and the picks (~5 s each)
#   PART=70b_bf16 / PART=70b_sgemm: Llama-3-70B's, one experiment each, F = 1.1: ~240 s each
# Each PART writes a suite named llm of its layers (the built-in's entries, filtered), so the rows
# land in results/h200/<experiment>-llm.csv, beside the other parts'.
# Each step's limit: tests 35 s, picks 15 s each, bench gemm_bf16 125 s, sgemm 95 s, the figure 10 s;
# a bench cut short keeps every row it finished (the CSV is written after each run).
# Usage: PART=8b bash scripts/device_trial.sh llm_suite:300
set -u
source scripts/device_step.sh
trials_begin llm_suite 290
PART=${PART:-8b}
case "$PART" in
    8b) prefix="Llama-3-8B"; exps="gemm_bf16 sgemm"; within=1.25 ;;
    70b_bf16) prefix="Llama-3-70B"; exps="gemm_bf16"; within=1.1 ;;
    70b_sgemm) prefix="Llama-3-70B"; exps="sgemm"; within=1.1 ;;
    *) echo "PART=$PART: choose 8b, 70b_bf16 or 70b_sgemm"; exit 2 ;;
esac
[ "$PART" = 8b ] && TAIL=8 trial tests 35 python3 -m pytest -q -rfE -p no:cacheprovider tests/gpu/test_suite_gpu.py
suite="$dir/llm-$PART.toml"
python3 - "$prefix" "$suite" <<'PY'
import sys
from gpulab.experiments import suites
prefix, out = sys.argv[1], sys.argv[2]
llm = suites.load("llm")
lines = ["[suite]", 'name = "llm"', f'title = "{llm.title}"', 'experiments = ["gemm_bf16", "sgemm"]', ""]
for entry in llm.entries:
    if str(entry.columns.get("layer", "")).startswith(prefix + " "):
        lines += ["[[shape]]", *(f'{k} = "{v}"' for k, v in entry.columns.items()),
                  *(f"{d} = {list(v)}" for d, v in entry.dims.items()), ""]
open(out, "w").write("\n".join(lines))
PY
for exp in $exps; do
    TAIL=3 trial "picks_$exp" 15 gpulab best "$exp" --suite "$suite" --csv "$dir/picks-$exp.csv"
    secs=$([ "$exp" = gemm_bf16 ] && echo 125 || echo 95)
    TAIL=12 trial "bench_$exp" "$secs" gpulab bench "$exp" --suite "$suite" --contenders "$within"
    cp "results/h200/$exp-llm.csv" "$dir/" 2>/dev/null
done
TAIL=40 trial figure 10 python3 -c 'import sys; from gpulab.report.picks import summary; print(summary(sys.argv[1:]))' \
    $(for exp in $exps; do echo "results/h200/$exp-llm.csv"; done)
trials_end
