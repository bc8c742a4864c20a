// The SGEMM ladder's cp.async primitives: v9_cp_async.cu introduces them and includes them from
// here, as do the rungs after it that keep v9's ring of tiles. Unlike
// ladder.cuh's, they are written against the includer's tile macros (BM BN BK WM WN WMITER WNITER
// TM TN STAGES THREADS AS_LD TILE_FLOATS A_COPIES B_COPIES16 B_COPIES4), defined before the #include, because the copy offsets are folded
// from those macros into immediates.
#pragma once

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

// v9: block blockIdx.x of the 1D grid -> its block-row bm and block-column bn, numbered in groups
// of GROUP block-rows (the rung's GROUP_M), column-major inside a group: the blocks resident at once share a few
// block-rows of A and block-columns of B in L2.
template <int GROUP>
__device__ __forceinline__ void grouped_block(int M, int N, int& bm, int& bn) {
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int pid = blockIdx.x;
    const int per_group = GROUP * grid_n;
    const int first_m = (pid / per_group) * GROUP;
    const int group_rows = min(grid_m - first_m, GROUP);
    bm = first_m + (pid % per_group) % group_rows;
    bn = (pid % per_group) / group_rows;
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

// v9: the kernel body around a rung's tile loop, Tile::run<VEC_BC, FAST> (same arguments as v9's
// gemm_tile): the block's tile from the grouped rasterization, edge blocks moved inward when the
// matrix holds one whole block tile (FAST, no checks), the checked path when it does not; float4
// copies of B and stores of C when N % 4 == 0 and B and C are 16-byte aligned.
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

// v9: the block's tile loop (gemm_tile of v9_cp_async.cu) with the per-tile warp product left to the
// rung: Step::tile(acc, As, Bs, a_off, b_off) runs one shared-memory tile's BK k-steps of this
// thread's fragments (v9's is warp_tile_mma<BK>). The ring of STAGES slots, STAGES-1 tiles in
// flight, one barrier per tile, the FAST / checked contract and the write-back are v9's.
template <class Step, bool VEC_BC, bool FAST>
__device__ __forceinline__ void ring_gemm_tile(int M, int N, int K, const float* __restrict__ A,
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
    int read_off = 0, write_off = (STAGES - 1) * TILE_FLOATS;
    for (int t = 0; t < ktiles; ++t) {
        cp_async_wait<STAGES - 2>();  // this thread's copies of tile t have landed
        __syncthreads();              // everyone's have; and everyone is done with tile t-1's slot
        const int next = t + STAGES - 1;
        if (next < ktiles) {
            copier.template issue<!FAST>(ring + 4u * write_off, k_first + next * BK, M, N, K, A, B);
            copier.advance();
        }
        cp_async_commit();
        const float* stage = smem + read_off;
        Step::tile(acc, reinterpret_cast<const float (*)[AS_LD]>(stage),
                   reinterpret_cast<const float (*)[BN]>(stage + BK * AS_LD), a_off, b_off);
        write_off = read_off;
        read_off = read_off + TILE_FLOATS == STAGES * TILE_FLOATS ? 0 : read_off + TILE_FLOATS;
    }
    ring_write_back<VEC_BC>(acc, smem, C, M, N, row0 + wm, col0 + wn, row_lo, col_lo);
}
