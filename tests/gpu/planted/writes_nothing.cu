// Planted wrong kernel: computes but never stores C. The checker must see every element unwritten.
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.f;
    for (int p = 0; p < K; ++p) acc += A[row * K + p] * B[p * N + col];
    if (acc == 12345.678f) C[0] = acc;  // keeps the loop alive; never true for the test inputs
}
