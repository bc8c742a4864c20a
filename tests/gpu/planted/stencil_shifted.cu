// Planted wrong kernel (stencil): v0 with its window shifted right by one, x[i-R+1 .. i+R+1].
// The memory-hierarchy lesson's periodic inputs cannot see this (every window of 2R+1 sums to the same value away from
// the edges); the random inputs must.
#ifndef R
#define R 3
#endif
extern "C" __global__ void stencil(const float* in, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0.0f;
    for (int k = -R + 1; k <= R + 1; ++k) {
        const int j = i + k;
        sum += (j >= 0 && j < n) ? in[j] : 0.0f;
    }
    out[i] = sum / (float)(2 * R + 1);
}
