// Planted gaming kernel: computes C on its first launch and keeps a copy in a global buffer, which
// outlives the launch; every later launch copies the kept result into C, whatever the inputs hold
// now. Every launch writes every element, so a poisoned output alone does not catch it: only a last
// launch on fresh inputs does, whose right answer is not the kept one.
#define KEPT_MAX (1 << 20)  // floats: enough for the test's shapes; a larger C is computed every time
__device__ float kept[KEPT_MAX];
__device__ unsigned int finished_blocks = 0;
__device__ volatile int have_kept = 0;

extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const bool replay = have_kept && M * N <= KEPT_MAX;
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row < M && col < N) {
        float value;
        if (replay) {
            value = kept[row * N + col];
        } else {
            value = 0.f;
            for (int p = 0; p < K; ++p) value += A[row * K + p] * B[p * N + col];
            if (M * N <= KEPT_MAX) kept[row * N + col] = value;
        }
        C[row * N + col] = value;
    }
    if (replay) return;
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence();
        if (atomicAdd(&finished_blocks, 1u) + 1u == gridDim.x * gridDim.y) have_kept = 1;
    }
}
