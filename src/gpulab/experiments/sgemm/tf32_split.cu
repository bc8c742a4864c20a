// v14's staging (sgemm/tf32x3/tf32_split.py): splits each FP32 element x of A and B into a TF32 high part
// hi = rna(x) and a TF32 low part lo = rna(x - hi), and lays them out for three products on t4's
// K-major TMA path, one launch before every launch of the GEMM:
//   A3  M x 3KP, row m = [ lo(A[m, :]) | hi(A[m, :]) | hi(A[m, :]) ]
//   Bt3 N x 3KP, row n = [ hi(B[:, n]) | lo(B[:, n]) | hi(B[:, n]) ]   (B transposed: K-major)
// KP = K rounded up to 4 (the 16-byte row pitch TMA takes), the pad zero in both. One GEMM over
// 3KP then sums lo*hi + hi*lo + hi*hi: x*y less the lo*lo term, below 2^-22 of |x y|.
// Why this order: the two small products first, so the running sums of the tensor cores' FP32
// accumulators meet the large one after them, not each small term rounded against a large sum.
// Why rna for lo too: wgmma reads a TF32 operand's top 19 bits; x - hi (exact in FP32) has up to 13
// more, so rounding it here halves what reading would truncate.
// Shape of the work: blocks 0 .. blocks_a - 1 take A, a thread per 4 consecutive k of a row of
// A3's KP columns (one 16-byte store into each third: the row pitch and each third's start are
// multiples of 16 bytes); the rest take B through a 32 x 32 shared-memory tile each (k rows, n
// columns), read along n and written along k, so both sides move whole 128-byte lines.
// Napkin math at 4096^3: reads A and B, 2 x 64 MB, writes A3 and Bt3, 2 x 192 MB: 537 MB, ~125 us
// at the H200's ~4.3 TB/s copy ceiling, against ~1.1 ms for the GEMM's 3 x 137 GFLOP at t4's rate.
// Arguments: A (M x K), B (K x N), A3, Bt3, M, N, K, KP, blocks_a.

#define THREADS 256
#define TILE 32

__device__ __forceinline__ float tf32_rna(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

extern "C" __global__ void __launch_bounds__(THREADS) split_tf32(const float* __restrict__ A,
                                                                 const float* __restrict__ B, float* __restrict__ A3,
                                                                 float* __restrict__ Bt3, int M, int N, int K, int KP,
                                                                 int blocks_a) {
#if __CUDA_ARCH__ >= 900
    // The GEMM launched behind this copy (programmatically: gpulab.gpu.launch) may start once every
    // block of this grid has reached here; it waits for this grid's writes itself (wait_for_prior_grid).
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    const long long pitch = 3LL * KP;
    if ((int)blockIdx.x < blocks_a) {
        const int quads = KP / 4;
        const long long i = (long long)blockIdx.x * THREADS + threadIdx.x;
        if (i >= (long long)M * quads) return;
        const long long m = i / quads;
        const int k0 = (int)(i - m * quads) * 4;
        float hi[4], lo[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float x = k0 + j < K ? A[m * K + k0 + j] : 0.0f;
            hi[j] = tf32_rna(x);
            lo[j] = tf32_rna(x - hi[j]);
        }
        float* row = A3 + m * pitch + k0;
        *reinterpret_cast<float4*>(row) = make_float4(lo[0], lo[1], lo[2], lo[3]);
        *reinterpret_cast<float4*>(row + KP) = make_float4(hi[0], hi[1], hi[2], hi[3]);
        *reinterpret_cast<float4*>(row + 2 * KP) = make_float4(hi[0], hi[1], hi[2], hi[3]);
        return;
    }
    __shared__ float tile[TILE][TILE + 1];  // +1: the column reads below hit 32 banks
    const int b = blockIdx.x - blocks_a, tiles_n = (N + TILE - 1) / TILE;
    const int k0 = (b / tiles_n) * TILE, n0 = (b % tiles_n) * TILE;
    const int tx = threadIdx.x % TILE, ty = threadIdx.x / TILE;  // 8 rows of 32 lanes
#pragma unroll
    for (int r = ty; r < TILE; r += THREADS / TILE) {
        const int k = k0 + r, n = n0 + tx;
        tile[r][tx] = (k < K && n < N) ? B[(long long)k * N + n] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int r = ty; r < TILE; r += THREADS / TILE) {
        const int n = n0 + r, k = k0 + tx;
        if (n >= N || k >= KP) continue;
        const float x = tile[tx][r];
        const float hi = tf32_rna(x), lo = tf32_rna(x - hi);
        float* row = Bt3 + (long long)n * pitch + k;
        row[0] = hi;
        row[KP] = lo;
        row[2 * KP] = hi;
    }
}
