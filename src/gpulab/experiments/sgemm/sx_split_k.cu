// sx split-K across blocks on v9's cp.async ring: for shapes with too few output tiles to fill the card.
//
// Changed from v9: K is cut into S slices by blockIdx.y, so a shape with T tiles of C runs T*S
// blocks instead of T (512^3 at 64 x 128: 32 tiles -> 128 blocks at S = 4; 4096 x 64 x 4096 at
// 64 x 64: 64 -> 256 at S = 4). Each block runs v9's ring and warp tiles over its slice's k tiles
// (the ragged first tile of K stays in slice 0), then writes its partial tile to a workspace of S
// planes of M x N floats through v9's coalesced write-back; the block that arrives last at the tile
// (an atomic counter per tile, which that block resets to zero so the counters are ready for the
// next launch) adds the S partials in slice order (0, 1, ..., S-1) and stores C. Every sum is taken
// in a fixed order: the same bits on every run. sk splits K inside a block (small tiles, scalar
// shared loads); this keeps v9's 64 x 64 warp tiles and LDS.128 fragments, so its FFMA issue rate.
// Expected effect: v9 at 512^3 runs 32 blocks on 132 SMs (7,619 GFLOP/s, 47% of cuBLAS); at S = 4
// the whole card works on 128-deep slices: ~2.5-3x the blocks' work in flight, minus the fixup
// (S*M*N*4 bytes written and read back, L2-resident: 4 MB at 512^3), expect 12-14 TFLOP/s (0.75-0.85
// of cuBLAS's 16.3). At 4096 x 64 x 4096 (cuBLAS 34.5 TFLOP/s) 64 x 64 tiles, S = 4: 256 blocks of
// 1024-deep slices, expect 25-30 TFLOP/s; 64 x 4096 x 4096 the same with tiles along N.
// BM 16 and 32 (issue 40, the Llama layers at M = 16: no code changed, only the params' choices): at
//   BM = 64 a decode batch of 16 rows computes 48 rows of padding per tile, 4x the FFMAs: 16 x 6144 x
//   4096 is 0.8 GFLOP of work but 3.2 done, ~75 us at ~43 TFLOP/s (the ladder's best rate), where B's
//   100 MB take ~29 us at the copy ceiling. One warp tile of 16 rows (WM = BM = 16: 4 lanes x TM = 4)
//   wastes nothing: the FFMAs, ~17 us at 70% of the FP32 rate, hide under the stream of B. The
//   copies stay whole per thread (16 rows = THREADS / 8 at 4 warps), the fast path (M >= BM) runs,
//   and the ring's 16-deep tiles of 256 columns hold 48 KiB of B in flight a block (4 slots), 3
//   blocks an SM by shared memory (splitk.SX_DECODE). S = 16 at 16 x 6144 x 4096: 24 tiles x 16 = 384
//   blocks, one wave; the fixup reads 16 planes of 16 x 256 (6 MB in all, 6% of B, L2).
// BN 32 (a few columns, the mirror; no code changed, only the params' choices): one warp tile of 32
//   columns (WN = 32, WNITER = 1: one sub-tile of 8 lanes x TN = 4). At BN = 64 an N of 31 computes
//   33 columns of padding a tile, 2.06x the product's FFMAs: the best row at 2048 x 31 x 4096 ran
//   0.50x cuBLAS FP32 (H200, 2026-12-05, v13 in 256 x 64 tiles). At 64 x 32 (skinny.policy's
//   SX_NARROW: two 32 x 32 warps, 112 registers under NVRTC 13.5, no spills) and S = 16: 512 blocks
//   of 256-deep slices; the 0.52 GFLOP at the ladder's ~40 TFLOP/s is ~13 us, A's 34 MB at the copy
//   ceiling ~8 us, against cuBLAS's 30 us. N < BN runs the checked path (per-element copies of B).
// Params: v9's BM, BN, BK, WM, WN, WNITER, TM = TN = 4, STAGES, MINB, GROUP_M (rasterization of the
//   tiles of one slice), and S (k slices, grid.y; 1 = v9 with no workspace). Dynamic shared memory
//   as v9. Extra arguments: the workspace (S*M*N floats) and a counter per tile (zero before the
//   first launch); with S = 1 neither is touched.
// Shapes: any M, N, K >= 1 (v9's edges and paths; a slice with no k tile adds zeros).
#include "sgemm/ladder.cuh"
#include "sgemm/cp_async_ring.cuh"
#include "sgemm/split_k.cuh"

// What ring_k_loop and v6's fragment loads take for granted (the registry checks them too).
static_assert(WN == 32 * WNITER && TM == 4 && TN == 4, "a warp sub-tile is 4 x 8 lanes of 4 x 4 floats");
static_assert(STAGES >= 2 && BK % 8 == 0, "a ring of at least two slots of whole 8-deep copies of A");

// v9's tile loop over k tiles [t_begin, t_end) of the ceil(K / BK) (the first one ragged, starting
// at k_first < 0 when BK does not divide K: cp_async_ring.cuh's ring_gemm_tile), written to dst (C,
// or this slice's workspace plane).
template <bool VEC_BC, bool FAST>
__device__ __forceinline__ void slice(int M, int N, int K, const float* A, const float* B, float* dst,
                                      float* smem, int row_lo, int col_lo, int t_begin, int t_end) {
    const int row0 = FAST ? min(row_lo, M - BM) : row_lo, col0 = FAST ? min(col_lo, N - BN) : col_lo;
    ring_gemm_tile<WarpTileStep, VEC_BC, FAST>(M, N, K, A, B, dst, smem, row0, col0, row_lo, col_lo, t_begin, t_end);
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C,
                                                                  float* __restrict__ work,
                                                                  unsigned* __restrict__ counters) {
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);

    int bm, bn;
    grouped_block<GROUP_M>(M, N, bm, bn);
    const int row_lo = bm * BM, col_lo = bn * BN;
    // Slice z takes k tiles [z*T/S, (z+1)*T/S) of the T = ceil(K/BK): even to one tile.
    const int ktiles = (K + BK - 1) / BK, z = blockIdx.y;
    const int t_begin = (int)((long long)z * ktiles / S), t_end = (int)((long long)(z + 1) * ktiles / S);
    const size_t plane = (size_t)M * N;
    float* dst = S == 1 ? C : work + z * plane;
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C) && aligned16(work);
    if (M >= BM && N >= BN) {
        if (vec_bc) slice<true, true>(M, N, K, A, B, dst, smem, row_lo, col_lo, t_begin, t_end);
        else        slice<false, true>(M, N, K, A, B, dst, smem, row_lo, col_lo, t_begin, t_end);
    } else {
        if (vec_bc) slice<true, false>(M, N, K, A, B, dst, smem, row_lo, col_lo, t_begin, t_end);
        else        slice<false, false>(M, N, K, A, B, dst, smem, row_lo, col_lo, t_begin, t_end);
    }
    if (S == 1) return;

    // The fixup: the last of the S blocks of this tile adds the S partials in slice order.
    if (!last_to_arrive(counters + bm * ((N + BN - 1) / BN) + bn, S)) return;
    const int rows = min(BM, M - row_lo), cols = min(BN, N - col_lo);
    // Neither loop is unrolled: lanes of a warp may run different trip counts here, and an unrolled
    // loop runs the leftover trips first, apart, so the warp instructions executed would depend on the
    // unroll factor ptxas picks; rolled, each trip is one warp instruction per load and store (what
    // sgemm's access model counts). The S loads of a trip are still unrolled, all in flight.
    if (vec_bc) {  // cols is a multiple of 4 here (N and BN are)
        const int per_row = cols / 4;
#pragma unroll 1
        for (int e = threadIdx.x; e < rows * per_row; e += THREADS) {
            const size_t at = (size_t)(row_lo + e / per_row) * N + col_lo + 4 * (e % per_row);
            float4 s = __ldcg(reinterpret_cast<const float4*>(work + at));  // L2: other SMs wrote it
            for (int p = 1; p < S; ++p) {
                const float4 v = __ldcg(reinterpret_cast<const float4*>(work + p * plane + at));
                s.x += v.x; s.y += v.y; s.z += v.z; s.w += v.w;
            }
            store_float4(C + at, s);
        }
    } else {
#pragma unroll 1
        for (int e = threadIdx.x; e < rows * cols; e += THREADS) {
            const size_t at = (size_t)(row_lo + e / cols) * N + col_lo + e % cols;
            float s = __ldcg(work + at);
            for (int p = 1; p < S; ++p) s += __ldcg(work + p * plane + at);
            C[at] = s;
        }
    }
}
