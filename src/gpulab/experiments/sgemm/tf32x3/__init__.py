"""v14, 3xTF32: FP32 GEMM on the tensor cores, A and B split into TF32 high and low parts
(tf32_split.py) and summed over three products by gemm_bf16's t4 (wgmma, TMA), held to a third of
the TF32 tensor rate."""

from __future__ import annotations

import dataclasses

from gpulab.experiments.base import Param, Params, Shape, Variant
from gpulab.experiments.gemm_bf16.tma_rungs import T4, t4_constraints, t4_extra_args, t4_launch, t4_model, t4_one_round
from gpulab.experiments.sgemm.tf32x3.tf32_split import PARTS, padded_k, split_bytes, split_tf32


# t4's params less PINGPONG (its two accumulator sets leave no registers for FLUSH's sums), EDGE (its
# dots read BF16, v14's operands are TF32 parts) and BN = 256 (128 accumulators and 128 sums would not
# fit the consumers' 232 registers), plus FLUSH; of BN 128 and 192 and of clusters of one and two,
# those tuned and tested here.
_V14_CHOICES = {"BN": ((128, 192), 192), "CLUSTER": ((1, 2), 2)}
_V14_PARAMS = tuple(Param(p.name, *_V14_CHOICES[p.name], p.help) if p.name in _V14_CHOICES else p
                    for p in T4.params if p.name not in ("PINGPONG", "EDGE")) + (
    Param("FLUSH", (1, 2, 4, 8), 2, "k-tiles (32 TF32 deep) per block the tensor cores sum before an FP32 add"),
)


def _v14_stage(inputs: dict, shape: Shape, params: Params, arch: str):
    """The split into TF32 parts (tf32_split.py), with the GEMM launched behind it where all of t4's
    work starts at once (as gemm_bf16's staged t4)."""
    return split_tf32(inputs, shape, params, arch, dependent_launch=t4_one_round(params, shape))


def _v14_model(params: Params, shape: Shape):
    """t4's access model on what v14's t4 reads: the staged A3 and Bt3, whose rows its tensor maps see
    as 2 x PARTS x KP 16-bit elements (RING_K in v14_tf32x3.cu), so t4's TMA boxes, wgmma and
    epilogue are counted over that K. The split launch before it is another kernel, not counted, as
    gemm_bf16's staging. The work is the problem's 2 M N K FLOPs (v14's ceiling, a third of the TF32
    rate, holds each to its three products); the DRAM floor stays t4's: the staged copies and C."""
    m, n, k = shape["M"], shape["N"], shape["K"]
    staged = Shape(shape.names, (m, n, 2 * PARTS * padded_k(k)))
    return dataclasses.replace(t4_model(params, staged), flops=2.0 * m * n * k)


def _v14_extra_args(inputs: dict, out, shape: Shape, params: Params) -> tuple:
    """t4's: tensor maps of the staged A3 and Bt3 (t4 names B's "Bt"), C's, the stream-K workspace."""
    return t4_extra_args({"A": inputs["A"], "Bt": inputs["B"]}, out, shape, params)


V14 = Variant(
    name="v14",
    file="v14_tf32x3.cu",
    summary="3xTF32: A and B split into TF32 high and low parts, gemm_bf16's t4 (wgmma, TMA) summing three products",
    launch=t4_launch,
    stream_k_param="SCHEDULE",
    params=_V14_PARAMS,
    constraints=t4_constraints,
    min_sm=90,
    min_sm_for="wgmma, setmaxnreg, clusters",
    arch_specific=True,
    extra_args=_v14_extra_args,
    stage=_v14_stage,
    stage_bytes=lambda params, shape: split_bytes(shape),
    access=_v14_model,
    # Three TF32 products per FLOP of the problem: held to a third of the TF32 tensor rate.
    compute_ceiling="tensor_tf32",
    ceiling_ops=PARTS,
)
