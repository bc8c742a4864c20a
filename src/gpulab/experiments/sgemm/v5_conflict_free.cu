// v5 conflict-free shared memory: a padded transposed A tile and interleaved thread fragments.
//
// Changed from v4: (1) As gets 4 floats of padding per row, As[BK][BM+4], and the A loads are mapped
// so that a warp covers 16 rows x 2 float4-columns (8 k) of the tile; the four transposing stores
// of a warp then fall on 32 distinct banks (row k starts 4k banks further on, and the two k groups
// of a warp are 16 banks apart), where v4 hit each bank twice at BK=8 and four times at BK=16.
// (2) A thread's TM rows and TN columns are no longer contiguous: they are TM/4 (TN/4) float4
// fragments spaced 4*BM/TM (4*BN/TN) apart, so the 8 lanes of a quarter-warp read 8 consecutive
// float4s of B (128 bytes, every bank once) instead of 8 float4s 32 bytes apart (2-way), and a
// warp's float4 stores of C cover 256 contiguous bytes per row.
// Expected effect: the shared-memory wavefronts per tile drop to the conflict-free count: for the
// 128x128x8 default, each transposing STS goes from 2 wavefronts to 1 and each LDS.128 of B from 8
// to 4 (one per quarter-warp). The shared pipe was not yet the limit at 8x8 (v4's header),
// so expect a modest gain, 5-15%; ncu's l1tex__data_bank_conflicts_pipe_lsu_mem_shared should read
// (near) zero for loads and stores. The remaining cost: each LDS.128 of B still takes 4 wavefronts
// (one per quarter-warp), since the lanes of a quarter-warp all read different float4s.
// Params: BM, BN (multiples of 32), BK (multiple of 8), TM, TN (multiples of 4);
//   threads = (BM/TM)*(BN/TN); BM*BK/4 and BK*BN/4 multiples of the thread count.
// Shapes: any M, N, K >= 1, as v4: float4 paths for K % 4 == 0 (A) and N % 4 == 0 (B, C) chosen at
//   run time, scalar paths otherwise, zero-filled loads and guarded stores at ragged edges.
#include "common.cuh"

#define THREADS ((BM / TM) * (BN / TN))
#define A_LOADS (BM * BK / 4 / THREADS)  // float4s of A per thread per tile
#define B_LOADS (BK * BN / 4 / THREADS)  // float4s of B per thread per tile
#define AS_LD (BM + 4)                    // padded row of the transposed A tile
#define STRIP_M (4 * BM / TM)             // distance between a thread's float4 fragments of A
#define STRIP_N (4 * BN / TN)             // ... and of B (and of its columns of C)

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float (*As)[AS_LD], float (*Bs)[BN]) {
    const int tid = threadIdx.x;
    const int tc = tid % (BN / TN);
    const int tr = tid / (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            // Lane pairs take the two float4s of 8 consecutive k of one row: a warp covers 16 rows
            // x 8 k (32-byte row pieces, one sector each) and its transposed stores hit 32 banks.
            const int r = (idx >> 1) % BM, kq = ((idx / (2 * BM)) << 1) | (idx & 1);
            const int gr = row0 + r, gk = k0 + kq * 4;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (VEC_A) {
                if (gr < M && gk < K) v = load_float4(A + (size_t)gr * K + gk);
            } else if (gr < M) {
                const float* p = A + (size_t)gr * K;
                if (gk + 0 < K) v.x = p[gk + 0];
                if (gk + 1 < K) v.y = p[gk + 1];
                if (gk + 2 < K) v.z = p[gk + 2];
                if (gk + 3 < K) v.w = p[gk + 3];
            }
            As[kq * 4 + 0][r] = v.x;  // the transpose: four scalar stores
            As[kq * 4 + 1][r] = v.y;
            As[kq * 4 + 2][r] = v.z;
            As[kq * 4 + 3][r] = v.w;
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BN / 4), cq = idx % (BN / 4);
            const int gk = k0 + r, gc = col0 + cq * 4;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (VEC_BC) {
                if (gk < K && gc < N) v = load_float4(B + (size_t)gk * N + gc);
            } else if (gk < K) {
                const float* p = B + (size_t)gk * N;
                if (gc + 0 < N) v.x = p[gc + 0];
                if (gc + 1 < N) v.y = p[gc + 1];
                if (gc + 2 < N) v.z = p[gc + 2];
                if (gc + 3 < N) v.w = p[gc + 3];
            }
            store_float4(&Bs[r][cq * 4], v);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 v = load_float4(&As[k][(i / 4) * STRIP_M + tr * 4]);
                a[i] = v.x; a[i + 1] = v.y; a[i + 2] = v.z; a[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = load_float4(&Bs[k][(j / 4) * STRIP_N + tc * 4]);
                b[j] = v.x; b[j + 1] = v.y; b[j + 2] = v.z; b[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = row0 + (i / 4) * STRIP_M + tr * 4 + (i % 4);
        if (row >= M) continue;
        float* crow = C + (size_t)row * N;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = col0 + (j / 4) * STRIP_N + tc * 4;
            if (VEC_BC) {
                if (col < N) store_float4(crow + col, make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]));
            } else {
#pragma unroll
                for (int c = 0; c < 4; ++c)
                    if (col + c < N) crow[col + c] = acc[i][j + c];
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) sgemm(int M, int N, int K,
                                                            const float* __restrict__ A,
                                                            const float* __restrict__ B,
                                                            float* __restrict__ C) {
    __shared__ __align__(16) float As[BK][AS_LD];
    __shared__ __align__(16) float Bs[BK][BN];
    // One uniform branch per block: which matrices may take the float4 path.
    const bool vec_a = (K % 4 == 0) && aligned16(A);
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (vec_a) {
        if (vec_bc) gemm_tile<true, true>(M, N, K, A, B, C, As, Bs);
        else        gemm_tile<true, false>(M, N, K, A, B, C, As, Bs);
    } else {
        if (vec_bc) gemm_tile<false, true>(M, N, K, A, B, C, As, Bs);
        else        gemm_tile<false, false>(M, N, K, A, B, C, As, Bs);
    }
}
