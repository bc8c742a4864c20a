// The copy ceiling, gpulab's own kernel: one 16-byte float4 per thread, read once and written once.
//
// Not an experiment: `gpulab ceilings` times it beside cudaMemcpy (device to device) over 1 GiB, far
// past any L2, and counts bytes read + written. The better of the two is the copy ceiling that
// memory-bound records are shown against: a kernel cannot beat the best plain copy of its bytes.
// 16 B per lane keeps 4x the bytes in flight of a float copy (a 512 B contiguous run per warp).
// Params: none. Runtime: n4, the number of float4 (the buffers are 256-byte aligned).

extern "C" __global__ void copy_peak(const float4* __restrict__ in, float4* __restrict__ out, long long n4) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n4) out[i] = in[i];
}
