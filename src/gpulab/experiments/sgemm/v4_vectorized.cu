// v4 float4 everywhere: 16-byte global loads, A stored transposed in shared memory, LDS.128 reads.
//
// Changed from v3: (1) global loads of A and B are float4 (LDG.128): a quarter of the load
// instructions, each lane moving 16 bytes; (2) A's tile is stored transposed, As[k][m], so the TM
// values of A a thread needs for one k are contiguous, like B's TN values; (3) both fragments are
// then read as float4 (LDS.128): TM/4 + TN/4 shared loads per k instead of TM + TN; (4) C is stored
// as float4.
// Expected effect: per k and thread, 4 LDS.128 feed 64 FMAs (8 x 8) instead of 16 LDS.32. The
// shared pipe moves 128 B per cycle, so a warp's LDS.128 costs at least 4 wavefronts (cycles): 4 per
// 64 warp-FMAs is 16 shared cycles against 64 FMA cycles on one SM sub-partition, leaving the FMA
// pipe as the limit for the first time. Still in the way: the transposed scalar stores into As
// conflict (a warp's 16 rows x 2 float4-columns land on the same 16 banks twice: 2-way at BK=8,
// 4-way at BK=16), and a thread's TN=8 contiguous columns make a quarter-warp's LDS.128 of B touch
// each bank twice (2-way). Expect 1.3-1.6x v3.
// Params: BM, BN, BK (multiple of 8), TM, TN (multiples of 4); threads = (BM/TM)*(BN/TN).
//   Each thread loads whole float4s: BM*BK/4 and BK*BN/4 must be multiples of the thread count.
// Shapes: any M, N, K >= 1. The float4 path needs 16-byte aligned rows: K % 4 == 0 for A,
//   N % 4 == 0 for B and C (and 16-byte aligned base pointers). The kernel picks at run time, per
//   matrix, the float4 path or a scalar path with the same shared layout; ragged edges are
//   zero-filled on load and skipped on store in both.
#include "common.cuh"

#define THREADS ((BM / TM) * (BN / TN))
#define A_LOADS (BM * BK / 4 / THREADS)  // float4s of A per thread per tile
#define B_LOADS (BK * BN / 4 / THREADS)  // float4s of B per thread per tile

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float (*As)[BM], float (*Bs)[BN]) {
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
            const int r = idx / (BK / 4), kq = idx % (BK / 4);
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
                const float4 v = load_float4(&As[k][tr * TM + i]);
                a[i] = v.x; a[i + 1] = v.y; a[i + 2] = v.z; a[i + 3] = v.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 v = load_float4(&Bs[k][tc * TN + j]);
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
        const int row = row0 + tr * TM + i;
        if (row >= M) break;
        float* crow = C + (size_t)row * N;
#pragma unroll
        for (int j = 0; j < TN; j += 4) {
            const int col = col0 + tc * TN + j;
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
    __shared__ __align__(16) float As[BK][BM];
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
