#!/usr/bin/env bash
# t4 against cuBLAS BF16 at 4096^3: under ncu t4 ran at 1,571 MHz where cuBLAS ran at 1,591 (the card
# is at its power limit in both), and moved 1,378 MB through L2 where cuBLAS moved 1,144
# (notebook/probes/vendor_kernels.csv). Where does t4's L2 traffic go (L2 sectors by source unit and
# operation, the fabric between the two L2 partitions among them)? And t4's tile order (GROUP_M 4, 8,
# 16: never tuned), alternating with cuBLAS at 4096^3 and 8192^3. Logs go to $OUT/l2/.
# Usage: bash scripts/device_trial.sh l2:200
set -u
source scripts/device_step.sh
trials_begin l2 190
TAIL=6 trial ncu_l2 60 python3 scripts/probe_vendor_kernels.py gemm_bf16 4096x4096x4096 --run t4 \
    --metric lts__t_sectors_srcunit_ltcfabric.sum --metric lts__t_sectors_srcunit_tex.sum \
    --metric lts__t_sectors_srcunit_tex_op_read.sum --metric lts__t_sectors_srcunit_tex_op_write.sum \
    --metric lts__t_sectors_op_read.sum --metric lts__t_sectors_op_write.sum --metric lts__t_sectors.sum
trial group4096 60 python3 notebook/probes/ab_rungs.py gemm_bf16 4096x4096x4096 --rounds 7 --run t4 --run t4:GROUP_M=4 --run t4:GROUP_M=16
trial group8192 60 python3 notebook/probes/ab_rungs.py gemm_bf16 8192x8192x8192 --rounds 3 --run t4 --run t4:GROUP_M=4 --run t4:GROUP_M=16
trials_end
