// Planted wrong gemm_bf16 kernels, one per WRONG value: the checker must catch each.
//   WRONG=1  the k loop stops one short of K (an off-by-one)
//   WRONG=2  the sum is rounded to BF16 after every addition (BF16 accumulation, not FP32)
//   WRONG=3  Bt read as if it were B (K x N, row-major): the layout mix-up
// One thread per element of C, 16 x 16 blocks.
__device__ float bf(unsigned short b) { return __uint_as_float((unsigned)b << 16); }
__device__ float round_bf16(float x) {
    unsigned u = __float_as_uint(x);
    return __uint_as_float(((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16);
}
extern "C" __global__ void gemm_bf16(int M, int N, int K, const unsigned short* A, const unsigned short* Bt,
                                     float* C) {
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    const int kend = WRONG == 1 ? K - 1 : K;
    for (int p = 0; p < kend; ++p) {
        const float b = WRONG == 3 ? bf(Bt[((size_t)p * N + col) % ((size_t)N * K)]) : bf(Bt[(size_t)col * K + p]);
        acc += bf(A[(size_t)row * K + p]) * b;
        if (WRONG == 2) acc = round_bf16(acc);
    }
    C[(size_t)row * N + col] = acc;
}
