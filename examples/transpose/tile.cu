/* gpulab variant
name:    tile
summary: 32x32 tile staged in shared memory: coalesced both ways, but 32-way bank conflicts on the column reads
param:   ROWS = 8 in 8, 16, 32 | rows of threads; each thread moves 32/ROWS elements each way
grid:    ceil_div(N, 32), ceil_div(M, 32)
block:   32, ROWS
*/
// Changed from naive: the block reads a 32x32 tile of `in` row by row (coalesced), waits, and writes
// it to `out` row by row (coalesced too), reading the tile down its columns. Expected: global
// traffic is now 4 sectors per request both ways, but a column of tile[32][32] lies in one shared
// memory bank (row stride 32 floats = 128 bytes), so each column read is 32 wavefronts instead of 1.
// Shapes: any M, N >= 1 (guards on both).

#define TILE 32

extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    __shared__ float tile[TILE][TILE];
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
