// Planted faulting kernel: every thread stores 1 TiB past C, an address no allocation covers.
// The launch ends with cudaErrorIllegalAddress and leaves its CUDA context unusable.
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    C[((size_t)1 << 38) + threadIdx.x] = 1.0f;
}
