#!/usr/bin/env bash
# Tunes that remember which kernel they timed, on the card: the GPU tests of sweeps and of a user's own
# kernels, then a copy of examples/transpose tuned (vec, two shapes), tuned again (everything
# resumed), its vec.cu edited and tuned at one shape (those results timed again; the other shape's
# pick kept and named). Logs in $OUT/tunesrc58/. Usage: bash scripts/device_trial.sh tunesrc58:200
set -u
source scripts/device_step.sh
trials_begin tunesrc58 195
TAIL=6 trial tests 90 python3 -m pytest -q -rfE --tb=short -p no:cacheprovider -n 8 -m gpu \
    tests/gpu/test_sweep_gpu.py tests/gpu/test_own_kernels_gpu.py
demo=$(mktemp -d)
cp -r examples "$demo/"
export GPULAB_PATH=$demo/examples
cd "$demo"
TAIL=16 trial tune_first 30 gpulab tune transpose vec --shape 1000x1532 --shape 333x517
TAIL=16 trial tune_again 30 gpulab tune transpose vec --shape 1000x1532 --shape 333x517
echo "// edited: the same kernel, another source" >>examples/transpose/vec.cu
TAIL=16 trial tune_edited 30 gpulab tune transpose vec --shape 1000x1532
cd - >/dev/null
trials_end
