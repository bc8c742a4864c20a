// v10 register-fragment double buffering across k-steps and across the tile boundary.
//
// Changed from v9: the fragments live in two register sets. While k-step k's outer products run,
// k-step k+1's LDS.128 are already in flight into the other set; and on the last k-step of a tile
// the wait for the next tile, the barrier and the next tile's first fragment loads come BEFORE that
// step's FFMAs, so the 8 x 16 = 128 FFMAs of the step cover the barrier and the LDS latency that v9
// exposes at every tile start (v9: barrier, copies, LDS, then ~20-30 cycles before the first FFMA
// can issue, with only 2 warps per scheduler to hide it at the tuned 64 x 128, 2-warp, 4-block
// config).
// The ring slot of tile t is free as soon as its last fragments are in registers, i.e. at that
// barrier, so the copy of tile t+STAGES goes into it there: STAGES tiles in flight at the cost of
// v9's STAGES-1 (v10 STAGES=2 has v9 STAGES=3's copy lead in two slots of shared memory).
// One barrier per tile, as v9; the copies (cp.async), their layouts, the edge handling (blocks moved
// inward, the ragged K absorbed by the first tile, a checked path below one block tile), the grouped
// rasterization and the write-back are v9's (sgemm/cp_async_ring.cuh).
// SASS (NVRTC 13.5, sm_90, 64 x 128 x 8, two 64 x 64 warps, 16 x 8 per thread; the main loop of the
// float4, no-checks path, per tile and thread), v9 -> v10: 1132 -> 1132 instructions, 1024 FFMA
// (90.5%) in both, 48 LDS.128, 12 LDGSTS, 1 BAR; 216 -> 255 registers, no spills. What moves is
// where the LDS wait falls: v9 runs the barrier, the 45 instructions of the copies, the first
// LDS.128 and its first dependent FFMA 13 instructions later (a ~20-30 cycle stall per tile and
// warp); v10 issues the next tile's LDS.128 5 instructions after the barrier, and 45 copy
// instructions and 128 independent FFMAs follow before anything waits for them. With 2 warps per
// scheduler (4 blocks of 2 warps per SM) the stall is not always covered: up to ~2-3% of the
// ~1130 issue cycles of a tile.
// Expected effect: 1.02-1.04x v9 at 2048^3-8192^3 (v9: 45.6-48.4 TFLOP/s, 93-94% of cuBLAS), so
// 96-99% of cuBLAS FP32; the rest of the gap is FFMA register-bank conflicts and the tail wave.
// Params: as v9. BM, BN, BK (multiple of 8), WM (multiple of 16), WN = 32*WNITER, WNITER,
//   TM = TN = 4, STAGES (2-5 ring slots, all filled in the prologue), MINB (blocks per SM the
//   registers are sized for), GROUP_M (block-rows per rasterization group). Dynamic shared memory:
//   max(STAGES*(BK*(BM+4) + BK*BN), warps*16*36) floats, as v9. Registers: v9's plus one more set
//   of fragments (4*(WM/16 + WNITER)).
// Shapes: any M, N, K >= 1, as v9.
#include "sgemm/ladder.cuh"

#include "sgemm/cp_async_ring.cuh"

// warp_tile_mma's (v6) two halves, so that this rung can load step k+1's fragments while step k's
// products run. The fragments of k-step k: MI float4s of As (16 rows apart from a_off), NI of Bs
// (32 columns apart from b_off), the zig-zag lane grid of v6.
template <int MI, int NI, int LDA, int LDB>
__device__ __forceinline__ void load_fragments(float4 (&a)[MI], float4 (&b)[NI],
                                               const float (*As)[LDA], const float (*Bs)[LDB],
                                               int k, int a_off, int b_off) {
#pragma unroll
    for (int i = 0; i < MI; ++i) a[i] = load_float4(&As[k][a_off + i * 16]);
#pragma unroll
    for (int j = 0; j < NI; ++j) b[j] = load_float4(&Bs[k][b_off + j * 32]);
}

// The 4 x 4 outer products of one k-step's fragments into acc.
template <int MI, int NI>
__device__ __forceinline__ void outer_products(float (&acc)[MI * 4][NI * 4], const float4 (&a)[MI],
                                               const float4 (&b)[NI]) {
#pragma unroll
    for (int i = 0; i < MI; ++i) {
        const float av[4] = {a[i].x, a[i].y, a[i].z, a[i].w};
#pragma unroll
        for (int j = 0; j < NI; ++j) {
            const float bv[4] = {b[j].x, b[j].y, b[j].z, b[j].w};
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int c = 0; c < 4; ++c) acc[i * 4 + r][j * 4 + c] += av[r] * bv[c];
        }
    }
}

// As v9's gemm_tile (the same FAST / checked contract), with the fragment pipeline above.
template <bool VEC_BC, bool FAST>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float* smem, int row0, int col0, int row_lo, int col_lo) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = (warp / (BN / WN)) * WM;
    const int wn = (warp % (BN / WN)) * WN;
    const int a_off = wm + zigzag_row(lane) * 4, b_off = wn + zigzag_col(lane) * 4;  // v6's lanes
    const unsigned ring = smem_addr(smem);
    const int k_first = (K % BK) ? (K % BK) - BK : 0;
    Copier<VEC_BC> copier(M, N, K, A, B, row0, col0, k_first);

    float acc[WMITER * TM][WNITER * TN];
    zero(acc);

    const int ktiles = (K + BK - 1) / BK;
    // Prologue: every slot of the ring in flight, one commit group each (empty groups keep the count).
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
        if (s < ktiles) {
            const unsigned slot = ring + 4u * (s * TILE_FLOATS);
            if (FAST && (s > 0 || k_first == 0)) copier.template issue<false>(slot, k_first + s * BK, M, N, K, A, B);
            else                                 copier.template issue<true>(slot, k_first + s * BK, M, N, K, A, B);
            copier.advance();
        }
        cp_async_commit();
    }
    cp_async_wait<STAGES - 1>();  // tile 0 has landed (this thread's copies) ...
    __syncthreads();              // ... and everyone's

    typedef const float (*ATile)[AS_LD];
    typedef const float (*BTile)[BN];
    float4 a[2][WMITER], b[2][WNITER];  // the two fragment sets: k-step k in set k & 1
    int read_off = 0;                    // the slot of tile t, as a float offset
    load_fragments(a[0], b[0], reinterpret_cast<ATile>(smem), reinterpret_cast<BTile>(smem + BK * AS_LD),
                   0, a_off, b_off);
    for (int t = 0; t < ktiles; ++t) {
        const int this_off = read_off;
        const ATile As = reinterpret_cast<ATile>(smem + this_off);
        const BTile Bs = reinterpret_cast<BTile>(smem + this_off + BK * AS_LD);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k + 1 < BK) {
                load_fragments(a[(k + 1) & 1], b[(k + 1) & 1], As, Bs, k + 1, a_off, b_off);
            } else {
                // Tile t is all in registers. Committed so far: tiles 0 .. t+STAGES-1, so
                // STAGES-2 pending groups leave tile t+1 landed, and after the barrier nobody
                // reads slot t any more: it takes tile t+STAGES. The next tile's first fragments
                // load first, then the copies are issued, then this step's FFMAs run: the LDS
                // latency is under the copies' address arithmetic and 128 independent FFMAs.
                // (Issuing the copies after the FFMAs lets ptxas sink the barrier to the end of
                // the tile, which exposes the LDS latency again; before the fragment loads, the
                // loads wait behind the copies.)
                cp_async_wait<STAGES - 2>();
                __syncthreads();
                read_off = read_off + TILE_FLOATS == STAGES * TILE_FLOATS ? 0 : read_off + TILE_FLOATS;
                if (t + 1 < ktiles)  // BK is even: k-step 0 of tile t+1 goes to set 0
                    load_fragments(a[0], b[0], reinterpret_cast<ATile>(smem + read_off),
                                   reinterpret_cast<BTile>(smem + read_off + BK * AS_LD), 0, a_off, b_off);
                if (t + STAGES < ktiles) {
                    copier.template issue<!FAST>(ring + 4u * this_off, k_first + (t + STAGES) * BK, M, N, K, A, B);
                    copier.advance();
                }
                cp_async_commit();
            }
            outer_products(acc, a[k & 1], b[k & 1]);
        }
    }

    ring_write_back<VEC_BC>(acc, smem, C, M, N, row0 + wm, col0 + wn, row_lo, col_lo);
}

struct Tile {  // ring_sgemm's handle on this rung's tile loop
    template <bool VEC_BC, bool FAST>
    __device__ __forceinline__ static void run(int M, int N, int K, const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ C,
                                               float* smem, int row0, int col0, int row_lo, int col_lo) {
        gemm_tile<VEC_BC, FAST>(M, N, K, A, B, C, smem, row0, col0, row_lo, col_lo);
    }
};

// v9's kernel body (rasterization in groups of GROUP_M block-rows, edges, paths) around the loop above.
extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C) {
    ring_sgemm<Tile, GROUP_M>(M, N, K, A, B, C);
}
