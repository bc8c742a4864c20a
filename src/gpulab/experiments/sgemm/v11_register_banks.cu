// v11 FFMA register-bank-aware outer product: the order of the 128 FFMAs of a k-step, and the
// register budget, chosen so that ptxas can keep each FFMA's register-file reads in different banks.
//
// Changed from v9: only the order of a k-step's outer product, and the default config. v9 runs the
// 16 x 8 products of a thread in 4 x 4 blocks (row fragment i, column fragment j, then r, c); v11
// walks them column by column, b[c] held in the operand-reuse cache for the 16 FFMAs of its column,
// and reverses the row order at every column (a serpentine), so the a[r] that ends one column starts
// the next. Each FFMA then reads two registers from the register file, a[r] and the accumulator, and
// with the 255-register budget of MINB=1 (at 64-256 threads) ptxas renames the accumulators from one
// k-step to the next so that those two fall in different banks (even/odd register numbers on Volta
// and later: "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", Jia et al., 2018,
// https://arxiv.org/abs/1804.06826). The ring, copies, edges, rasterization and write-back are v9's
// (sgemm/cp_async_ring.cuh's ring_k_loop and ring_sgemm).
// Why: on the H200, v9 at 4096^3 issues on 82.5% of the scheduler cycles with 2 warps per scheduler,
// and the largest stall after 'not selected' is the dispatch stall (0.28 cycles per instruction, ncu):
// the dispatcher holding a selected instruction back, which is where operand register-bank
// collisions would show (among other pipeline conflicts). SASS of the main loop (NVRTC
// 13.0 as on the H200, sm_90, float4 path, per BK=8 tile of 1024 FFMA, counted by
// scripts/sass_banks.py; "2-same" = two register-file reads of one FFMA in one bank (reg % 2),
// "3-same" = all three):
//                                                   registers  2-same  3-same
//   v9  64 x 128 x 8, STAGES=3, MINB=2 (v9 order)        216      812      86   (dispatch stall 0.28)
//   v10 64 x 128 x 8, STAGES=2, MINB=2 (v9 order)        241      899     103   (dispatch stall 0.34)
//   v11 64 x 128 x 8, STAGES=2, MINB=2 (serpentine)      218      754      51
//   v11 64 x 256 x 8, STAGES=2, MINB=1 (serpentine)      255      151       8   <- default
//   v11 128 x 256 x 16, STAGES=2, MINB=1 (serpentine)    255      200       8
// (v9's order at 64 x 256 x 8, MINB=1: 210 registers, 928 and 97: the budget alone does not do it.)
// Expected effect: v10's tune on the H200 (NVRTC 13.0, the same registers as here) is a natural
// experiment: of its 7 configs, the two whose SASS has few collisions (64 x 256 x 8: 369 2-same per
// 1024 FFMA; 128 x 256 x 16: 300) were its fastest (46.8 and 48.0 TFLOP/s at 4096^3), the five with
// ~900 ran 44.9-46.4; the same block at the other BK: 64 x 256 x 16 (922) 46.3, 128 x 256 x 8 (914)
// 45.0. v11 cuts the collisions further (151 at its default) on v9's loop. Expect 1.02-1.05x v9
// (48.0 TFLOP/s at 4096^3): 49-50.5, 95-98% of cuBLAS FP32 (51.35); past cuBLAS only if the
// dispatch stall (0.28 cycles per instruction in v9) is mostly these collisions. At 91.3% FFMA
// (1024 of 1121 instructions) cuBLAS's 78% of the FMA ceiling (65,994) needs 85.5% of issue slots
// (v9: 82.5%). Occupancy is v9's: 8 warps per SM (2 blocks of 4 warps at 255 registers).
// The allocation is ptxas's: another NVRTC version may allocate differently (13.5 gives 213
// registers and ~780 2-same at the default); scripts/sass_banks.py shows it.
// Params: as v9 (BM, BN, BK multiple of 8, WM multiple of 16, WN = 32*WNITER, TM = TN = 4, STAGES,
//   MINB, GROUP_M); defaults 64 x 256 x 8 (four 64 x 64 warp tiles, 128 threads), STAGES=2, MINB=1.
//   Dynamic shared memory: max(STAGES*(BK*(BM+4) + BK*BN), warps*16*36) floats, as v9.
// Shapes: any M, N, K >= 1, as v9.
#include "sgemm/ladder.cuh"

// This rung's idea, the serpentine k-step (SerpentineStep: the order of the outer product), is
// written once in cp_async_ring.cuh, for it and v12.
#include "sgemm/cp_async_ring.cuh"

// What ring_k_loop and SerpentineStep's fragment loads take for granted (the registry checks them too).
static_assert(WN == 32 * WNITER && TM == 4 && TN == 4, "a warp sub-tile is 4 x 8 lanes of 4 x 4 floats");
static_assert(STAGES >= 2 && BK % 8 == 0, "a ring of at least two slots of whole 8-deep copies of A");

// v9's kernel body (rasterization in groups of GROUP_M block-rows, edges, paths) around the ring
// loop with the serpentine step.
extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C) {
    ring_sgemm<RingTile<SerpentineStep>, GROUP_M>(M, N, K, A, B, C);
}
