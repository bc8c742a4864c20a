// Planted wrong kernel (coalesce): a flat copy that stops one element short of the end.
extern "C" __global__ void coalesce(const float* in, float* out, int M, int N) {
    const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t + 1 >= (unsigned)M * (unsigned)N) return;  // the bug: the last element is never written
    out[t] = in[t];
}
