#!/usr/bin/env bash
# The session's last call: the GPU tests of gpulab profile (the --sass-csv stall columns among them),
# and the record behind the README's BF16 "what cuBLAS runs" paragraph: scripts/probe_vendor_kernels.py
# for gemm_bf16 at 4096^3 and 8192^3 beside t4, with L2 sectors by source unit and operation (the
# fabric between the two L2 partitions among them), into notebook/probes/vendor_kernels.csv.
# Logs go to $OUT/final9/.
# Usage: bash scripts/device_trial.sh final9:200
set -u
source scripts/device_step.sh
trials_begin final9 190
trial tests 90 python3 -m pytest -m gpu -q -p no:cacheprovider tests/gpu/test_profile_gpu.py
TAIL=6 trial bf16 80 python3 scripts/probe_vendor_kernels.py gemm_bf16 4096x4096x4096 8192x8192x8192 --run t4 \
    --csv notebook/probes/vendor_kernels.csv \
    --metric lts__t_sectors_srcunit_ltcfabric.sum --metric lts__t_sectors_srcunit_tex_op_read.sum \
    --metric lts__t_sectors_srcunit_tex_op_write.sum --metric lts__t_sectors.sum
cp notebook/probes/vendor_kernels.csv "$dir/" 2>/dev/null
trials_end
