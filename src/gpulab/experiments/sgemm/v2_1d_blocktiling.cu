// v2 1D register blocking: each thread computes TM outputs of one column of C.
//
// Changed from v1: the block computes a BM x BN tile of C with BM*BN/TM threads; each thread keeps
// TM accumulators in registers (rows ty*TM .. ty*TM+TM-1 of one column) and, for every k, reads one
// value of B from shared memory and reuses it for TM multiply-adds against TM values of A.
// Expected effect: v1 spends two shared loads (LDS) per FMA, so the shared-memory pipe, not the FMA
// units, sets its speed (the MIO-throttle stall that ncu shows). Here one k step costs TM+1 loads for TM
// FMAs; the A loads are warp-wide broadcasts (every lane of a warp shares its rows when BN >= 32), so
// the shared pipe sees ~1+1/TM wavefronts per FMA-instruction instead of 2. With TM=8 that is about
// 1.8x fewer shared wavefronts per FMA than v1; expect roughly 2-3x v1's rate (several TFLOP/s on
// the H200), still well under the FMA peak because the loads remain scalar and the FMA:LDS ratio is
// only ~1:1.1.
// Params: BM, BN (block tile), BK (k depth of a shared tile), TM (outputs per thread, along M).
//   Threads per block = BM*BN/TM (64..1024). The tiles are loaded with strided loops, so any split
//   of the tile over the threads works.
// Shapes: any M, N, K >= 1. Tile loads outside A or B store zeros; stores outside C are skipped.
#include "common.cuh"

#define THREADS (BM * BN / TM)

extern "C" __global__ void __launch_bounds__(THREADS) sgemm(int M, int N, int K,
                                                            const float* __restrict__ A,
                                                            const float* __restrict__ B,
                                                            float* __restrict__ C) {
    __shared__ float As[BM][BK];
    __shared__ float Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tx = tid % BN;  // column of C inside the tile
    const int ty = tid / BN;  // group of TM rows inside the tile
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        // Consecutive threads take consecutive k (A) or columns (B): coalesced global loads.
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
            const float b = Bs[k][tx];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += As[ty * TM + i][k] * b;
        }
        __syncthreads();
    }

    const int col = col0 + tx;
    if (col < N) {
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const int row = row0 + ty * TM + i;
            if (row < M) C[(size_t)row * N + col] = acc[i];
        }
    }
}
