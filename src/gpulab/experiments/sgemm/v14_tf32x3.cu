// v14 3xTF32 on the tensor cores: FP32 A and B split into TF32 high and low parts, and gemm_bf16's
// t4 (wgmma, TMA, clusters, persistent) summing three of their products.
//
// Changed from v13: the instruction that does the work. v13's FFMAs run at the FP32 rate of the CUDA
// cores (H200: 128 a cycle per SM, ~67 TFLOP/s at 1.98 GHz), and v9-v13 reached 92-99.5% of cuBLAS
// FP32 on squares without passing it: both sit near that rate. Hopper's tensor cores take TF32
// operands (FP32's 8-bit exponent, 10 stored mantissa bits) at half their BF16 rate, ~490 dense
// TFLOP/s on the datasheet. One TF32 product alone is too coarse for FP32 (relative error ~2^-11 per
// operand: the check's 2e-5 rejects it), but x = hi + lo with hi = tf32(x) and lo = tf32(x - hi)
// holds x to ~2^-22, and x y = hi_x hi_y + hi_x lo_y + lo_x hi_y + lo_x lo_y, whose last term is below
// 2^-22 of |x y|. So three TF32 products give FP32's accuracy ("3xTF32", as in CUTLASS's
// OpMultiplyAddFastF32; H. Ootomo and R. Yokota, "Recovering single precision accuracy from Tensor
// Cores while surpassing the FP32 theoretical peak performance", IJHPCA 2022,
// https://arxiv.org/abs/2203.03341) for three times the tensor work.
// How: one launch of tf32_split.cu (tf32_split.py: the staging step, inside the timed work) writes
// A3 = [lo | hi | hi] (M x 3KP) and Bt3 = [hi | lo | hi] (N x 3KP, B transposed: t4's K-major
// operands), and t4 runs unchanged over K' = 3KP: its TMA copies the same 128-byte rows, now 32 TF32
// each, and hopper.cuh issues wgmma .tf32 k8 (the same 32 bytes a k16 BF16 slice reads). Its tensor
// maps see the FP32 arrays as 16-bit pairs, so RING_K gives the ring 6 KP of them.
// Expected effect: a k-tile holds half the MACs of BF16's, at the same instruction time, and there
//   are 3 x 2 = 6 times the k-tiles: ~6x t4's BF16 time at the same shape (185 us at 4096^3 on the
//   H200) plus the split (~125 us at 4096^3, tf32_split.cu), ~1.2 ms against cuBLAS FP32's ~2.7 ms:
//   about 2x cuBLAS at 4096^3 and 8192^3, less at 2048^3 where the split weighs more. Accuracy: as
//   FP32, unless the tensor cores' FP32 accumulation rounds worse than FFMA's.
// Measured first as t4 alone, all of K in the tensor cores' accumulators (H200, 2026-12-02,
//   notebook/device/device_tf32a.sh, BN = 256, clusters of 2): 247.5% of cuBLAS FP32 at 4096^3 (1.086 against
//   2.688 ms), 205.9% at 2048^3, 188.0% at 4097^3, but its max_rel_err grew with K as a sum that rounds
//   toward zero does: 3.2e-6, 5.7e-6, 1.05e-5 and 2.16e-5 at 1024^3 .. 8192^3, where cuBLAS's was 1.2e-6
//   .. 4.6e-6, and 8192^3 failed the check (2e-5). (Ootomo and Yokota found that A100's tensor cores
//   round toward zero in their accumulation; error growing linearly in K is what that gives.)
// So FLUSH (t4's hook): each consumer restarts the wgmma accumulation every FLUSH k-tiles (32 TF32
//   deep each) and adds each block's result into a second set of FP32 registers with ordinary adds,
//   which round to nearest: the truncating sums are FLUSH x 32 terms long at most, not 3K. The
//   second set costs BN / 2 registers, so BN = 256 (128 + 128 of the consumers' 232) is out: ptxas
//   spilled 352 bytes there. Measured (notebook/device/device_tf32b.sh, BN = 192, clusters of 2, ms and
//   max_rel_err, cuBLAS 2.681 ms / 2.9e-6 at 4096^3 and 21.44 / 4.3e-6 at 8192^3):
//     FLUSH      1               2               4               8
//     4096^3     1.615 / 5.5e-7  1.384 / 4.7e-7  1.365 / 4.7e-7  1.320 / 7.2e-7
//     8192^3     12.09 / 8.0e-7  9.982 / 6.7e-7  9.823 / 5.9e-7  9.564 / 8.4e-7
//   A max_rel_err 4-7 times below cuBLAS FP32's (a likely reason: v14's rounded FP32 adds come once
//   per block of 32 to 256 products, an FFMA loop's once per product). Each block ends in a drain of
//   the wgmma pipe: FLUSH = 1 took 22% longer than 8 at 4096^3 and 26% at 8192^3. Tuned (results/h200/tuned.json, notebook/device/device_tf32c.sh), the best row
//   runs v14 from 1024^3 up: 142-232% of cuBLAS FP32 (README, "The SGEMM ladder").
// Params: t4's (BN 128 or 192, STAGES, GROUP_M, CLUSTER, STORE, SCHEDULE; PINGPONG = 0: its second
//   accumulator set leaves no registers for the sums), with t4's constraints and launch
//   (gemm_bf16.tma_rungs); FLUSH (1, 2, 4, 8; no 0: the sum of all of K in the tensor cores fails the
//   check at 8192^3); BM = 128, BK = 32 TF32.
// Shapes: any M, N, K >= 1, as t4: ragged M and N by TMA zero fill and clipped stores, any K by the
//   split's zero pad. Inputs must be finite: an infinite x gives lo = inf - inf = NaN.
#define WGMMA_TF32
#define T4_ENTRY sgemm
#define RING_K(K) (6 * (((K) + 3) / 4 * 4))  // 3 parts x KP FP32, 2 16-bit elements each
// FLUSH comes from the params (-D): t4 reads it.
#include "gemm_bf16/hopper.cuh"
#include "gemm_bf16/t4_persistent_cluster.cu"
