/* gpulab variant
name:    vec
summary: padded tile moved as float4: one 16-byte load and store per lane, several per thread
param:   ROWS = 8 in 8, 16, 32 | tile rows per pass of each 32-column group: 8*ROWS threads per group
param:   TILE = 32 in 32, 64 | the tile side: 32 or 64 floats (a 64 tile has two column groups)
sweep:   ROWS = 8, 16, 32
sweep:   TILE = 32, 64
grid:    ceil_div(N, TILE), ceil_div(M, TILE)
block:   8 * ROWS * (TILE / 32)
*/
// Changed from padded: global memory is read and written 16 bytes per lane (LDG.128 / STG.128), a
// quarter of the instructions, with several independent loads in flight per thread before the
// barrier. The threads form TILE/32 groups of 8*ROWS, group g taking columns 32g..32g+31 of the
// tile; a warp covers 4 tile rows x 8 float4 of its group: 4 full 128-byte lines each way. A 64
// tile reads and writes 256 contiguous bytes per row of the matrix where a 32 tile takes 128, for
// DRAM pages that are read longer at a stretch. The shared side stays scalar and conflict-free: a
// lane writes tile[r][32g+4j..+3], and with 65 (or 33) floats a row element (r, c) sits in bank
// (r + c) mod 32, so a warp's 4 rows x 8 float4 land in 32 different banks for each q; on the way
// out a lane gathers tile[32g+4j..+3][c] for 4 neighbouring c, again 32 different banks.
// Expected: >= 90% of the card's copy ceiling at 8192 x 8192, where the transpose moves 268 MB
// each way.
// Shapes: any M, N >= 1. The float4 path needs M and N multiples of 4 (every row then starts
// 16-byte aligned); otherwise the whole grid takes the scalar path of padded, with the same tile.

#include "common.cuh"

extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    __shared__ float tile[TILE][TILE + 1];
    const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
    const int t = threadIdx.x;
    if (((M | N) & 3) == 0) {
        // float4 column j of column group g, tile row `row` of this pass
        const int g = t / (8 * ROWS), j = t % 8, row = (t % (8 * ROWS)) / 8, col = 32 * g + 4 * j;
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int r = r0 + row + k, c = c0 + col;
            if (r < M && c < N) {
                const float4 v = load_float4(in + (size_t)r * N + c);
                tile[row + k][col + 0] = v.x;
                tile[row + k][col + 1] = v.y;
                tile[row + k][col + 2] = v.z;
                tile[row + k][col + 3] = v.w;
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int orow = c0 + row + k, ocol = r0 + col;  // out is N x M
            if (orow < N && ocol < M) {
                const float4 v = make_float4(tile[col + 0][row + k], tile[col + 1][row + k],
                                             tile[col + 2][row + k], tile[col + 3][row + k]);
                store_float4(out + (size_t)orow * M + ocol, v);
            }
        }
    } else {
        // 32 lanes across a column group, the block's warps down the tile rows
        const int lane = t % 32, row = t / 32, step = ROWS * TILE / 128;
#pragma unroll
        for (int g = 0; g < TILE; g += 32) {
#pragma unroll
            for (int k = 0; k < TILE; k += step) {
                const int r = r0 + row + k, c = c0 + g + lane;
                if (r < M && c < N) tile[row + k][g + lane] = in[(size_t)r * N + c];
            }
        }
        __syncthreads();
#pragma unroll
        for (int g = 0; g < TILE; g += 32) {
#pragma unroll
            for (int k = 0; k < TILE; k += step) {
                const int orow = c0 + row + k, ocol = r0 + g + lane;
                if (orow < N && ocol < M) out[(size_t)orow * M + ocol] = tile[g + lane][row + k];
            }
        }
    }
}
