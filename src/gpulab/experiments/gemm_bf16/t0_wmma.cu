// t0 WMMA: 16x16x16 BF16 tensor-core fragments loaded from padded shared-memory tiles.
//
// Changed from (nothing: the first rung of the tensor-core ladder; its FP32 cousin is sgemm v1-v3):
// the multiply-adds move from the FP32 pipe to the tensor cores through WMMA, the portable warp-wide
// fragment API (the PTX wmma.load / wmma.mma / wmma.store that nvcuda::wmma emits, see tc.cuh).
// Each block stages a BM x BK tile of A and a BN x BK tile of Bt in shared memory (16-byte loads, one
// row of 8 k each, when K % 8 == 0; element by element, zero-filled past the edges, otherwise); each
// warp loads WM/16 A fragments and WN/16 B fragments per 16 k from there and issues
// (WM/16)*(WN/16) wmma.mma. Rows are padded to BK + 8 bf16 (16 bytes more than the data), so the
// 8 rows a fragment load reads at once start 16 bytes apart in the banks, not on one bank.
// The accumulators go back through shared memory (wmma.store of FP32), then every thread writes C
// element by element with bounds checks: ragged M and N cost nothing in the main loop.
// Expected effect: far from cuBLAS on Hopper. WMMA compiles to HMMA.16816 (the mma.sync class of
// instruction, a warp's 16x8x16 step) on sm_90, not to wgmma, the warpgroup-wide asynchronous MMA
// that reads its operands straight from shared memory and is the only way to the H200's ~990 TFLOP/s
// dense BF16; mma.sync peaks near 60% of it (the measured `tensor_bf16` ceiling says how much).
// On top, this kernel stalls on the barrier of every tile (no copy overlaps the math), loads each
// fragment through registers, and reads each A fragment once per warp column: expect ~10-20% of cuBLAS
// BF16 at 4096^3 (a public H100 WMMA kernel measured 8%).
// Params: BM, BN (block tile), BK (k per tile, a multiple of 16), WM, WN (warp tile, multiples of
//   16). Dynamic shared memory: max(2*(BM+BN)*(BK+8), 4*BM*BN) bytes.
// Shapes: any M, N, K >= 1 (16-byte or per-element tile loads chosen at run time by K % 8; edges
//   zero-filled on the way in and masked on the way out).
#include "gemm_bf16/tc.cuh"

#define WARPS_N (BN / WN)
#define THREADS ((BM / WM) * WARPS_N * 32)
#define LDS (BK + 8)           // shared row pitch in bf16: 16 bytes of padding per row
#define CHUNKS_K (BK / 8)      // 16-byte chunks per tile row
#define FM (WM / 16)
#define FN (WN / 16)

// One BM x BK (or BN x BK) tile from rows [row0, row0+ROWS) of a K-major matrix with `rows` rows:
// each thread copies 16-byte chunks of 8 k; zeros where the row or k is past the edge.
template <int ROWS>
__device__ __forceinline__ void load_tile(bf16_t* __restrict__ dst, const bf16_t* __restrict__ src, int rows,
                                          int K, int row0, int k0, bool vec) {
#pragma unroll
    for (int c = threadIdx.x; c < ROWS * CHUNKS_K; c += THREADS) {
        const int r = c / CHUNKS_K, kc = (c % CHUNKS_K) * 8;
        const int gr = row0 + r, gk = k0 + kc;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (gr < rows) {
            const bf16_t* p = src + (size_t)gr * K + gk;
            if (vec) {  // K % 8 == 0: gk < K means all 8 are inside, and the address is 16-byte aligned
                if (gk < K) v = *reinterpret_cast<const uint4*>(p);
            } else {
                bf16_t e[8];
#pragma unroll
                for (int i = 0; i < 8; ++i) e[i] = gk + i < K ? p[i] : bf16_t(0);
                v = make_uint4(e[0] | (unsigned)e[1] << 16, e[2] | (unsigned)e[3] << 16,
                               e[4] | (unsigned)e[5] << 16, e[6] | (unsigned)e[7] << 16);
            }
        }
        *reinterpret_cast<uint4*>(dst + r * LDS + kc) = v;
    }
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_bf16(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C) {
    extern __shared__ __align__(16) unsigned char smem[];
    bf16_t* As = reinterpret_cast<bf16_t*>(smem);
    bf16_t* Bs = As + BM * LDS;
    float* Cs = reinterpret_cast<float*>(smem);  // reused once the k loop is done

    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int warp = threadIdx.x / 32;
    const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    const bool vec = (K % 8) == 0;

    WmmaC acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j)
#pragma unroll
            for (int e = 0; e < 8; ++e) acc[i][j].x[e] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tile<BM>(As, A, M, K, row0, k0, vec);
        load_tile<BN>(Bs, Bt, N, K, col0, k0, vec);
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            WmmaA a[FM];
            WmmaB b[FN];
#pragma unroll
            for (int i = 0; i < FM; ++i) wmma_load_a(a[i], smem_u32(As + (wm + 16 * i) * LDS + kk), LDS);
#pragma unroll
            for (int j = 0; j < FN; ++j) wmma_load_b(b[j], smem_u32(Bs + (wn + 16 * j) * LDS + kk), LDS);
#pragma unroll
            for (int i = 0; i < FM; ++i)
#pragma unroll
                for (int j = 0; j < FN; ++j) wmma_mma(acc[i][j], a[i], b[j]);
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma_store_c(smem_u32(Cs + (wm + 16 * i) * BN + wn + 16 * j), acc[i][j], BN);
    __syncthreads();
    for (int idx = threadIdx.x; idx < BM * BN; idx += THREADS) {
        const int r = idx / BN, c = idx % BN;
        if (row0 + r < M && col0 + c < N) C[(size_t)(row0 + r) * N + col0 + c] = Cs[idx];
    }
}
