// v3 2D register blocking: each thread computes a TM x TN tile of C as an outer product.
//
// Changed from v2: a thread now owns TM rows x TN columns. For every k it loads TM values of A and
// TN values of B from shared memory into registers and does TM*TN FMAs on them (an outer product).
// Expected effect: shared loads per FMA fall from (TM+1)/TM (v2) to (TM+TN)/(TM*TN): with 8 x 8 that
// is 16 loads for 64 FMAs, a quarter per FMA. Block tiles of 128 x 128 also halve the global (L2)
// traffic per flop against v2's 64 x 64: each element loaded feeds 128 FMAs instead of 64. The
// remaining waste: every load is a scalar LDS.32, a thread's TN columns are contiguous so a warp's
// reads of B hit each bank TN/2 times over (4-way conflicts at TN=8), and C is stored one float at a
// time with lanes TN floats apart (a quarter of each 32-byte sector used per store instruction).
// Expect 3-4x v2, around a third of the FMA peak.
// Params: BM, BN, BK, TM, TN; threads per block = (BM/TM)*(BN/TN), 64..1024.
// Shapes: any M, N, K >= 1 (zero-filled tile loads, guarded stores).
#include "common.cuh"

#define THREADS ((BM / TM) * (BN / TN))

extern "C" __global__ void __launch_bounds__(THREADS) sgemm(int M, int N, int K,
                                                            const float* __restrict__ A,
                                                            const float* __restrict__ B,
                                                            float* __restrict__ C) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tc = tid % (BN / TN);  // which TN-wide column strip of the tile
    const int tr = tid / (BN / TN);  // which TM-tall row strip of the tile
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
    float a[TM], b[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK, c = e % BK;
            const int gr = row0 + r, gc = k0 + c;
            As[r][c] = (gr < M && gc < K) ? A[(size_t)gr * K + gc] : 0.0f;
        }
#pragma unroll
        for (int e = tid; e < BK * BN; e += THREADS) {
            const int r = e / BN, c = e % BN;
            const int gr = k0 + r, gc = col0 + c;
            Bs[r][c] = (gr < K && gc < N) ? B[(size_t)gr * N + gc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[tr * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tc * TN + j];
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
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = col0 + tc * TN + j;
            if (col < N) C[(size_t)row * N + col] = acc[i][j];
        }
    }
}
