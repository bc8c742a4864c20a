#!/usr/bin/env bash
# sgemm v14's tune finished over the values tf32b's cut tune found fast (its rows resume here: the
# configs it timed are not timed again), then the bench rows of v14 and the best row at every
# default shape, written to results/h200/sgemm.csv for the README. Logs in $OUT/tf32c/.
# Usage: bash scripts/device_trial.sh tf32c:540
set -u
source scripts/device_step.sh
trials_begin tf32c 535
TUNE="-p BN=128,192 -p STAGES=4,5,6 -p GROUP_M=8 -p CLUSTER=1,2 -p STORE=0,1 -p SCHEDULE=0 -p FLUSH=2,4,8"
TAIL=4 trial precompile 60 python3 scripts/precompile.py sgemm v14 $TUNE
TAIL=20 trial tune 270 gpulab tune sgemm v14 $TUNE
TAIL=40 trial bench 190 gpulab bench sgemm --variant v14,best
trials_end
