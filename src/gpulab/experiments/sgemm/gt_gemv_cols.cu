// gt GEMV-class product for a few columns (N <= BN, N = 1 above all): a warp per row of A, stream A once.
//
// Changed from sk (sliced-K small tiles), whose tiles pass A through shared memory: for N = 1 each
// element of C is the dot product of a row of A with B's one column, so here a warp owns a row (RW
// rows, one after the other), its lanes read the row in float4s (512 contiguous bytes per warp
// load), each lane with U float4 loads in flight before it uses any, multiplies them with the
// matching B values (a float4 of B's column when N == 1: B is K contiguous floats, read by every
// warp, so it stays in L1/L2; scalar loads of B[k][n] for the BN columns otherwise), and the 32 lane
// partial sums are added by a fixed shuffle tree: the same bits on every run, no atomics, no
// workspace. A is read exactly once; the bytes in flight are what sets the speed.
// Expected effect: bound by reading A (4*M*K bytes; 268 MB at 8192 x 1 x 8192): >= 80% of the copy
// ceiling (~3.4-3.9 TB/s of 4.3 measured, ~70-80 us), near cuBLAS's GEMV. With 8192 rows there are
// 8192 warps: no split of K is needed (a shape with few rows and a huge K would want one).
// Params: BN (columns of C per warp, 1-8: each float4 of A serves BN columns), WARPS (warps per
//   block), RW (rows per warp, consecutive), U (float4s of A per lane per step, all issued first),
//   MINB (blocks per SM the registers are sized for). Threads = 32*WARPS. No shared memory.
// Shapes: any M, N, K >= 1. float4 loads of A when K % 4 == 0 and A (and, for N == 1, B) are
//   16-byte aligned, else one scalar per lane per step (coalesced, 4x the instructions). Meant for
//   N <= 8: every column block re-reads the whole of A.
#include "common.cuh"

constexpr int THREADS = 32 * WARPS;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;  // every lane holds the same sum, taken in the same order
}

// B[k][n] for the BN columns from col0, zero past N.
__device__ __forceinline__ void load_b(const float* __restrict__ B, int N, int k, int col0, float (&b)[BN]) {
#pragma unroll
    for (int n = 0; n < BN; ++n) b[n] = col0 + n < N ? __ldg(B + (size_t)k * N + col0 + n) : 0.0f;
}

// acc[n] += A[row][kk + q] * B[kk + q][col0 + n] for the 4 k of one float4 of A (a[q]).
__device__ __forceinline__ void fma_float4(const float4 a, const float* __restrict__ B, int N, int kk, int col0,
                                           float (&acc)[BN]) {
    const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
    for (int q = 0; q < 4; ++q) {
        float b[BN];
        load_b(B, N, kk + q, col0, b);
#pragma unroll
        for (int n = 0; n < BN; ++n) acc[n] = fmaf(av[q], b[n], acc[n]);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K, const float* __restrict__ A,
                                                            const float* __restrict__ B, float* __restrict__ C) {
    const int lane = threadIdx.x & 31;
    const int warp = blockIdx.x * WARPS + threadIdx.x / 32;
    const int col0 = blockIdx.y * BN;
    const bool vec = (K % 4 == 0) && (reinterpret_cast<size_t>(A) % 16 == 0) &&
                     (N != 1 || reinterpret_cast<size_t>(B) % 16 == 0);
    for (int rr = 0; rr < RW; ++rr) {
        const int row = warp * RW + rr;
        if (row >= M) return;  // the same for the whole warp: the shuffles below stay full
        const float* arow = A + (size_t)row * K;
        float acc[BN];
#pragma unroll
        for (int n = 0; n < BN; ++n) acc[n] = 0.0f;
        int k = 0;
        if (vec) {
            constexpr int STEP = 32 * 4 * U;  // k per warp per step
            if (N == 1) {  // B is K contiguous floats: its float4s load beside A's, all in flight
                for (; k + STEP <= K; k += STEP) {
                    float4 a[U], b[U];
#pragma unroll
                    for (int u = 0; u < U; ++u) {
                        const int kk = k + (u * 32 + lane) * 4;
                        a[u] = __ldcs(reinterpret_cast<const float4*>(arow + kk));
                        b[u] = __ldg(reinterpret_cast<const float4*>(B + kk));
                    }
#pragma unroll
                    for (int u = 0; u < U; ++u) {
                        acc[0] = fmaf(a[u].x, b[u].x, acc[0]);
                        acc[0] = fmaf(a[u].y, b[u].y, acc[0]);
                        acc[0] = fmaf(a[u].z, b[u].z, acc[0]);
                        acc[0] = fmaf(a[u].w, b[u].w, acc[0]);
                    }
                }
            } else {
                for (; k + STEP <= K; k += STEP) {
                    float4 a[U];
#pragma unroll
                    for (int u = 0; u < U; ++u) a[u] = __ldcs(reinterpret_cast<const float4*>(arow + k + (u * 32 + lane) * 4));
#pragma unroll
                    for (int u = 0; u < U; ++u) fma_float4(a[u], B, N, k + (u * 32 + lane) * 4, col0, acc);
                }
            }
            // The rest of the row (fewer than STEP): whole float4s while they last.
            for (; k + 4 * lane + 4 <= K; k += 128)
                fma_float4(__ldcs(reinterpret_cast<const float4*>(arow + k + 4 * lane)), B, N, k + 4 * lane, col0, acc);
        } else {
            for (k = lane; k < K; k += 32) {
                const float a = __ldcs(arow + k);
                float b[BN];
                load_b(B, N, k, col0, b);
#pragma unroll
                for (int n = 0; n < BN; ++n) acc[n] = fmaf(a, b[n], acc[n]);
            }
        }
#pragma unroll
        for (int n = 0; n < BN; ++n) {
            const float s = warp_sum(acc[n]);
            if (lane == n && col0 + n < N) C[(size_t)row * N + col0 + n] = s;
        }
    }
}
