// Planted gaming kernel: a right SGEMM on its first launch, nothing on every launch after it. The
// last block of the first launch to finish sets a flag in global memory, which outlives the launch
// (it lives as long as the loaded module), and every later launch returns at once: the output keeps
// what the first launch wrote, the check before timing passes, and the timing is of an empty
// kernel. The check after timing, of a poisoned output, must catch it.
__device__ unsigned int finished_blocks = 0;
__device__ volatile int first_launch_done = 0;

extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    if (first_launch_done) return;  // the whole block leaves: no barrier below is left waiting
    const int col = blockIdx.x * 16 + threadIdx.x, row = blockIdx.y * 16 + threadIdx.y;
    if (row < M && col < N) {
        float acc = 0.f;
        for (int p = 0; p < K; ++p) acc += A[row * K + p] * B[p * N + col];
        C[row * N + col] = acc;
    }
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence();
        if (atomicAdd(&finished_blocks, 1u) + 1u == gridDim.x * gridDim.y) first_launch_done = 1;
    }
}
