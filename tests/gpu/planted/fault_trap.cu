// Planted faulting kernel: one thread executes a trap instruction (as a failed device-side assert
// does). The launch ends with cudaErrorLaunchFailure and leaves its CUDA context unusable.
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0) __trap();
}
