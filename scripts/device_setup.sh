#!/usr/bin/env bash
# Source on a GPU machine that has CuPy but no package registry (the lent H200): installs this tree
# without touching dependencies and prints the card, so every log starts with where it ran.
# Usage: source scripts/device_setup.sh   (then gpulab ..., python3 -m pytest -m gpu, ...)
export PYTHONUNBUFFERED=1
export OUT=${OUT:-/tmp/gpulab-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-deps --no-build-isolation -e . >"$OUT/install.log" 2>&1 || {
    cat "$OUT/install.log"; return 1 2>/dev/null || exit 1; }
# Nsight Compute's report reader, the gpu extra's ncu_report wheel, where the call carries it (.whl/,
# ignored by git; the card has no registry): without it the install's own reader (2025.3.1) killed
# Python 3.12 in IMetric.unit (calls 14 and 19).
if ls .whl/ncu_report*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-deps --no-index --target /tmp/ncu-report .whl/ncu_report*.whl >>"$OUT/install.log" 2>&1 &&
        export PYTHONPATH=/tmp/ncu-report${PYTHONPATH:+:$PYTHONPATH}
fi
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv | tee "$OUT/gpu.txt"
python3 -c "import cupy, gpulab; print('cupy', cupy.__version__, 'gpulab', gpulab.__version__)"
