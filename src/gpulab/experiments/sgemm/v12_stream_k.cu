// v12 stream-K: a persistent grid that shares the (tile, k tile) iterations evenly among its
// blocks, so that no SM idles through a partial last wave of tiles.
//
// Changed from v11: the schedule only. v11 launches one block per 64 x 128 tile and the card runs
// them in waves of (blocks per SM) x 132; v12 launches exactly MINB x SMs blocks (all resident at
// once) and each takes a contiguous, even share of the linearized iteration space: the tiles in
// v9's grouped order, each tile's ceil(K / BK) k tiles in order. A share runs across tile borders:
// a block computes the end of one tile (a later segment), whole tiles, and the start of another
// (the segment holding k tile 0). The block holding a tile's k tile 0 has it at the END of its
// share; the blocks holding its later segments have them at the START of theirs, finish them first,
// write their partial accumulators to a workspace slot of their own (thread-major:
// work[block][register][thread], coalesced, no layout) and release a flag; the first block waits
// (acquire spin) for each, adds the partials in block order (= k order: the same bits on every run
// on a card), and stores the tile through v9's write-back. It resets each flag it consumed, so the
// next launch needs no memset.
// Hybrid schedule (Osama et al., "Stream-K: Work-centric Parallel Decomposition for Dense Matrix-
// Matrix Multiplication on the GPU", PPoPP 2023, https://arxiv.org/abs/2301.03598): with T tiles
// and G blocks, the last T % G tiles plus SK_ROUNDS full rounds of G tiles are shared stream-K
// (computed first), the other tiles are whole, tile sk + b + r*G for block b (data-parallel: no
// fixup). SK_ROUNDS = 0 shares only the remainder (thin slices of a tile per block: many fixups); 1
// gives each block 1-2 tiles' worth; a large value makes the whole space stream-K.
// The loop (ring, copies, the FAST / checked contract, ragged k tile 0) is cp_async_ring.cuh's
// ring_k_loop over a k-tile range, the k-step is v11's SerpentineStep, the write-back v9's.
// Why (H200, 132 SMs, % of cuBLAS FP32, 2026-12-01): v11 tuned (64 x 128 x 16, 128 threads, 2
// blocks/SM) reaches 99.2% at 8192^3 but 94.6% at 4096^3, where 2048 tiles on 264 slots are 7.76
// rounds (SMs run 15 or 16 tiles: ~3% tail) at a steady rate equal to cuBLAS's (51 TFLOP/s); v9
// gets 92.2% at 1024^3 (128 tiles for 264 slots: half the card idle), 92.5% at 2048^3, 94.1% at
// 4000^3, 91.9% at 4097^3 (65 x 33 tiles = 8.1 rounds of 264).
// Expected effect: every SM busy to the end, at the cost of one partial tile written and read back
// per split tile (BM*BN*4 = 32 KiB, L2-resident) and a short wait where a tile's first block
// reaches it before its later segments are done (they ran first, so rarely). 1024^3: the whole card
// instead of half (the 128 tiles' 8,192 k-tile iterations over 264 blocks, 31 each, every tile
// split in two or three): expect 1.2-1.5x v9 there (short shares pay the ring's prologue and the
// fixup more often), >= 0.95x cuBLAS; 4096^3: the ~3% tail, ~1.00-1.03x cuBLAS; 4097^3 (and
// 4000^3): ~8%; 8192^3 (8192 tiles = 31.03 rounds): ~1%, at best even with v11.
// Measured (H200, 2026-12-01, % of cuBLAS in the same run, tuned at 1024^3: 64 x 128 x 8,
//   SK_ROUNDS=99): 97.6% at 1024^3 (v9 93.6%); but 81-86% on the large squares (2048^3 to 8192^3),
//   where v11 runs 91-99%: 195-197 registers (the schedule's bookkeeping) leave two blocks of four
//   warps per SM where v11's 161 fit three, and MINB=3 spills. The best row uses it at 1024^3 only.
// Params: v11's (BM, BN, BK multiple of 8, WM multiple of 16, WN = 32*WNITER, TM = TN = 4, STAGES,
//   GROUP_M); MINB is also the grid: MINB blocks per SM (the registers are sized for it and the
//   registry checks that shared memory and threads hold MINB per SM too, so every block is resident
//   and a spin-wait always ends); SK_ROUNDS (full rounds shared stream-K beside the partial one).
//   Defaults: 64 x 128 x 16, four 32 x 64 warps (128 threads), STAGES=2, MINB=2, GROUP_M=8,
//   SK_ROUNDS=1. Dynamic shared memory as v9. Extra arguments: the workspace, G x BM x BN floats (G
//   = min(MINB x SMs, iterations): 8.25 MiB at 264 x 64 x 128), and G flags (zero before the first
//   launch; every launch leaves them zero).
// Shapes: any M, N, K >= 1 (v9's edges and paths: edge tiles moved inward, K % BK absorbed by k
//   tile 0, per-element B copies and C stores when N % 4 != 0, the checked path below one tile).
#include "sgemm/ladder.cuh"
#include "sgemm/cp_async_ring.cuh"

#define ACC_ROWS (WMITER * TM)  // a thread's accumulators: rows and columns of its fragments
#define ACC_COLS (WNITER * TN)

static_assert(WN == 32 * WNITER && TM == 4 && TN == 4, "a warp sub-tile is 4 x 8 lanes of 4 x 4 floats");
static_assert(STAGES >= 2 && BK % 8 == 0, "a ring of at least two slots of whole 8-deep copies of A");

// The flags: a block's later segment is published with a release store after its partial is
// written; the tile's first block reads the flag with an acquire load (gpu scope: other SMs).
__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void store_release(unsigned* p, unsigned v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}

// The stream-K share: iterations [0, iters) split as block b -> [b*iters/G, (b+1)*iters/G).
struct Shares {
    long long iters;
    int blocks;
    __device__ __forceinline__ long long begin(int b) const { return (long long)b * iters / blocks; }
    // The block whose share holds iteration i: the largest b with begin(b) <= i (never an empty one).
    __device__ __forceinline__ int owner(long long i) const { return (int)(((i + 1) * blocks - 1) / iters); }
};

// Tile `tile` (grouped order) over k tiles [t0, t1) of its kt: a later segment (t0 > 0) goes to this
// block's workspace slot; a first segment that is not the whole tile adds the later ones (blocks
// after this one, in order) before storing.
template <bool VEC_BC, bool FAST>
__device__ __forceinline__ void segment(int M, int N, int K, const float* __restrict__ A,
                                        const float* __restrict__ B, float* __restrict__ C,
                                        float* __restrict__ work, unsigned* __restrict__ flags,
                                        float* smem, int tile, int t0, int t1, int kt, const Shares& sk) {
    int bm, bn;
    grouped_tile<GROUP_M>(M, N, tile, bm, bn);
    const int row_lo = bm * BM, col_lo = bn * BN;
    const int row0 = FAST ? min(row_lo, M - BM) : row_lo, col0 = FAST ? min(col_lo, N - BN) : col_lo;
    // Every warp is done with the previous segment's ring slots and write-back slices.
    __syncthreads();
    float acc[ACC_ROWS][ACC_COLS];
    ring_k_loop<SerpentineStep, VEC_BC, FAST>(acc, M, N, K, A, B, smem, row0, col0, t0, t1);

    constexpr int REGS = ACC_ROWS * ACC_COLS;
    if (t0 > 0) {  // a later segment: only a block's first segment can be one, so one slot a block
        float* slot = work + (size_t)blockIdx.x * REGS * THREADS + threadIdx.x;
#pragma unroll
        for (int r = 0; r < ACC_ROWS; ++r)
#pragma unroll
            for (int c = 0; c < ACC_COLS; ++c) __stcg(slot + (r * ACC_COLS + c) * THREADS, acc[r][c]);
        __threadfence();
        __syncthreads();  // every thread's partial is written (and fenced) before the flag
        if (threadIdx.x == 0) store_release(flags + blockIdx.x, 1u);
        return;
    }
    if (t1 < kt) {  // the first segment of a split tile: the later ones are blocks blockIdx.x+1..last
        const int last = sk.owner((long long)tile * kt + kt - 1);
        for (int p = blockIdx.x + 1; p <= last; ++p) {
            if (sk.begin(p) == sk.begin(p + 1)) continue;  // an empty share (fewer iterations than blocks)
            if (threadIdx.x == 0) {
                while (load_acquire(flags + p) == 0) {}
                flags[p] = 0;  // consumed: zero for the next launch (block p publishes once a launch)
            }
            __syncthreads();  // thread 0's acquire orders every thread's reads below after p's writes
            const float* slot = work + (size_t)p * REGS * THREADS + threadIdx.x;
#pragma unroll
            for (int r = 0; r < ACC_ROWS; ++r)
#pragma unroll
                for (int c = 0; c < ACC_COLS; ++c) acc[r][c] += __ldcg(slot + (r * ACC_COLS + c) * THREADS);
        }
    }
    const int warp = threadIdx.x >> 5;
    ring_write_back<VEC_BC>(acc, smem, C, M, N, row0 + (warp / (BN / WN)) * WM, col0 + (warp % (BN / WN)) * WN,
                            row_lo, col_lo);
}

template <bool VEC_BC, bool FAST>
__device__ __forceinline__ void persistent(int M, int N, int K, const float* __restrict__ A,
                                           const float* __restrict__ B, float* __restrict__ C,
                                           float* __restrict__ work, unsigned* __restrict__ flags, float* smem) {
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN), kt = (K + BK - 1) / BK;
    const int G = gridDim.x, b = blockIdx.x;
    // The hybrid: the remainder and SK_ROUNDS full rounds stream-K (tiles [0, sk)), the rest whole.
    const int sk_tiles = tiles % G + min(SK_ROUNDS, tiles / G) * G;
    const Shares sk{(long long)sk_tiles * kt, G};
    // One loop over the block's segments (one inlined copy of the ring loop): its share of the
    // stream-K iterations first, then its whole tiles sk_tiles + b, + G, ...
    const long long end = sk.begin(b + 1);
    long long it = sk.begin(b);
    for (int dp = sk_tiles + b;;) {
        int tile, t0, t1;
        if (it < end) {
            tile = (int)(it / kt);
            t0 = (int)(it - (long long)tile * kt);
            t1 = (int)min((long long)kt, end - (long long)tile * kt);
            it = (long long)tile * kt + t1;
        } else if (dp < tiles) {
            tile = dp, t0 = 0, t1 = kt;
            dp += G;
        } else {
            break;
        }
        segment<VEC_BC, FAST>(M, N, K, A, B, C, work, flags, smem, tile, t0, t1, kt, sk);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C,
                                                                  float* __restrict__ work,
                                                                  unsigned* __restrict__ flags) {
    extern __shared__ float4 smem4[];  // the ring of STAGES tiles, later the write-back slices
    float* smem = reinterpret_cast<float*>(smem4);
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (M >= BM && N >= BN) {  // edge tiles move inward so that every copy is in range
        if (vec_bc) persistent<true, true>(M, N, K, A, B, C, work, flags, smem);
        else        persistent<false, true>(M, N, K, A, B, C, work, flags, smem);
    } else {  // a matrix smaller than one block tile: the checked path throughout
        if (vec_bc) persistent<true, false>(M, N, K, A, B, C, work, flags, smem);
        else        persistent<false, false>(M, N, K, A, B, C, work, flags, smem);
    }
}
