// Planted wrong kernel: the inner loop stops one short of K, an index bug the checker must catch.
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int p = 0; p < K - 1; ++p) acc += A[row * K + p] * B[p * N + col];
    C[row * N + col] = acc;
}
