#!/usr/bin/env bash
# Record Nsight Compute's raw CSV (every metric of --set full) for one SGEMM launch per variant, as
# real fixtures for the CSV parser. Usage: scripts/capture_ncu_raw.sh OUTDIR
set -euo pipefail
outdir=${1:?usage: capture_ncu_raw.sh OUTDIR}
mkdir -p "$outdir"
for v in "v0 BLOCK=16" "v1 TILE=16"; do
    set -- $v
    ncu --csv --page raw --print-units base --clock-control none --set full \
        --kernel-name sgemm --launch-skip 1 --launch-count 1 \
        python3 -c "
from gpulab.experiments import get_experiment
from gpulab.lab import Lab, RunSpec
e = get_experiment('sgemm'); v = e.variant('$1')
spec = RunSpec(e, v, {'${2%%=*}': ${2##*=}}, e.shape(512, 512, 512))
lab = Lab(); lab.verify(spec); lab.verify(spec)
print('profiled', spec.label)
" >"$outdir/sgemm_$1_512_full_raw.csv"
done
