// v0 cols: copy out = A (float32, M x N, row-major) with the lanes of a warp walking DOWN a column.
//
// Changed from the previous rung: nothing; this is the order to avoid and the experiment's baseline.
// Thread t takes element (row = t % M, col = t / M), so consecutive lanes sit N floats apart and
// every lane of a warp lands in its own 32-byte sector, for the load and again for the store.
// Expected effect: 32 sectors per warp instruction (1 KiB moved for 128 B used) against 4 for `rows`,
// so 8x the L1<->L2 sector traffic. DRAM traffic stays near 1x: the 7 other floats of each sector
// belong to the next 7 columns, whose warps run at about the same time (132 SMs x 64 warps cover
// ~66 columns of a 4096-row matrix) and find the sector in L2. The L2's sector rate, not DRAM, sets
// the pace: expect 2.5-5x slower than `rows` (2.1-2.5x on a T4 in the memory-hierarchy lesson, whose column copy
// still wrote along rows, docs/SOURCES.md; here the store is strided too).
// Params: none; 256 threads per block, one element per thread.
// Shapes: any M, N >= 1 with M*N < 2^31 (32-bit element index).
#include "common.cuh"

extern "C" __global__ void coalesce(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    const unsigned total = (unsigned)M * (unsigned)N;
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= total) return;
    const unsigned row = t % (unsigned)M;
    const unsigned col = t / (unsigned)M;
    const size_t i = (size_t)row * N + col;
    out[i] = in[i];
}
