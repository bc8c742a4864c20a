// Planted kernel that never ends. clock64() is a volatile read the compiler must repeat and the
// counter never runs backwards, so the loop cannot be proven finite and removed (a loop on a
// volatile local was: the H200 ran this kernel to its end, 2026-12-01).
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const long long start = clock64();
    while (clock64() >= start) {
    }
}
