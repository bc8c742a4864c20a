// The dense BF16 tensor-core ceiling through mma.sync: CHAINS independent m16n8k16 accumulators per
// warp, `iters` steps each, operands held in registers.
//
// Not an experiment (nothing to check but the sum): the kernel `gpulab ceilings` times to learn the
// rate the mma.sync class of instruction (HMMA.16816, what t0 and t1 of gemm_bf16 issue) reaches on
// this card. It is not the card's whole tensor rate on Hopper: wgmma (warpgroup MMA reading shared
// memory) is the only path to the datasheet's dense BF16 figure, and mma.sync is measured to reach
// well under it there; the ceilings row says which instruction it timed.
// Why this shape: an HMMA's result is ready some 30 cycles after issue, so each scheduler needs many
// independent MMAs in flight: CHAINS accumulators per warp and 8 warps per scheduler (4 blocks of 256
// per SM) keep 8 * CHAINS in flight. No shared or global memory is touched inside the loop.
// Every operand is 2^-10 (BF16 bits 0x3A80): each step adds 16 * 2^-20 = 2^-16 to every accumulator,
// exactly, so after iters steps every element holds iters * 2^-16 (exact while iters < 2^24) and the
// host checks the sums exactly; no zeros (never time on zeros), no denormals.
// Params: CHAINS (independent accumulators per warp). Runtime: `operand` (two BF16 in a word), iters.

extern "C" __global__ void mma_bf16_peak(float* __restrict__ out, unsigned operand, int iters) {
    const unsigned a[4] = {operand, operand, operand, operand};
    const unsigned b[2] = {operand, operand};
    float acc[CHAINS][4];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[c][e] = 0.0f;
#pragma unroll 4
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) {
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                : "+f"(acc[c][0]), "+f"(acc[c][1]), "+f"(acc[c][2]), "+f"(acc[c][3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
    }
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += acc[c][0] + acc[c][1] + acc[c][2] + acc[c][3];
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
