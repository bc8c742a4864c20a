// Planted kernel that never ends: it spins on a flag nothing clears. The flag is volatile, so the
// compiler must re-read it and cannot remove the loop (an empty infinite loop may be dropped).
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    volatile int spinning = 1;
    while (spinning) {
    }
}
