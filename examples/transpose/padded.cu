/* gpulab variant
name:    padded
summary: the same tile padded to 33 columns: a column spans all 32 banks, no conflicts
param:   ROWS = 8 in 8, 16, 32 | rows of threads; each thread moves 32/ROWS elements each way
grid:    ceil_div(N, 32), ceil_div(M, 32)
block:   32, ROWS
*/
// Changed from tile: one float of padding per row. Element (r, c) sits in bank (33r + c) mod 32 =
// (r + c) mod 32, so the 32 lanes reading a column (r = 0..31, c fixed) hit 32 different banks:
// 1 wavefront per read, where tile took 32. The writes into the tile (a row each) stay conflict-free.
// Expected: shared memory stops being the limit; the copy runs near DRAM speed.
// Shapes: any M, N >= 1 (guards on both).

#define TILE 32

extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    __shared__ float tile[TILE][TILE + 1];  // +1: row stride 33 floats
    const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
#pragma unroll
    for (int k = 0; k < TILE; k += ROWS) {
        const int r = r0 + threadIdx.y + k, c = c0 + threadIdx.x;
        if (r < M && c < N) tile[threadIdx.y + k][threadIdx.x] = in[(size_t)r * N + c];
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < TILE; k += ROWS) {
        const int orow = c0 + threadIdx.y + k, ocol = r0 + threadIdx.x;  // out is N x M
        if (orow < N && ocol < M) out[(size_t)orow * M + ocol] = tile[threadIdx.x][threadIdx.y + k];
    }
}
