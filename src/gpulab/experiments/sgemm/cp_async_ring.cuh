// The SGEMM ladder's cp.async primitives: v9_cp_async.cu introduces them and includes them from
// here, as do the rungs after it that keep v9's ring of tiles. Unlike ladder.cuh's, they are
// written against the includer's tile params (BM BN BK WM WN WNITER TM TN STAGES, -D defines) and
// the geometry derived from them below, because the copy offsets are folded from those macros into
// immediates.
#pragma once

// The ring's geometry, from the tile params: one definition for every rung that includes this.
#define WARPS ((BM / WM) * (BN / WN))
#define THREADS (WARPS * 32)
#define WMITER (WM / 16)
#define A_COPIES (BM * BK / THREADS)        // 4-byte copies of A per thread per tile
#define B_COPIES16 (BK * BN / 4 / THREADS)  // 16-byte copies of B per thread per tile
#define B_COPIES4 (BK * BN / THREADS)       // 4-byte copies of B on the per-element path
#define AS_LD (BM + 4)                      // A's tile is stored k-major, rows padded by 4 floats
#define TILE_FLOATS (BK * AS_LD + BK * BN)  // one ring slot: A's tile, then B's

// v9: a generic pointer into shared memory as the 32-bit address cp.async and LDS take.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// v9: src-size 0 reads nothing and zero-fills the destination: the ragged-edge guard.
__device__ __forceinline__ void cp_async4(unsigned dst, const float* src, bool in_range) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
                 "r"(in_range ? 4 : 0));
}
__device__ __forceinline__ void cp_async16(unsigned dst, const float* src, bool in_range) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(in_range ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

// v9: copies of A: e = tid + l*THREADS; lanes take 8 consecutive k of 4 rows. THREADS/8 divides BM
// (a constraint), so copy l sits (l*THREADS/8) % BM rows and 8*(l*THREADS/8 / BM) k further on.
#define A_ROW_STEP(l) (((l) * (THREADS / 8)) % BM)
#define A_K_STEP(l) (8 * (((l) * (THREADS / 8)) / BM))
// Copies of B: idx = tid + l*THREADS over BK rows of B_PER_ROW copies (float4s on the 16-byte
// path, floats on the other); the thread count and B_PER_ROW divide one another (a constraint), so
// copy l is a constant number of rows and columns away from copy 0.
#define B_PER_ROW (VEC_BC ? BN / 4 : BN)
#define B_WIDTH (VEC_BC ? 4 : 1)
#define B_COPIES (VEC_BC ? B_COPIES16 : B_COPIES4)
#define B_ROW_STEP(l) (((l) * THREADS) / B_PER_ROW)
#define B_COL_STEP(l) ((((l) * THREADS) % B_PER_ROW) * B_WIDTH)

// v9: one thread's share of the tile copies. On the FAST path every source is a0 (or b0) plus a
// per-block byte stride times a constant plus a constant: one IMAD.WIDE and one cp.async per copy,
// no checks; a0 and b0 move on by one tile per step. The GENERAL path checks everything: rows of A
// past M and columns of B past N are clamped to valid ones (what they bring in reaches only rows
// and columns of C that are never stored), copies outside 0 <= k < K get src-size 0 (zeros), their
// source set to the matrix's first element to be safe.
template <bool VEC_BC>
struct Copier {
    const char* a0;   // A copy 0 of the next tile
    const char* b0;   // B copy 0 of the next tile
    unsigned a_pass;  // bytes between A copies a pass (THREADS/8 rows) apart
    unsigned b_row;   // bytes per row of B
    int row_a, col_b; // copy 0's row of A and column of B (not clamped)
    int a_k, b_r;     // copy 0's k inside a tile, for A and for B

    __device__ __forceinline__ Copier(int M, int N, int K, const float* A, const float* B, int row0,
                                      int col0, int k_first) {
        const int tid = threadIdx.x;
        a_k = tid & 7;
        row_a = row0 + (tid >> 3);
        // Byte offsets computed in integers: k_first may be negative (see gemm_tile).
        a0 = reinterpret_cast<const char*>(A) +
             4 * ((long long)min(row_a, M - 1) * K + a_k + k_first);
        a_pass = (unsigned)(THREADS / 8) * (unsigned)K * 4u;
        b_r = tid / B_PER_ROW;
        col_b = col0 + (tid % B_PER_ROW) * B_WIDTH;
        b0 = reinterpret_cast<const char*>(B) +
             4 * ((long long)(k_first + b_r) * N + (col_b < N ? col_b : col0));
        b_row = (unsigned)N * 4u;
    }

    template <bool GENERAL>
    __device__ __forceinline__ void issue(unsigned slot, int k0, int M, int N, int K, const float* A,
                                          const float* B) {
        const int tid = threadIdx.x;
        const unsigned a_dst = slot + 4u * ((tid & 7) * AS_LD + (tid >> 3));
#pragma unroll
        for (int l = 0; l < A_COPIES; ++l) {
            const unsigned dst = a_dst + 4u * (A_K_STEP(l) * AS_LD + A_ROW_STEP(l));
            if (!GENERAL) {
                const char* src = a0 + (size_t)a_pass * (A_ROW_STEP(l) / (THREADS / 8)) + 4 * A_K_STEP(l);
                cp_async4(dst, reinterpret_cast<const float*>(src), true);
            } else {
                const int r = min(row_a + A_ROW_STEP(l), M - 1), k = k0 + a_k + A_K_STEP(l);
                const bool ok = k >= 0 && k < K;
                cp_async4(dst, ok ? A + (size_t)r * K + k : A, ok);
            }
        }
        const unsigned b_dst = slot + 4u * (BK * AS_LD + b_r * BN + (tid % B_PER_ROW) * B_WIDTH);
#pragma unroll
        for (int l = 0; l < B_COPIES; ++l) {
            const unsigned dst = b_dst + 4u * (B_ROW_STEP(l) * BN + B_COL_STEP(l));
            const float* src;
            bool ok = true;
            if (!GENERAL) {
                src = reinterpret_cast<const float*>(b0 + (size_t)b_row * B_ROW_STEP(l) + 4 * B_COL_STEP(l));
            } else {
                const int r = k0 + b_r + B_ROW_STEP(l);
                int c = col_b + B_COL_STEP(l);
                c = c < N ? c : (VEC_BC ? col_b - (col_b % BN) : N - 1);  // a valid column (float4)
                ok = r >= 0 && r < K;
                src = ok ? B + (size_t)r * N + c : B;
            }
            if (VEC_BC) cp_async16(dst, src, ok);
            else        cp_async4(dst, src, ok);
        }
    }

    __device__ __forceinline__ void advance() {
        a0 += 4 * BK;
        b0 += (size_t)b_row * BK;
    }
};

// v9: tile `pid` of the M x N tiles -> its block-row bm and block-column bn, numbered in groups of
// GROUP block-rows (the rung's GROUP_M), column-major inside a group: the tiles computed at once
// share a few block-rows of A and block-columns of B in L2. (v12's persistent blocks walk the tiles
// in this order; the rungs before it take tile blockIdx.x: grouped_block.)
template <int GROUP>
__device__ __forceinline__ void grouped_tile(int M, int N, int pid, int& bm, int& bn) {
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int per_group = GROUP * grid_n;
    const int first_m = (pid / per_group) * GROUP;
    const int group_rows = min(grid_m - first_m, GROUP);
    bm = first_m + (pid % per_group) % group_rows;
    bn = (pid % per_group) / group_rows;
}
template <int GROUP>
__device__ __forceinline__ void grouped_block(int M, int N, int& bm, int& bn) {
    grouped_tile<GROUP>(M, N, blockIdx.x, bm, bn);
}

// v9: the epilogue. The warp's WMITER x WNITER sub-tiles of acc (its tile of C starts at row wrow,
// column wcol) go out through its 16 x CS_LD slice of the ring (v7's write_back), once no copy is
// pending (only empty groups can be) and every warp has left the ring. Only this block's own rows
// and columns are stored: an edge block moved inward shares some with its neighbour. On the float4
// path col_lo and N are multiples of 4, so a float4 is wholly in or out.
template <bool VEC_BC, int ROWS, int COLS>
__device__ __forceinline__ void ring_write_back(const float (&acc)[ROWS][COLS], float* smem,
                                                float* __restrict__ C, int M, int N, int wrow,
                                                int wcol, int row_lo, int col_lo) {
    cp_async_wait<0>();
    __syncthreads();
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    float* cs = smem + warp * (16 * CS_LD);
    const auto own = [&](int row, int col) {
        return col >= col_lo && col < N && row >= row_lo && row < M;
    };
#pragma unroll
    for (int i = 0; i < ROWS / 4; ++i)
#pragma unroll
        for (int j = 0; j < COLS / 4; ++j)
            write_back<VEC_BC>(cs, acc, i, j, lane, C, N, wrow + i * 16, wcol + j * 32, own);
}

// t_end of a range that runs to the end of K: the loop computes ceil(K / BK) itself (computed by the
// caller instead, ptxas schedules v9's and v11's setup differently: not the same SASS).
#define ALL_K_TILES (-1)

// v9: the block's tile loop over k tiles [t_begin, t_end) of the ceil(K / BK), into acc (zeroed
// here), with the per-tile warp product left to the rung: Step::tile(acc, As, Bs, a_off, b_off) runs
// one shared-memory tile's BK k-steps of this thread's fragments (v9's is WarpTileStep below). The
// block's tile of C is rows [row0, row0+BM) x columns [col0, col0+BN). With FAST, the caller
// guarantees M >= BM and N >= BN and has moved blocks on the bottom and right edges inward (row0 =
// M - BM, ...), so every row and column a FAST block copies is inside A and B. A ragged K is absorbed
// by k tile 0: the tiles start at k_first = (K % BK) - BK < 0, tile 0 is copied on the general path
// (k < 0 reads as zero) in the prologue, and every tile after it is whole, so the main loop never
// checks. The ring of STAGES slots, STAGES-1 tiles in flight (one commit group each: empty groups
// keep the count), one barrier per tile. A range that does not start at tile 0 (sx's slices, v12's
// stream-K segments) starts its copies t_begin tiles on; every tile of it is whole.
// v9_cp_async.cu writes this loop out in full (gemm_tile: the rung that introduces it) and keeps it:
// on this one (NVRTC 13.5), ptxas allocates v9's hot loop differently (v9's default, by
// scripts/sass_banks.py: 881 FFMA with two reads in one bank per 1,024 instead of the 812 that
// v11's header quotes), so v9's measured rows would no longer describe its code.
template <class Step, bool VEC_BC, bool FAST, int ROWS, int COLS>
__device__ __forceinline__ void ring_k_loop(float (&acc)[ROWS][COLS], int M, int N, int K,
                                            const float* __restrict__ A, const float* __restrict__ B,
                                            float* smem, int row0, int col0, int t_begin, int t_end) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    const int wm = (warp / (BN / WN)) * WM;
    const int wn = (warp % (BN / WN)) * WN;
    const int a_off = wm + zigzag_row(lane) * 4, b_off = wn + zigzag_col(lane) * 4;  // v6's lanes
    const unsigned ring = smem_addr(smem);
    const int k_first = (K % BK) ? (K % BK) - BK : 0;
    Copier<VEC_BC> copier(M, N, K, A, B, row0, col0, k_first + t_begin * BK);

    zero(acc);

    const int ktiles = (t_end == ALL_K_TILES ? (K + BK - 1) / BK : t_end) - t_begin;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) {
            const unsigned slot = ring + 4u * (s * TILE_FLOATS);
            const int k0 = k_first + (t_begin + s) * BK;
            // Only k tile 0 of a ragged K starts below k = 0.
            if (FAST && (t_begin + s > 0 || k_first == 0)) copier.template issue<false>(slot, k0, M, N, K, A, B);
            else                                           copier.template issue<true>(slot, k0, M, N, K, A, B);
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
            copier.template issue<!FAST>(ring + 4u * write_off, k_first + (t_begin + next) * BK, M, N, K, A, B);
            copier.advance();
        }
        cp_async_commit();
        const float* stage = smem + read_off;
        Step::tile(acc, reinterpret_cast<const float (*)[AS_LD]>(stage),
                   reinterpret_cast<const float (*)[BN]>(stage + BK * AS_LD), a_off, b_off);
        write_off = read_off;
        read_off = read_off + TILE_FLOATS == STAGES * TILE_FLOATS ? 0 : read_off + TILE_FLOATS;
    }
}

// v9: ring_k_loop's tile of C over k tiles [t_begin, t_end), written back to dst (C, or sx's
// workspace plane): only rows >= row_lo and columns >= col_lo (and inside M x N) are stored, so the
// rows an edge block moved inward shares with its neighbour are computed by both, stored once.
template <class Step, bool VEC_BC, bool FAST>
__device__ __forceinline__ void ring_gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ dst,
                                               float* smem, int row0, int col0, int row_lo, int col_lo,
                                               int t_begin, int t_end) {
    float acc[WMITER * TM][WNITER * TN];
    ring_k_loop<Step, VEC_BC, FAST>(acc, M, N, K, A, B, smem, row0, col0, t_begin, t_end);
    const int warp = threadIdx.x >> 5;
    const int wm = (warp / (BN / WN)) * WM;
    const int wn = (warp % (BN / WN)) * WN;
    ring_write_back<VEC_BC>(acc, smem, dst, M, N, row0 + wm, col0 + wn, row_lo, col_lo);
}

// v9's per-tile product: v6's warp tile, in 4 x 4 blocks of a row fragment by a column fragment.
struct WarpTileStep {
    template <int R, int CC, int LDA, int LDB>
    __device__ __forceinline__ static void tile(float (&acc)[R][CC], const float (*As)[LDA],
                                                const float (*Bs)[LDB], int a_off, int b_off) {
        warp_tile_mma<BK>(acc, As, Bs, a_off, b_off);
    }
};

// v9: the kernel body around a rung's tile loop, Tile::run<VEC_BC, FAST> (RingTile<Step> below for
// the rungs on ring_k_loop; v10 has its own loop): the block's tile from the grouped rasterization,
// edge blocks moved inward when the matrix holds one whole block tile (FAST, no checks), the
// checked path when it does not; float4 copies of B and stores of C when N % 4 == 0 and B and C
// are 16-byte aligned.
template <class Tile, int GROUP>
__device__ __forceinline__ void ring_sgemm(int M, int N, int K, const float* __restrict__ A,
                                           const float* __restrict__ B, float* __restrict__ C) {
    extern __shared__ float4 smem4[];  // the ring of STAGES tiles, later the write-back slices
    float* smem = reinterpret_cast<float*>(smem4);

    int bm, bn;
    grouped_block<GROUP>(M, N, bm, bn);
    const int row_lo = bm * BM, col_lo = bn * BN;
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (M >= BM && N >= BN) {  // edge blocks move inward so that every copy is in range
        const int row0 = min(row_lo, M - BM), col0 = min(col_lo, N - BN);
        if (vec_bc) Tile::template run<true, true>(M, N, K, A, B, C, smem, row0, col0, row_lo, col_lo);
        else        Tile::template run<false, true>(M, N, K, A, B, C, smem, row0, col0, row_lo, col_lo);
    } else {  // a matrix smaller than one block tile: the checked path throughout
        if (vec_bc) Tile::template run<true, false>(M, N, K, A, B, C, smem, row_lo, col_lo, row_lo, col_lo);
        else        Tile::template run<false, false>(M, N, K, A, B, C, smem, row_lo, col_lo, row_lo, col_lo);
    }
}

// ring_sgemm's handle on ring_gemm_tile over all of K with the per-tile product Step.
template <class Step>
struct RingTile {
    template <bool VEC_BC, bool FAST>
    __device__ __forceinline__ static void run(int M, int N, int K, const float* __restrict__ A,
                                               const float* __restrict__ B, float* __restrict__ C,
                                               float* smem, int row0, int col0, int row_lo, int col_lo) {
        ring_gemm_tile<Step, VEC_BC, FAST>(M, N, K, A, B, C, smem, row0, col0, row_lo, col_lo, 0, ALL_K_TILES);
    }
};

// v11's per-tile product (v11_register_banks.cu says why): the order of a k-step's outer product
// chosen so that ptxas can keep each FFMA's two register-file reads in different banks.
struct SerpentineStep {
    // One tile of BK k-steps. Per k-step, v6's fragments (MI float4s of As 16 rows apart from a_off,
    // NI of Bs 32 columns apart from b_off), then the outer product column by column: b[c] is the
    // reused operand of its column's R FFMAs; the rows run down on even columns and up on odd ones.
    template <int R, int CC, int LDA, int LDB>
    __device__ __forceinline__ static void tile(float (&acc)[R][CC], const float (*As)[LDA],
                                                const float (*Bs)[LDB], int a_off, int b_off) {
        constexpr int MI = R / 4, NI = CC / 4;
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[R], b[CC];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const float4 v = load_float4(&As[k][a_off + i * 16]);
                a[4 * i] = v.x; a[4 * i + 1] = v.y; a[4 * i + 2] = v.z; a[4 * i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const float4 v = load_float4(&Bs[k][b_off + j * 32]);
                b[4 * j] = v.x; b[4 * j + 1] = v.y; b[4 * j + 2] = v.z; b[4 * j + 3] = v.w;
            }
#pragma unroll
            for (int c = 0; c < CC; ++c)
#pragma unroll
                for (int rr = 0; rr < R; ++rr) {
                    const int r = (c & 1) ? R - 1 - rr : rr;
                    acc[r][c] += a[r] * b[c];
                }
        }
    }
};
