// v13 split tail: v11's blocks in whole waves, and only the last, partial wave's tiles split along K.
//
// Changed from v11: the grid. v11 launches one block per 64 x 128 tile and the card runs them in
// waves of W = RESIDENT x SMs blocks (396 at three blocks on each of 132 SMs); when the tiles are
// not a multiple of W the last wave is partial and most of the card idles through it. Here the host
// (sgemm.splitk.launch.split_tail_plan) keeps the first D = tiles - (tiles % W) tiles whole, one block each, run
// by v11's own kernel body, and cuts each of the last tiles % W tiles into `splits` slices of K,
// one block each, with `splits` chosen so that the slices fill the card's slots as evenly as they
// can. Blocks start in index order, so the whole tiles run first and the slices fill the end. A
// slice writes its partial tile to a workspace slot (thread-major, as v12: work[slot][register]
// [thread], each warp's stores whole 128-byte lines); the block that arrives last at the tile
// (split_k.cuh's counter) adds the slices' partials in slice order (the same bits on every run) and
// stores the tile through v9's write-back. v12's stream-K fixes the same tail, but its schedule's
// bookkeeping lives through the main loop (195 registers: two blocks per SM where v11 fits three);
// here a block's work is decided once, from its index, and the slices' path is a function of its
// own, so the whole tiles' code is v11's.
// Why (H200, 2026-12-01, % of cuBLAS FP32, v11 tuned: 64 x 128 x 16, 161 registers, 3 blocks/SM):
//   4096^3 has 2,048 tiles for 396 slots: 5 full waves and 68 tiles (0.17 of a wave) that keep 68
//   SMs busy for part of a sixth; v11 ran 94.2% there, 98.6% at 8192^3 (8,192 tiles: 20.7 waves),
//   73.6% at 2048^3 (512 tiles: 1.29 waves).
// Expected effect: 4096^3: the 68 tiles in 5 slices each (340 blocks, one wave of 1/5-deep slices),
//   5.2 waves of work where v11's last tiles run alone: a few %, past cuBLAS only if that tail is
//   most of the gap. 8192^3: 272 tiles in 7 slices, 20.71 waves for 20.69 of work: ~+1%. 2048^3:
//   116 tiles in 3 slices: 1.33 waves instead of 2. The cost: each split tile's slices write and
//   read back splits x 32 KiB of L2-resident partials, and each slice runs the ring's prologue.
// Measured (H200, 2026-12-01, % of cuBLAS FP32 alternating with v11 and cuBLAS, default S=8):
//   4096^3 97.9% (v11 94.5%), 8192^3 99.6% (99.1%), 2048^3 91.5% (73.5%); S=1 times as v11.
// Params: v11's (BM, BN, BK multiple of 8, WM multiple of 16, WN = 32*WNITER, TM = TN = 4, STAGES,
//   MINB, GROUP_M); RESIDENT: blocks per SM the tail is planned for (the wave is RESIDENT x SMs; it
//   should be the occupancy ptxas's registers allow, which the bench row shows: a larger one splits
//   too little, a smaller one too much, and the result is right either way); S: the most slices a
//   tail tile is cut into (the plan picks 1..S). Defaults: 64 x 128 x 16, four 32 x 64 warps (128
//   threads), STAGES=2, MINB=1 (161 registers under NVRTC 13.0: three blocks per SM), RESIDENT=3,
//   GROUP_M=8, S=8. Dynamic shared memory as v9. Extra arguments: the workspace (tail tiles x splits
//   x BM x BN floats), a counter per tail tile (zero before the first launch; every launch leaves
//   them zero), D (whole tiles) and splits.
// Shapes: any M, N, K >= 1 (v9's edges and paths: edge tiles moved inward, K % BK absorbed by k tile
//   0, which only slice 0 holds, per-element B copies and C stores when N % 4 != 0, the checked path
//   below one tile).
#include "sgemm/ladder.cuh"
#include "sgemm/cp_async_ring.cuh"
#include "sgemm/split_k.cuh"

#define ACC_ROWS (WMITER * TM)  // a thread's accumulators: rows and columns of its fragments
#define ACC_COLS (WNITER * TN)
#define REGS (ACC_ROWS * ACC_COLS)

static_assert(WN == 32 * WNITER && TM == 4 && TN == 4, "a warp sub-tile is 4 x 8 lanes of 4 x 4 floats");
static_assert(STAGES >= 2 && BK % 8 == 0, "a ring of at least two slots of whole 8-deep copies of A");

// Block whole + u of the grid: slice z = u / tail of tail tile whole + u % tail (grouped order), its
// k tiles [z * kt / splits, (z + 1) * kt / splits); the first slices of every tail tile start before
// any second slice. Its partial goes to workspace slot u; the last slice to arrive at the tile adds
// all of the tile's slots in slice order (the same bits on every run) and stores the tile.
template <bool VEC_BC, bool FAST>
__device__ __forceinline__ void slice_tile(int M, int N, int K, const float* __restrict__ A,
                                           const float* __restrict__ B, float* __restrict__ C,
                                           float* __restrict__ work, unsigned* __restrict__ counters,
                                           float* smem, int whole, int splits) {
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN), kt = (K + BK - 1) / BK;
    const int u = (int)blockIdx.x - whole, tail = tiles - whole;
    const int tile = whole + u % tail, z = u / tail;
    int bm, bn;
    grouped_tile<GROUP_M>(M, N, tile, bm, bn);
    const int row_lo = bm * BM, col_lo = bn * BN;
    const int row0 = FAST ? min(row_lo, M - BM) : row_lo, col0 = FAST ? min(col_lo, N - BN) : col_lo;
    float acc[ACC_ROWS][ACC_COLS];
    ring_k_loop<SerpentineStep, VEC_BC, FAST>(acc, M, N, K, A, B, smem, row0, col0, z * kt / splits,
                                              (z + 1) * kt / splits);
    float* mine = work + (size_t)u * REGS * THREADS + threadIdx.x;  // thread-major: whole lines per warp
#pragma unroll
    for (int i = 0; i < REGS; ++i) __stcg(mine + i * THREADS, acc[i / ACC_COLS][i % ACC_COLS]);
    if (!last_to_arrive(counters + (tile - whole), splits)) return;
    // Slice by slice, a slice's REGS loads in flight at once.
    const float* slot = work + (size_t)(tile - whole) * REGS * THREADS + threadIdx.x;
    const size_t next_slice = (size_t)tail * REGS * THREADS;  // the slot of slice z + 1 of the same tile
#pragma unroll
    for (int i = 0; i < REGS; ++i) acc[i / ACC_COLS][i % ACC_COLS] = __ldcg(slot + i * THREADS);
#pragma unroll 1
    for (int p = 1; p < splits; ++p) {
        slot += next_slice;
#pragma unroll
        for (int i = 0; i < REGS; ++i) acc[i / ACC_COLS][i % ACC_COLS] += __ldcg(slot + i * THREADS);
    }
    const int warp = threadIdx.x >> 5;
    ring_write_back<VEC_BC>(acc, smem, C, M, N, row0 + (warp / (BN / WN)) * WM, col0 + (warp % (BN / WN)) * WN,
                            row_lo, col_lo);
}

// The slices' path, out of line: ptxas allocates registers and schedules a function on its own, so
// the kernel's body (the whole tiles) compiles as v11's does, its main loop the same instructions
// under NVRTC 13.0. (Inlined, with one loop over a run-time k range for whole tiles and slices
// alike, ptxas allocated that loop differently: 217 FFMA bank collisions per 1,024 against v11's 191.)
__device__ __noinline__ void slice(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B,
                                   float* __restrict__ C, float* __restrict__ work, unsigned* __restrict__ counters,
                                   int whole, int splits) {
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (M >= BM && N >= BN) {  // edge tiles move inward so that every copy is in range
        if (vec_bc) slice_tile<true, true>(M, N, K, A, B, C, work, counters, smem, whole, splits);
        else        slice_tile<false, true>(M, N, K, A, B, C, work, counters, smem, whole, splits);
    } else {  // a matrix smaller than one block tile: the checked path throughout
        if (vec_bc) slice_tile<true, false>(M, N, K, A, B, C, work, counters, smem, whole, splits);
        else        slice_tile<false, false>(M, N, K, A, B, C, work, counters, smem, whole, splits);
    }
}

// Blocks [0, whole): v11's kernel body, tile blockIdx.x in grouped order, whole. The rest: slices.
extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C,
                                                                  float* __restrict__ work,
                                                                  unsigned* __restrict__ counters,
                                                                  int whole, int splits) {
    if ((int)blockIdx.x < whole) {
        ring_sgemm<RingTile<SerpentineStep>, GROUP_M>(M, N, K, A, B, C);
        return;
    }
    slice(M, N, K, A, B, C, work, counters, whole, splits);
}
