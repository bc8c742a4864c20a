// v2 stride: copy out = A with the lanes of each warp STRIDE floats apart; a sweep over STRIDE.
//
// Changed from v1: the same copy, every element read once and written once, but the elements are
// dealt out so that lane l of the j-th warp of a chunk of 32*STRIDE floats takes element
// chunk + l*STRIDE + j. The STRIDE warps of a chunk together cover it, so no byte is skipped and the
// bytes counted (8*M*N) do not depend on STRIDE; only the order changes. STRIDE=1 is v1 VEC=1.
// Expected effect: a warp instruction touches min(32, 4*STRIDE) sectors, so sector traffic grows
// with STRIDE up to 8 (each lane in its own sector: 8x, like v0), then stays there; from STRIDE=32
// each lane is also in its own 128-byte line. For STRIDE <= 8 the chunk's warps are in one 256-thread
// block, on one SM, and L1 can serve the rest of each sector; beyond 8 the chunk spans blocks on
// different SMs and the reuse must come from L2. Expect GB/s to fall by about 2x per doubling up to
// STRIDE 4-8, then to level off near v0's rate (the L2 sector rate), a little lower at 64-128.
// Params: STRIDE (1, 2, 4, ..., 128) floats between neighbouring lanes; 256 threads per block.
// Shapes: any M, N >= 1 with M*N < 2^31; the last M*N mod (32*STRIDE) floats are copied in order.
#include "common.cuh"

extern "C" __global__ void coalesce(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    constexpr unsigned CHUNK = 32u * STRIDE;
    const unsigned total = (unsigned)M * (unsigned)N;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const unsigned full = total / CHUNK * CHUNK;  // a multiple of 32: a warp is all in or all out
    unsigned i = t;
    if (t < full) {
        const unsigned warp = t / 32u, lane = t % 32u;
        i = (warp / STRIDE) * CHUNK + lane * STRIDE + warp % STRIDE;
    }
    out[i] = in[i];
}
