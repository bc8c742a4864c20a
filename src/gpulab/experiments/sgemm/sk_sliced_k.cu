// sk sliced-K small tiles: for shapes whose output has too few tiles to fill the card.
//
// Changed from the ladder (v2-v9), which gives each block one BM x BN tile of C and walks all of K
// with one group of threads: a tall-skinny product (4096 x 64 x 4096) has only 32 tiles of v9's
// 64 x 128 for 132 SMs, and a 1 x N x K product (GEMV-like) wastes 63 of 64 rows of every tile.
// Here the block tile is small (BM and BN down to 1: many blocks even when M or N is tiny) and the
// block's threads are KS groups that split each BK-deep k tile between them (sliced K: group g
// takes k rows g, g+KS, ...). At the end each group leaves its partial BM x BN sums in shared
// memory and the block adds them in the fixed order g = 0..KS-1 before one coalesced store: the
// result is deterministic (the same bits on every run, no atomics, no workspace, one launch).
// The next k tile is loaded into registers while this one is computed (as v8), so the loads of a
// memory-bound shape stay in flight during the FMAs.
// Expected effect: many more blocks on few-tile shapes (4096 x 64 x 4096 at 16 x 64 tiles: 256
// blocks instead of 32), each with KS times the threads a small tile alone could employ. The
// 1 x N x K product is bound by reading B (4*K*N bytes): its ceiling is the copy bandwidth, and at
// BN=32, KS=8 a warp reads one 128-byte row segment of B per k. Skinny compute-bound products stay
// below the ladder's FFMA efficiency (scalar shared loads, TM x TN <= 16 per thread): this variant
// is for the shapes the ladder cannot fill, not for squares.
// Params: BM, BN (block tile, 1..128), BK (k depth of one tile), TM, TN (each thread's outputs,
//   strided BM/TM rows and BN/TN columns apart so lanes read consecutive shared words and store
//   consecutive columns), KS (k groups per block), MINB (blocks per SM the registers are sized
//   for: __launch_bounds__). Threads = KS * (BM/TM) * (BN/TN).
//   Shared memory (static): max(BK*(BM+1) + BK*BN, KS*BM*BN) floats (tiles, then the partial sums).
// Shapes: any M, N, K >= 1: loads outside A or B fill zeros, stores outside C are skipped.
#include "common.cuh"

constexpr int THREADS_M = BM / TM;  // threads along a tile's rows
constexpr int THREADS_N = BN / TN;  // threads along a tile's columns
constexpr int GROUP = THREADS_M * THREADS_N;  // threads of one k group
constexpr int THREADS = KS * GROUP;
constexpr int A_TILE = BM * BK, B_TILE = BK * BN;
constexpr int A_PER_THREAD = (A_TILE + THREADS - 1) / THREADS;
constexpr int B_PER_THREAD = (B_TILE + THREADS - 1) / THREADS;
constexpr int A_STRIDE = BM + 1;  // As[k][m], padded: a column of consecutive k lands in distinct banks
constexpr int TILE_FLOATS = BK * A_STRIDE + BK * BN;
constexpr int RED_FLOATS = KS > 1 ? KS * BM * BN : 0;
constexpr int SMEM_FLOATS = TILE_FLOATS > RED_FLOATS ? TILE_FLOATS : RED_FLOATS;

// One k tile of A (BM x BK, read along k: coalesced) and B (BK x BN, read along n) into registers,
// zero outside the matrices.
__device__ __forceinline__ void load_tile(const float* __restrict__ A, const float* __restrict__ B, int M, int N,
                                          int K, int row0, int col0, int k0, float (&a)[A_PER_THREAD],
                                          float (&b)[B_PER_THREAD]) {
#pragma unroll
    for (int i = 0; i < A_PER_THREAD; ++i) {
        const int e = threadIdx.x + i * THREADS;
        const int r = e / BK, kk = e % BK;
        const bool in = e < A_TILE && row0 + r < M && k0 + kk < K;
        a[i] = in ? A[(size_t)(row0 + r) * K + k0 + kk] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < B_PER_THREAD; ++i) {
        const int e = threadIdx.x + i * THREADS;
        const int kk = e / BN, c = e % BN;
        const bool in = e < B_TILE && k0 + kk < K && col0 + c < N;
        b[i] = in ? B[(size_t)(k0 + kk) * N + col0 + c] : 0.0f;
    }
}

__device__ __forceinline__ void store_tile(float* As, float* Bs, const float (&a)[A_PER_THREAD],
                                           const float (&b)[B_PER_THREAD]) {
#pragma unroll
    for (int i = 0; i < A_PER_THREAD; ++i) {
        const int e = threadIdx.x + i * THREADS;
        if (e < A_TILE) As[(e % BK) * A_STRIDE + e / BK] = a[i];  // transposed: As[k][m]
    }
#pragma unroll
    for (int i = 0; i < B_PER_THREAD; ++i) {
        const int e = threadIdx.x + i * THREADS;
        if (e < B_TILE) Bs[e] = b[i];  // Bs[k][n], as B
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K, const float* __restrict__ A,
                                                            const float* __restrict__ B, float* __restrict__ C) {
    __shared__ float smem[SMEM_FLOATS];
    float* As = smem;
    float* Bs = smem + BK * A_STRIDE;

    // A 1D grid, row-major over tiles: M / BM may exceed the 65535 a grid's y may hold.
    const int tiles_n = ceil_div(N, BN);
    const int row0 = (blockIdx.x / tiles_n) * BM;
    const int col0 = (blockIdx.x % tiles_n) * BN;
    const int g = threadIdx.x / GROUP;
    const int t = threadIdx.x % GROUP;
    const int tm = t / THREADS_N, tn = t % THREADS_N;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    float a[A_PER_THREAD], b[B_PER_THREAD];
    load_tile(A, B, M, N, K, row0, col0, 0, a, b);
    store_tile(As, Bs, a, b);
    __syncthreads();
    for (int k0 = 0; k0 < K; k0 += BK) {
        const bool more = k0 + BK < K;  // the same for every thread: the barriers below stay uniform
        if (more) load_tile(A, B, M, N, K, row0, col0, k0 + BK, a, b);  // in flight during the FMAs
#pragma unroll
        for (int s = 0; s < BK / KS; ++s) {
            const int kk = g + s * KS;
            float av[TM], bv[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) av[i] = As[kk * A_STRIDE + tm + i * THREADS_M];
#pragma unroll
            for (int j = 0; j < TN; ++j) bv[j] = Bs[kk * BN + tn + j * THREADS_N];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
        }
        __syncthreads();
        if (more) {
            store_tile(As, Bs, a, b);
            __syncthreads();
        }
    }

    if constexpr (KS == 1) {
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) {
                const int r = row0 + tm + i * THREADS_M, c = col0 + tn + j * THREADS_N;
                if (r < M && c < N) C[(size_t)r * N + c] = acc[i][j];
            }
    } else {
        // Each group's partial sums, then the block adds them in group order: deterministic. The
        // last barrier of the loop (every thread passed it after its last FMA) frees the tiles.
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j)
                smem[(g * BM + tm + i * THREADS_M) * BN + tn + j * THREADS_N] = acc[i][j];
        __syncthreads();
        // Not unrolled: unrolled, ptxas reuses a partial it loaded for one trip in the next (when the
        // planes are 4 trips apart) and hoists loads out of the store guard, so the shared loads
        // executed would depend on the unroll factor it picks; rolled, each trip loads its KS
        // partials inside the guard (what sgemm's access model counts). It runs TM*TN/KS trips.
#pragma unroll 1
        for (int o = threadIdx.x; o < BM * BN; o += THREADS) {
            float sum = smem[o];
#pragma unroll
            for (int s = 1; s < KS; ++s) sum += smem[s * BM * BN + o];
            const int r = row0 + o / BN, c = col0 + o % BN;
            if (r < M && c < N) C[(size_t)r * N + c] = sum;
        }
    }
}
