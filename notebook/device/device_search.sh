#!/usr/bin/env bash
# gpulab tune --strategy bayes, live on the card (issue 43 item 2): t4 at the ragged shape
# 1000x3000x776 with a budget of 8 configs (3 random, then TPE one at a time), then the same
# command with a budget of 12: the 8 rows are told to the search before it asks, and only 4 new
# configs are timed. Then the CSV is checked: 12 distinct configs, none the constraints reject, none
# left unfinished, and the best against the best the committed tune recorded at this shape.
# It runs in a fresh folder: the committed results/h200/tune-gemm_bf16-t4.csv already holds 44
# configs at this shape, which a tune there would resume (the budget counts them) and time nothing.
# optuna is not on the H200: its wheels travel in .whl/ (carry [".whl"]); see docs/tuning.md.
# Expected: ~60 s, ~30 s, ~5 s (each config compiles in a few seconds; one shape times in ~1 s).
# Logs in $OUT/search/. Usage: bash scripts/device_trial.sh search:180
set -u
root=$PWD
ls .whl/optuna-*.whl >/dev/null 2>&1 || { echo "no .whl/optuna-*.whl: carry .whl (docs/tuning.md lists the wheels)"; exit 1; }
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH} || exit 1
export GPULAB_RUN_TIMEOUT=60  # a config that hangs costs its row, not the step (a run takes ~1 s here)
source scripts/device_step.sh
trials_begin search 175
python3 -c "import optuna; print('optuna', optuna.__version__)" | tee "$dir/optuna.txt"
demo=$(mktemp -d)
cd "$demo"
TAIL=18 trial bayes_8 95 gpulab tune gemm_bf16 t4 --strategy bayes --budget 8 --shape 1000x3000x776 --seed 1
TAIL=18 trial bayes_12 55 gpulab tune gemm_bf16 t4 --strategy bayes --budget 12 --shape 1000x3000x776 --seed 1
TAIL=12 trial csv 15 python3 -c "
import json
from gpulab.experiments import get_experiment
from gpulab.jobs import replay
from gpulab.params import parse_params_label
from gpulab.records import read_csv
v = get_experiment('gemm_bf16').variant('t4')
rows = read_csv('results/h200/tune-gemm_bf16-t4.csv')
configs = {r['params'] for r in rows}
rejected = [p for p in configs if v.constraints(parse_params_label(p), None)]
unfinished = [r['params'] for r in rows if str(r.get('skip_reason') or '').startswith('did not finish')]
ok = [r for r in rows if r.get('correct') and r.get('gflops')]
best = max(ok, key=lambda r: r['gflops'])
recorded = replay.recorded('$root/results/h200/tune-gemm_bf16-t4.csv', ['1000x3000x776'])
print(len(rows), 'rows,', len(configs), 'configs,', len(ok), 'ran correctly; rejected by constraints:', rejected,
      '; unfinished:', unfinished)
print('best', best['params'], round(best['gflops']), 'GFLOP/s =', round(100 * best['gflops'] / recorded.best, 1),
      '% of the committed tune best', round(recorded.best), '(', recorded.dates[1], ', 44 configs)')
print('tuned.json:', json.load(open('results/h200/tuned.json'))['gemm_bf16']['t4']['by_shape'])
assert len(rows) == len(configs) == 12 and not rejected and not unfinished
"
cp results/h200/tune-gemm_bf16-t4.csv "$dir/" 2>/dev/null
cd "$root"
trials_end
