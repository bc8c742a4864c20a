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
#include "sgemm/ladder.cuh"

#define THREADS ((BM / TM) * (BN / TN))
#define A_LOADS (BM * BK / 4 / THREADS)  // float4s of A per thread per tile
#define B_LOADS (BK * BN / 4 / THREADS)  // float4s of B per thread per tile
#define AS_LD (BM + 4)                    // padded row of the transposed A tile
#define STRIP_M (4 * BM / TM)             // distance between a thread's float4 fragments of A
#define STRIP_N (4 * BN / TN)             // ... and of B (and of its columns of C)

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
    zero(acc);

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int l = 0; l < A_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            // Lane pairs take the two float4s of 8 consecutive k of one row: a warp covers 16 rows
            // x 8 k (32-byte row pieces, one sector each) and its transposed stores hit 32 banks.
            const int r = (idx >> 1) % BM, kq = ((idx / (2 * BM)) << 1) | (idx & 1);
            store4_transposed(As, kq * 4, r, load4_guarded<VEC_A>(A, M, K, row0 + r, k0 + kq * 4));
        }
#pragma unroll
        for (int l = 0; l < B_LOADS; ++l) {
            const int idx = tid + l * THREADS;
            const int r = idx / (BN / 4), cq = idx % (BN / 4);
            store_float4(&Bs[r][cq * 4], load4_guarded<VEC_BC>(B, K, N, k0 + r, col0 + cq * 4));
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
        for (int j = 0; j < TN; j += 4)
            store4_guarded<VEC_BC>(crow, col0 + (j / 4) * STRIP_N + tc * 4, N, &acc[i][j]);
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
