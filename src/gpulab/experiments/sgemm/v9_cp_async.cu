// v9 cp.async multi-stage pipeline in dynamic shared memory, with grouped block rasterization.
//
// Changed from v8: the tiles no longer pass through registers. Global -> shared copies are cp.async
// (sm_80+), completing in the background; a ring of STAGES tile buffers in dynamic shared memory
// keeps STAGES-1 tiles in flight while one is computed, and one barrier per tile both publishes the
// landed tile and frees the slot the next copy reuses.
//   B: 16-byte cp.async.cg (L2 only) when N % 4 == 0 and B, C are 16-byte aligned, else 4-byte
//      cp.async.ca per element into the same layout (chosen at run time).
//   A: 4-byte cp.async.ca per element, because A must land transposed, As[k][m], for the LDS.128
//      fragment reads, and a copy cannot transpose: lanes take 8 consecutive k of 4 rows (one
//      32-byte sector per row) and land in 32 distinct banks of the padded As (bank 4k + m).
//      At the default 64 x 128 x 8 with 64 threads: 8 + 4 copies per thread per tile, 1024 FMAs.
// No checks in the main loop: with M >= BM and N >= BN, blocks on the bottom and right edges are
// moved inward (row0 = M - BM, col0 = N - BN) so that every row and column they copy exists; the
// rows and columns they share with a neighbour are computed twice and stored once. A ragged K is
// absorbed by the first tile, which starts at k = K % BK - BK < 0 and is copied in the prologue
// with k < 0 zero-filled (src-size 0); every later tile is whole. A matrix smaller than one block
// tile takes a fully checked copy path instead (clamped rows and columns, zero-filled k).
// Blocks are numbered in groups of GROUP_M block-rows (column-major inside a group), so the blocks
// resident at once share a few block-rows of A and block-columns of B in L2.
// Why not Hopper's bulk tensor copies (TMA + mbarrier): they cannot transpose A either, so only B
// could use them, and the copies already cost ~2-3% of the issued instructions (one IMAD.WIDE and
// one LDGSTS each, 12 per 1024 FFMA); the kernel is bound by FFMA issue and the shared-memory
// pipe, which TMA does not touch, so it would add mbarrier waits to save a handful of instructions.
// Expected effect: v8 held the next tile in registers (8 more per thread at 8 x 8, 16 at 16 x 8) and
// spent STS and predicated LDG instructions on it each tile, only one tile ahead; here 2-4 tiles are
// in flight with no registers held and ~90% of the main loop's instructions are FFMA (SASS: 1024
// FFMA of 1128 per tile at 16 x 8 per thread). The default block tile is 64 x 128: two warps of
// 64 x 64 (16 x 8 per thread), 216 registers, so 4 blocks (8 warps) share an SM; smaller blocks
// than v8's 128 x 128 wait at cheaper barriers (2 warps) and fill the last wave more evenly.
// Expect 1.1-1.3x v8 at 4096^3: 44-50 TFLOP/s, 90-100% of cuBLAS (49-51), if the FMA pipe stays
// ~75-80% busy; the rest is the 10% non-FFMA issue, barrier waits and the tail wave.
// Params: BM, BN, BK (multiple of 8), WM (multiple of 16), WN = 32*WNITER, WNITER, TM = TN = 4,
//   STAGES (2-5 ring slots), MINB (blocks per SM the registers are sized for), GROUP_M (block-rows
//   per rasterization group; 1 = plain row order). Dynamic shared memory:
//   max(STAGES*(BK*(BM+4) + BK*BN), warps*16*36) floats.
// Shapes: any M, N, K >= 1 (16-byte or 4-byte B copies and float4 or scalar C stores chosen at run
//   time; edges as above).
#include "sgemm/ladder.cuh"

// The copies (cp.async wrappers, the A/B copy offsets, the Copier with its fast and general
// paths) are this rung's idea, written once in cp_async_ring.cuh for it and the rungs after it.
#include "sgemm/cp_async_ring.cuh"

// The block's tile of C is rows [row0, row0+BM) x columns [col0, col0+BN); it stores only rows
// >= row_lo and columns >= col_lo (and inside C). With FAST, the caller guarantees M >= BM and
// N >= BN and has moved blocks on the bottom and right edges inward (row0 = M - BM, ...), so every
// row and column a FAST block copies is inside A and B; the rows it shares with its neighbour are
// computed by both and stored by the neighbour only. A ragged K is absorbed by the first tile: the
// tiles start at k_first = (K % BK) - BK < 0, the first one is copied on the general path (k < 0
// reads as zero) in the prologue, and every tile after it is full, so the main loop never checks.
template <bool VEC_BC, bool FAST>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float* smem, int row0, int col0, int row_lo, int col_lo) {
    const int tid = threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = (warp / (BN / WN)) * WM;
    const int wn = (warp % (BN / WN)) * WN;
    const int lr = zigzag_row(lane), lc = zigzag_col(lane);  // v6's lane grid
    const unsigned ring = smem_addr(smem);
    const int k_first = (K % BK) ? (K % BK) - BK : 0;
    Copier<VEC_BC> copier(M, N, K, A, B, row0, col0, k_first);

    float acc[WMITER * TM][WNITER * TN];
    zero(acc);

    const int ktiles = (K + BK - 1) / BK;
    // Prologue: STAGES-1 tiles in flight, one commit group each (empty groups keep the count).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) {
            const unsigned slot = ring + 4u * (s * TILE_FLOATS);
            if (FAST && (s > 0 || k_first == 0)) copier.template issue<false>(slot, k_first + s * BK, M, N, K, A, B);
            else                                 copier.template issue<true>(slot, k_first + s * BK, M, N, K, A, B);
            copier.advance();
        }
        cp_async_commit();
    }

    // Ring positions as float offsets; the slot written at step t is the one read at step t-1.
    int read_off = 0, write_off = (STAGES - 1) * TILE_FLOATS;
    for (int t = 0; t < ktiles; ++t) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of tile t have landed
        __syncthreads();              // everyone's have; and everyone is done with tile t-1's slot
        const int next = t + STAGES - 1;
        if (next < ktiles) {
            const unsigned slot = ring + 4u * write_off;
            copier.template issue<!FAST>(slot, k_first + next * BK, M, N, K, A, B);
            copier.advance();
        }
        cp_async_commit();

        const float* stage = smem + read_off;
        const float (*As)[AS_LD] = reinterpret_cast<const float (*)[AS_LD]>(stage);
        const float (*Bs)[BN] = reinterpret_cast<const float (*)[BN]>(stage + BK * AS_LD);
        warp_tile_mma<BK>(acc, As, Bs, wm + lr * 4, wn + lc * 4);  // v6's
        write_off = read_off;
        read_off = read_off + TILE_FLOATS == STAGES * TILE_FLOATS ? 0 : read_off + TILE_FLOATS;
    }

    // Write-back through this warp's slice of shared memory (as v7). No copies are pending (only
    // empty groups can be), and the barrier makes sure every warp has left the ring.
    cp_async_wait<0>();
    __syncthreads();
    float* cs = smem + warp * (16 * CS_LD);
    // Only this block's own rows and columns: an edge block moved inward shares some with its
    // neighbour. On the float4 path col_lo and N are multiples of 4: a float4 is wholly in or out.
    const auto own = [&](int row, int col) {
        return col >= col_lo && col < N && row >= row_lo && row < M;
    };
#pragma unroll
    for (int i = 0; i < WMITER; ++i)
#pragma unroll
        for (int j = 0; j < WNITER; ++j)
            write_back<VEC_BC>(cs, acc, i, j, lane, C, N, row0 + wm + i * 16, col0 + wn + j * 32,
                               own);
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C) {
    extern __shared__ float4 smem4[];  // the ring of STAGES tiles, later the write-back slices
    float* smem = reinterpret_cast<float*>(smem4);

    // Grouped rasterization of the 1D grid: GROUP_M block-rows at a time, column-major inside.
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x;
    const int per_group = GROUP_M * grid_n;
    const int first_m = (pid / per_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int bm = first_m + (pid % per_group) % group_rows;
    const int bn = (pid % per_group) / group_rows;

    const int row_lo = bm * BM, col_lo = bn * BN;
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (M >= BM && N >= BN) {  // edge blocks move inward so that every copy is in range
        const int row0 = min(row_lo, M - BM), col0 = min(col_lo, N - BN);
        if (vec_bc) gemm_tile<true, true>(M, N, K, A, B, C, smem, row0, col0, row_lo, col_lo);
        else        gemm_tile<false, true>(M, N, K, A, B, C, smem, row0, col0, row_lo, col_lo);
    } else {  // a matrix smaller than one block tile: the checked path throughout
        if (vec_bc) gemm_tile<true, false>(M, N, K, A, B, C, smem, row_lo, col_lo, row_lo, col_lo);
        else        gemm_tile<false, false>(M, N, K, A, B, C, smem, row_lo, col_lo, row_lo, col_lo);
    }
}
