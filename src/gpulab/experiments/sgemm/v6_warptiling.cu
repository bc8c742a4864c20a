// v6 warp tiling with a zig-zag lane mapping: LDS.128 reads merged to two wavefronts.
//
// Changed from v5: the block tile is split into warp tiles of WM x WN; each warp walks its tile in
// WMITER x WNITER sub-tiles of 16 x 32, and inside a sub-tile its 32 lanes form a 4 x 8 grid of
// 4 x 4 (TM x TN) thread fragments. A thread so owns (4*WMITER) x (4*WNITER) outputs (8 x 8 for a
// 32 x 64 warp tile; 16 x 8 for the default 64 x 64, 128 threads per 128 x 128 block). The lane-to-grid map is a zig-zag: lanes 2l and 2l+1 sit one above the
// other (same column, rows 4 apart), and the two half-warps take rows {0,1} and {2,3}:
//     lr = (lane & 1) | ((lane >> 4) << 1)   (row of the 4 x 8 grid)
//     lc = (lane >> 1) & 7                   (column)
// so for every LDS.128 of B lanes i and i^1 read the same address, and for every LDS.128 of A lanes
// i and i^2 do. That is the condition (Tang's blog post, docs/SOURCES.md) under which the hardware merges the four
// quarter-warp transactions of an LDS.128 into two half-warp ones: each half-warp reads 8 distinct
// float4s of B (128 contiguous bytes) or 2 adjacent float4s of A, conflict-free.
// Expected effect: per k, a warp issues WMITER + WNITER LDS.128 (4 at 8 x 8) at 2 wavefronts each,
// 8 shared cycles per 64 warp-FMAs; v5 needed 12 (A's 2 LDS.128 already merged as broadcasts, B's 2
// at 4 each). One SM runs 4 sub-partitions, each issuing a warp-FMA per cycle, into one shared pipe
// of one wavefront per cycle: v5 asks 4 x 12 = 48 of every 64 cycles of it (75%, with the loads and
// stores of the tiles still to come), v6 32 (50%). Expect 10-25% over v5 at 4096^3. The 4 x 8 lane
// grid also writes C as 4 rows x 128 bytes per STG.128 (whole sectors). The default takes 16 x 8
// outputs per thread: 6 LDS.128 per 128 FMAs (24 of 64 shared cycles per warp-FMA cycle budget at
// 4 warps), and 228 registers x 128 threads still let 2 blocks share an SM, where 8 x 8 at 157
// registers x 256 threads fits only one.
// Params: BM, BN, BK (multiple of 8), WM (multiple of 16), WN = 32*WNITER, WNITER, TM = TN = 4 (the
//   float4 fragment, fixed). Threads = (BM/WM)*(BN/WN)*32; BM*BK/4 and BK*BN/4 multiples of it.
// Shapes: any M, N, K >= 1: float4 paths for K % 4 == 0 (A) and N % 4 == 0 (B, C) chosen at run
//   time, scalar paths otherwise; zero-filled loads, guarded stores.
#include "sgemm/ladder.cuh"

#define WARPS ((BM / WM) * (BN / WN))
#define THREADS (WARPS * 32)
#define WMITER (WM / 16)                  // 16-row sub-tiles per warp tile (4 lane rows x TM)
#define AS_LD (BM + 4)

template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float (*As)[AS_LD], float (*Bs)[BN]) {
    const int tid = threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = (warp / (BN / WN)) * WM;    // warp tile origin inside the block tile
    const int wn = (warp % (BN / WN)) * WN;
    const int lr = (lane & 1) | ((lane >> 4) << 1);
    const int lc = (lane >> 1) & 7;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[WMITER * TM][WNITER * TN];
    zero(acc);

    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tiles<VEC_A, VEC_BC, BM, BK, THREADS>(As, Bs, M, N, K, A, B, row0, col0, k0);  // v5's
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 a[WMITER], b[WNITER];
#pragma unroll
            for (int i = 0; i < WMITER; ++i) a[i] = load_float4(&As[k][wm + i * 16 + lr * 4]);
#pragma unroll
            for (int j = 0; j < WNITER; ++j) b[j] = load_float4(&Bs[k][wn + j * 32 + lc * 4]);
#pragma unroll
            for (int i = 0; i < WMITER; ++i) {
                const float av[4] = {a[i].x, a[i].y, a[i].z, a[i].w};
#pragma unroll
                for (int j = 0; j < WNITER; ++j) {
                    const float bv[4] = {b[j].x, b[j].y, b[j].z, b[j].w};
#pragma unroll
                    for (int r = 0; r < 4; ++r)
#pragma unroll
                        for (int c = 0; c < 4; ++c) acc[i * 4 + r][j * 4 + c] += av[r] * bv[c];
                }
            }
        }
        __syncthreads();
    }

    // Direct stores from registers: one STG.128 per (sub-tile, row) covers 4 rows x 128 bytes.
#pragma unroll
    for (int i = 0; i < WMITER; ++i)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
            const int row = row0 + wm + i * 16 + lr * 4 + r;
            if (row >= M) continue;
            float* crow = C + (size_t)row * N;
#pragma unroll
            for (int j = 0; j < WNITER; ++j)
                store4_guarded<VEC_BC>(crow, col0 + wn + j * 32 + lc * 4, N, &acc[i * 4 + r][j * 4]);
        }
}

extern "C" __global__ void __launch_bounds__(THREADS) sgemm(int M, int N, int K,
                                                            const float* __restrict__ A,
                                                            const float* __restrict__ B,
                                                            float* __restrict__ C) {
    __shared__ __align__(16) float As[BK][AS_LD];
    __shared__ __align__(16) float Bs[BK][BN];
    const bool vec_a = (K % 4 == 0) && aligned16(A);
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (vec_a) {
        if (vec_bc) gemm_tile<true, true>(M, N, K, A, B, C, As, Bs);
        else        gemm_tile<true, false>(M, N, K, A, B, C, As, Bs);
    } else {
        if (vec_bc) gemm_tile<false, true>(M, N, K, A, B, C, As, Bs);
        else        gemm_tile<false, false>(M, N, K, A, B, C, As, Bs);
    }
}
