#!/usr/bin/env bash
# device_tunesrc58.sh's tunes again, after resume() kept the rows of shapes a tune does not time:
# a copy of examples/transpose tuned (vec, two shapes), tuned again (everything
# resumed), its vec.cu edited and tuned at one shape (those results timed again; the other shape's
# pick kept and named; its rows kept in the CSV with the source they timed). Logs in $OUT/tunesrc60/. Usage: bash scripts/device_trial.sh tunesrc60:110
set -u
source scripts/device_step.sh
trials_begin tunesrc60 100
demo=$(mktemp -d)
cp -r examples "$demo/"
export GPULAB_PATH=$demo/examples
cd "$demo"
TAIL=16 trial tune_first 30 gpulab tune transpose vec --shape 1000x1532 --shape 333x517
TAIL=16 trial tune_again 30 gpulab tune transpose vec --shape 1000x1532 --shape 333x517
echo "// edited: the same kernel, another source" >>examples/transpose/vec.cu
TAIL=16 trial tune_edited 30 gpulab tune transpose vec --shape 1000x1532
TAIL=14 trial csv 10 python3 -c "
import collections, csv
rows = list(csv.DictReader(open('results/h200/tune-transpose-vec.csv')))
print(collections.Counter((r['shape'], r['source_sha']) for r in rows))"
cd - >/dev/null
trials_end
