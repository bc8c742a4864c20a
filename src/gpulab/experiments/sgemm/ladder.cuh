// Device primitives of the SGEMM ladder. Each is written out in full by the rung named in its
// comment; the rungs after that one may take it from here, so each rung shows its own new idea.
// Tile sizes come in as template arguments (the rungs' BM, BN, BK are -D macros).
#pragma once
#include "common.cuh"

// v4: may this matrix take the float4 path? (16-byte aligned base pointer)
__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

// v4: row r, columns c..c+3 of a rows x cols row-major matrix X, zeros outside it: one float4 when
// VEC (cols % 4 == 0, X aligned), else four guarded floats.
template <bool VEC>
__device__ __forceinline__ float4 load4_guarded(const float* X, int rows, int cols, int r, int c) {
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    if (VEC) {
        if (r < rows && c < cols) v = load_float4(X + (size_t)r * cols + c);
    } else if (r < rows) {
        const float* p = X + (size_t)r * cols;
        if (c + 0 < cols) v.x = p[c + 0];
        if (c + 1 < cols) v.y = p[c + 1];
        if (c + 2 < cols) v.z = p[c + 2];
        if (c + 3 < cols) v.w = p[c + 3];
    }
    return v;
}

// v4: the transpose into shared memory: v goes to rows k..k+3 of column m, four scalar stores.
template <int LD>
__device__ __forceinline__ void store4_transposed(float (*Ts)[LD], int k, int m, float4 v) {
    Ts[k + 0][m] = v.x;
    Ts[k + 1][m] = v.y;
    Ts[k + 2][m] = v.z;
    Ts[k + 3][m] = v.w;
}

// v4: v[0..3] to columns col..col+3 of the row crow of C (N columns): one float4 when VEC, else
// the floats inside C one by one.
template <bool VEC>
__device__ __forceinline__ void store4_guarded(float* crow, int col, int N, const float* v) {
    if (VEC) {
        if (col < N) store_float4(crow + col, make_float4(v[0], v[1], v[2], v[3]));
    } else {
#pragma unroll
        for (int c = 0; c < 4; ++c)
            if (col + c < N) crow[col + c] = v[c];
    }
}

// v5: where float4 load idx of a TILE_M-row tile of A goes: row r, float4 column kq. Lane pairs
// take the two float4s of 8 consecutive k of one row, so a warp covers 16 rows x 8 k and its
// transposed stores into the padded tile hit 32 banks.
template <int TILE_M>
__device__ __forceinline__ void a_load_coords(int idx, int& r, int& kq) {
    r = (idx >> 1) % TILE_M;
    kq = ((idx / (2 * TILE_M)) << 1) | (idx & 1);
}

// v5: one thread's share (of NT) of a tile step's loads: the TILE_M x TILE_K tile of A at
// (row0, k0) transposed into As with the map above, the TILE_K x TILE_N tile of B at (k0, col0)
// into Bs; zeros outside the matrices.
template <bool VEC_A, bool VEC_BC, int TILE_M, int TILE_K, int NT, int LDA, int TILE_N>
__device__ __forceinline__ void load_tiles(float (*As)[LDA], float (*Bs)[TILE_N], int M, int N,
                                           int K, const float* __restrict__ A,
                                           const float* __restrict__ B, int row0, int col0,
                                           int k0) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < TILE_M * TILE_K / 4 / NT; ++l) {
        int r, kq;
        a_load_coords<TILE_M>(tid + l * NT, r, kq);
        store4_transposed(As, kq * 4, r, load4_guarded<VEC_A>(A, M, K, row0 + r, k0 + kq * 4));
    }
#pragma unroll
    for (int l = 0; l < TILE_K * TILE_N / 4 / NT; ++l) {
        const int idx = tid + l * NT;
        const int r = idx / (TILE_N / 4), cq = idx % (TILE_N / 4);
        store_float4(&Bs[r][cq * 4], load4_guarded<VEC_BC>(B, K, N, k0 + r, col0 + cq * 4));
    }
}

// Every rung: the accumulators start at zero.
template <int ROWS, int COLS>
__device__ __forceinline__ void zero(float (&acc)[ROWS][COLS]) {
#pragma unroll
    for (int i = 0; i < ROWS; ++i)
#pragma unroll
        for (int j = 0; j < COLS; ++j) acc[i][j] = 0.0f;
}

// v6: the zig-zag lane grid: lane -> (row lr of 4, column lc of 8) of a 16 x 32 warp sub-tile.
// Lanes i and i^1 share a column, i and i^2 a row, so an LDS.128 takes two wavefronts.
__device__ __forceinline__ int zigzag_row(int lane) { return (lane & 1) | ((lane >> 4) << 1); }
__device__ __forceinline__ int zigzag_col(int lane) { return (lane >> 1) & 7; }

// v6: one tile of TILE_K k-steps of a warp tile: per k, ROWS/4 float4s of As (16 rows apart
// from a_off) and COLS/4 of Bs (32 columns apart from b_off), their 4 x 4 outer products into acc.
template <int TILE_K, int ROWS, int COLS, int LDA, int LDB>
__device__ __forceinline__ void warp_tile_mma(float (&acc)[ROWS][COLS], const float (*As)[LDA],
                                              const float (*Bs)[LDB], int a_off, int b_off) {
    constexpr int MI = ROWS / 4, NI = COLS / 4;
#pragma unroll
    for (int k = 0; k < TILE_K; ++k) {
        float4 a[MI], b[NI];
#pragma unroll
        for (int i = 0; i < MI; ++i) a[i] = load_float4(&As[k][a_off + i * 16]);
#pragma unroll
        for (int j = 0; j < NI; ++j) b[j] = load_float4(&Bs[k][b_off + j * 32]);
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
}

// v7: a warp's write-back slice: 16 rows of 32 floats, padded to 36 so that the fragment
// stores of the zig-zag lanes (rows 4 apart) hit distinct banks.
#define CS_LD 36

// v7: sub-tile (i, j) of a warp's accumulators into its slice cs, then from the slice to C rows
// rbase.., columns cbase.. row-wise (a float4 or a float per lane: 128 contiguous bytes per row),
// storing where keep(row, col) holds.
template <bool VEC, int ROWS, int COLS, class Keep>
__device__ __forceinline__ void write_back(float* cs, const float (&acc)[ROWS][COLS], int i, int j,
                                           int lane, float* __restrict__ C, int N, int rbase,
                                           int cbase, Keep keep) {
    const int lr = zigzag_row(lane), lc = zigzag_col(lane);
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        const float* v = &acc[i * 4 + r][j * 4];
        store_float4(&cs[(lr * 4 + r) * CS_LD + lc * 4], make_float4(v[0], v[1], v[2], v[3]));
    }
    __syncwarp();
    if (VEC) {
        const int q = lane & 7, col = cbase + q * 4;
#pragma unroll
        for (int p = lane >> 3; p < 16; p += 4) {
            const int row = rbase + p;
            if (keep(row, col))
                store_float4(C + (size_t)row * N + col, load_float4(&cs[p * CS_LD + q * 4]));
        }
    } else {
        const int col = cbase + lane;
#pragma unroll
        for (int p = 0; p < 16; ++p) {
            const int row = rbase + p;
            if (keep(row, col)) C[(size_t)row * N + col] = cs[p * CS_LD + lane];
        }
    }
    __syncwarp();  // the slice is rewritten by the next sub-tile
}
