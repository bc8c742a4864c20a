// v8 double buffering: the next tile's global loads are in flight while this tile is computed.
//
// Changed from v7: two A/B tile buffers in shared memory. At step t each thread first issues the
// global loads of tile t+1 into registers, then computes tile t from buffer t%2, then stores the
// registers into buffer (t+1)%2, and one barrier ends the step (v7 needed two: before and after the
// compute). The loads' latency (~600-800 cycles from L2/DRAM on the H200) is covered by the compute
// of a whole tile (BK*128 = 1024 FMAs per thread at the default 16 x 8, ~2000 cycles per
// sub-partition with 2 warps each) instead of by other warps alone. __launch_bounds__(THREADS,
// MINB) asks the compiler to fit MINB blocks per SM (255 registers for 2 blocks of 128 threads,
// 128 for 2 blocks of 256).
// Expected effect: v7 stalls each tile on its loads (long scoreboard) and on two barriers, with only
// 8-16 warps per SM to switch between; removing the exposed latency should lift the FMA pipe's
// busy fraction from ~60-70% toward ~80%: expect 1.1-1.3x v7 at 4096^3. Costs: 8-16 more registers
// (the staged float4s) and twice the tile shared memory (16.6 KB at 128 x 128 x 8; the write-back
// slices of v7 reuse it).
// Params: as v7 (BM, BN, BK multiple of 8, WM multiple of 16, WN = 32*WNITER, WNITER, TM = TN = 4)
//   plus MINB, the blocks per SM the register budget is sized for.
// Shapes: any M, N, K >= 1 (float4 or scalar paths chosen at run time, guarded edges).
#include "sgemm/ladder.cuh"

#define WARPS ((BM / WM) * (BN / WN))
#define THREADS (WARPS * 32)
#define WMITER (WM / 16)
#define A_LOADS (BM * BK / 4 / THREADS)
#define B_LOADS (BK * BN / 4 / THREADS)
#define AS_LD (BM + 4)
#define TILE_FLOATS (BK * AS_LD + BK * BN)  // one stage: transposed A tile, then B tile
#define SLICE_FLOATS (WARPS * 16 * CS_LD)
#define SMEM_FLOATS (2 * TILE_FLOATS > SLICE_FLOATS ? 2 * TILE_FLOATS : SLICE_FLOATS)

// Global -> registers: tile at k0 (float4 or guarded scalar loads; zeros outside the matrices).
template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void load_tile(float4 (&ra)[A_LOADS], float4 (&rb)[B_LOADS], int M, int N,
                                          int K, const float* __restrict__ A,
                                          const float* __restrict__ B, int row0, int col0, int k0) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        int r, kq;
        a_load_coords<BM>(tid + l * THREADS, r, kq);
        ra[l] = load4_guarded<VEC_A>(A, M, K, row0 + r, k0 + kq * 4);
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        const int idx = tid + l * THREADS;
        rb[l] = load4_guarded<VEC_BC>(B, K, N, k0 + idx / (BN / 4), col0 + (idx % (BN / 4)) * 4);
    }
}

// Registers -> one shared stage (A transposed into the padded As, as since v5).
__device__ __forceinline__ void store_tile(const float4 (&ra)[A_LOADS], const float4 (&rb)[B_LOADS],
                                           float* stage) {
    float (*As)[AS_LD] = reinterpret_cast<float (*)[AS_LD]>(stage);
    float (*Bs)[BN] = reinterpret_cast<float (*)[BN]>(stage + BK * AS_LD);
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        int r, kq;
        a_load_coords<BM>(tid + l * THREADS, r, kq);
        store4_transposed(As, kq * 4, r, ra[l]);
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        const int idx = tid + l * THREADS;
        store_float4(&Bs[idx / (BN / 4)][(idx % (BN / 4)) * 4], rb[l]);
    }
}

template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float* smem) {
    const int tid = threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = (warp / (BN / WN)) * WM;
    const int wn = (warp % (BN / WN)) * WN;
    const int lr = zigzag_row(lane), lc = zigzag_col(lane);  // v6's lane grid
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[WMITER * TM][WNITER * TN];
    zero(acc);

    float4 ra[A_LOADS], rb[B_LOADS];
    load_tile<VEC_A, VEC_BC>(ra, rb, M, N, K, A, B, row0, col0, 0);
    store_tile(ra, rb, smem);
    __syncthreads();

    const int ktiles = (K + BK - 1) / BK;
    for (int t = 0; t < ktiles; ++t) {
        const float* stage = smem + (t & 1) * TILE_FLOATS;
        const float (*As)[AS_LD] = reinterpret_cast<const float (*)[AS_LD]>(stage);
        const float (*Bs)[BN] = reinterpret_cast<const float (*)[BN]>(stage + BK * AS_LD);
        const bool more = t + 1 < ktiles;
        if (more) load_tile<VEC_A, VEC_BC>(ra, rb, M, N, K, A, B, row0, col0, (t + 1) * BK);
        warp_tile_mma<BK>(acc, As, Bs, wm + lr * 4, wn + lc * 4);  // v6's
        // The other stage was last read in step t-1, which every thread finished before the
        // barrier that ended it: it is free to overwrite now.
        if (more) store_tile(ra, rb, smem + ((t + 1) & 1) * TILE_FLOATS);
        __syncthreads();
    }

    // Write-back through this warp's slice (as v7); the loop's last barrier freed the stages.
    float* cs = smem + warp * (16 * CS_LD);
    const auto inside = [&](int row, int col) { return row < M && col < N; };
#pragma unroll
    for (int i = 0; i < WMITER; ++i)
#pragma unroll
        for (int j = 0; j < WNITER; ++j)
            write_back<VEC_BC>(cs, acc, i, j, lane, C, N, row0 + wm + i * 16, col0 + wn + j * 32,
                               inside);
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C) {
    __shared__ float4 smem4[SMEM_FLOATS / 4];  // two tile stages, later the write-back slices
    float* smem = reinterpret_cast<float*>(smem4);
    const bool vec_a = (K % 4 == 0) && aligned16(A);
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (vec_a) {
        if (vec_bc) gemm_tile<true, true>(M, N, K, A, B, C, smem);
        else        gemm_tile<true, false>(M, N, K, A, B, C, smem);
    } else {
        if (vec_bc) gemm_tile<false, true>(M, N, K, A, B, C, smem);
        else        gemm_tile<false, false>(M, N, K, A, B, C, smem);
    }
}
