/* gpulab variant
name:    vec
summary: padded 32x32 tile moved as float4: one 16-byte load and store per lane, several per thread
param:   ROWS = 8 in 8, 16, 32 | tile rows per pass: 8*ROWS threads, each moving 32/ROWS float4 each way
sweep:   ROWS = 8, 16, 32
grid:    ceil_div(N, 32), ceil_div(M, 32)
block:   8 * ROWS
*/
// Changed from padded: global memory is read and written 16 bytes per lane (LDG.128 / STG.128), a
// quarter of the instructions, with several independent loads in flight per thread before the
// barrier. A warp covers 4 tile rows x 8 float4: 4 full 128-byte lines each way. The shared side
// stays scalar and conflict-free: a lane writes tile[r][4j..4j+3] and the warp's 4 rows x 8 float4
// land in banks (r + 4j + q) mod 32, all different for each q; on the way out a lane gathers
// tile[4j..4j+3][c] for 4 neighbouring c, again 32 different banks. Expected: >= 90% of the
// card's copy ceiling at 8192 x 8192, where the transpose moves 268 MB each way.
// Shapes: any M, N >= 1. The float4 path needs M and N multiples of 4 (every row then starts
// 16-byte aligned); otherwise the whole grid takes the scalar path of padded, with the same tile.

#include "common.cuh"

#define TILE 32

extern "C" __global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    __shared__ float tile[TILE][TILE + 1];
    const int c0 = blockIdx.x * TILE, r0 = blockIdx.y * TILE;
    const int t = threadIdx.x;
    if (((M | N) & 3) == 0) {
        const int j = t % 8, row = t / 8;  // float4 column j of the tile, tile row `row` of this pass
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int r = r0 + row + k, c = c0 + 4 * j;
            if (r < M && c < N) {
                const float4 v = load_float4(in + (size_t)r * N + c);
                tile[row + k][4 * j + 0] = v.x;
                tile[row + k][4 * j + 1] = v.y;
                tile[row + k][4 * j + 2] = v.z;
                tile[row + k][4 * j + 3] = v.w;
            }
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int orow = c0 + row + k, ocol = r0 + 4 * j;  // out is N x M
            if (orow < N && ocol < M) {
                const float4 v = make_float4(tile[4 * j + 0][row + k], tile[4 * j + 1][row + k],
                                             tile[4 * j + 2][row + k], tile[4 * j + 3][row + k]);
                store_float4(out + (size_t)orow * M + ocol, v);
            }
        }
    } else {
        const int lane = t % 32, row = t / 32;  // 32 columns, ROWS/4 tile rows per pass
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS / 4) {
            const int r = r0 + row + k, c = c0 + lane;
            if (r < M && c < N) tile[row + k][lane] = in[(size_t)r * N + c];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS / 4) {
            const int orow = c0 + row + k, ocol = r0 + lane;
            if (orow < N && ocol < M) out[(size_t)orow * M + ocol] = tile[lane][row + k];
        }
    }
}
