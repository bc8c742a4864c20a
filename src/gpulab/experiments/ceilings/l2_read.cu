// The L2 read ceiling: every thread reads 16-byte float4s of a buffer that fits in L2, pass after pass.
//
// Not an experiment: `gpulab ceilings` times it with the buffer already in L2 (no flush) and counts
// passes x buffer bytes read. It is the roof a kernel's L1TEX-to-L2 traffic is read against on the
// roofline. Why this shape:
// - __ldcg (ld.global.cg) caches in L2 only, so no pass is served from an SM's own L1, which would
//   hold a block's share of the buffer on the next pass (a few hundred KiB per SM);
// - each pass, block b reads the slice block (b + pass) % gridDim.x read in pass 0, so an SM meets
//   new addresses every pass as well;
// - the buffer is a whole number of grid strides (n4 a multiple of gridDim.x * blockDim.x), so every
//   pass reads every float4 exactly once;
// - the sum is stored so the compiler cannot drop the loads.
// Params: none. Runtime: n4 (float4s in the buffer), passes.

extern "C" __global__ void l2_read(const float4* __restrict__ in, float* __restrict__ out, long long n4,
                                   int passes) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int p = 0; p < passes; ++p) {
        const long long start = (long long)((blockIdx.x + p) % gridDim.x) * blockDim.x + threadIdx.x;
#pragma unroll 4
        for (long long i = start; i < n4; i += stride) {
            const float4 v = __ldcg(in + i);
            acc.x += v.x; acc.y += v.y; acc.z += v.z; acc.w += v.w;
        }
    }
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = (acc.x + acc.y) + (acc.z + acc.w);
}
