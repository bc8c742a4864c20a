// v1 rows: copy out = A with the lanes of a warp walking ALONG a row (the plain flat copy).
//
// Changed from v0: thread t takes element t (VEC=1) or elements 4t..4t+3 (VEC=4), so a warp reads and
// writes one contiguous run: 128 B = 4 sectors per instruction (VEC=1), 512 B = 16 sectors (VEC=4).
// Expected effect: every byte moved is a byte used; the copy is bound by DRAM and should reach the
// card's copy ceiling (>= 95% at the DRAM-bound 8192 x 8192: 268 MB read + 268 MB written, 4.5x the
// H200's 60 MiB L2). VEC=4 issues a quarter of the instructions and keeps 16 B per lane in flight;
// it matters when one float per thread is too little in flight to cover DRAM latency.
// Params: VEC (1 or 4) floats per thread; VEC=4 uses one 16-byte load and store (cupy allocations
// are 256-byte aligned and 4t is a multiple of 4 floats, so every float4 is aligned).
// Shapes: any M, N >= 1; a count not divisible by 4 ends in a scalar tail.
#include "common.cuh"

static_assert(VEC == 1 || VEC == 4, "VEC must be 1 or 4");

extern "C" __global__ void coalesce(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    const size_t total = (size_t)M * (size_t)N;
    const size_t first = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
    if (first >= total) return;
#if VEC == 4
    if (first + 4 <= total) {
        store_float4(out + first, load_float4(in + first));
        return;
    }
#endif
    for (size_t i = first; i < first + VEC && i < total; ++i) out[i] = in[i];
}
