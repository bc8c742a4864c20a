// The dense tensor-core ceilings on Hopper through wgmma: back-to-back m64n256 on operands in shared
// memory, FP32 accumulators in registers; sm_90a only (cards of sm_80-89 use mma_bf16.cu). BF16 by
// default (m64n256k16); with WGMMA_TF32 defined, TF32 (m64n256k8, the instruction sgemm's v14 issues):
// the same bytes per instruction, half the multiply-adds.
//
// Not an experiment (nothing to check but the sums): the kernel `gpulab ceilings` times to learn the
// rate of the instruction the Hopper GEMMs issue (HGMMA.64x256x16 for BF16), the only path to the
// datasheet's dense rates on this architecture (mma.sync reaches ~65% of BF16's: mma_bf16.cu).
// Why this shape: one m64n256k16 is 64 x 256 x 16 multiply-adds (524,288 FLOP) issued by a warpgroup
// (4 warps, one per SM sub-partition); at the datasheet rate an SM retires ~4,096 BF16 FLOP per clock,
// so one such wgmma keeps the SM's tensor cores busy ~128 clocks (a TF32 m64n256k8, half the FLOP at
// half the rate, as long). Each block is one warpgroup with its own accumulators (128 FP32 per thread)
// and BLOCKS_PER_SM blocks share an SM, so several independent accumulator groups are in flight per
// SM; inside a warpgroup the wgmma of one step (4 of them: a 128-byte k-tile) are committed as one
// group and the next group is issued before waiting for it (wgmma.wait_group 1): chained wgmma on one
// accumulator may be in flight together (PTX ISA, "wgmma.mma_async": the exception for the
// accumulator of same-shape wgmma). Shared memory read per wgmma: 2 KiB of A + 8 KiB of B in ~128
// clocks, 80 B/clock, under the 128 B/clock an SM serves.
// Operands: every 32-bit word in shared memory is `operand`, the host's power of two (two BF16 2^-10,
// bits 0x3A803A80, or one TF32 2^-10, bits 0x3A800000), so the 128-byte swizzle of the descriptors
// (the gemm_bf16 rungs' own, hopper.cuh) reads the same values whatever the permutation; each wgmma
// adds k x 2^-20 to every accumulator, exactly (2^-16 for BF16's k = 16, 2^-17 for TF32's k = 8), so
// after iters steps of 4 every element holds 4 x iters x that (exact while far below 2^24 steps),
// which the host checks exactly. Each thread writes its accumulators' common value, or NaN if any of
// its 128 differs.
// Params: WGMMA_TF32 (defined or not) at compile time. Runtime: iters (steps of 4 wgmma per warpgroup).
#include "gemm_bf16/hopper.cuh"

#define A_BYTES (64 * 128)   // 64 rows of 128 bytes: the A tile of four k steps
#define B_BYTES (256 * 128)  // 256 rows of 128 bytes

extern "C" __global__ void __launch_bounds__(128) wgmma_peak(float* __restrict__ out, unsigned operand,
                                                              int iters) {
    extern __shared__ unsigned char smem_raw[];
    // 1024-byte aligned: the 128-byte swizzle's period, which the descriptors' base offset 0 assumes.
    unsigned char* tiles = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);
    for (int i = threadIdx.x; i < (A_BYTES + B_BYTES) / 4; i += 128) reinterpret_cast<unsigned*>(tiles)[i] = operand;
    fence_proxy_async_shared();  // generic-proxy stores, read next by the async proxy (wgmma)
    __syncthreads();

    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
    const unsigned char* a = tiles;
    const unsigned char* b = tiles + A_BYTES;

    fence_registers(acc);
    wgmma_fence();
#pragma unroll 1
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {  // hopper.cuh's m64n256k16 is k8 TF32 under WGMMA_TF32
            wgmma_m64n256k16(acc, desc_k_major_sw128(a + kk * 32), desc_k_major_sw128(b + kk * 32));
        }
        wgmma_commit();
        wgmma_wait<1>();  // the previous step's group retired; this one stays in flight
    }
    wgmma_wait<0>();
    fence_registers(acc);

    bool same = true;
#pragma unroll
    for (int i = 1; i < 128; ++i) same &= acc[i] == acc[0];
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = same ? acc[0] : __int_as_float(0x7fffffff);
}
