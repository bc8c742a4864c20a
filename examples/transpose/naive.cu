/* gpulab variant
name:    naive
summary: one thread per element: reads along rows (coalesced), writes down columns (32 sectors a store)
grid:    ceil_div(N, 32), ceil_div(M, 8)
block:   32, 8
*/
// The baseline. A warp reads 32 neighbouring floats of a row of `in` (one 128-byte line, 4 sectors)
// and writes them to 32 different rows of `out`, M floats apart: 32 sectors per store instruction,
// each 32-byte sector carrying 4 useful bytes. The writes move 8x the bytes they need through L1/L2
// (DRAM write-back merges some of it, when the neighbouring columns land before eviction).
// Shapes: any M, N >= 1 (guards on both).

extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    const int col = blockIdx.x * 32 + threadIdx.x;
    const int row = blockIdx.y * 8 + threadIdx.y;
    if (row < M && col < N) out[(size_t)col * M + row] = in[(size_t)row * N + col];
}
