// v0 global: the moving average of radius R, every neighbour read straight from global memory.
//
// out[i] = (x[i-R] + ... + x[i+R]) / (2R+1), with x = 0 outside [0, N) (zero padding), so every one
// of the N outputs is defined and written.
// Changed from the previous rung: nothing; the baseline, as in the memory-hierarchy lesson (docs/SOURCES.md).
// Expected effect: 2R+1 load instructions per thread (7 at R=3, 17 at R=8), each warp-wide load a
// contiguous 128 B window shifted by one float (5 sectors). L1 and L2 turn the 2R+1 overlapping
// reads into about one DRAM read of x (the lesson's ncu: 78 MB from DRAM for a 67 MB input), so DRAM
// sees ~4N read + 4N written; what grows with R is L1 traffic: (2R+1) x 128 B per warp and output.
// At R=8 that is ~68 B of L1 data per 8 B of DRAM traffic, near the L1's 128 B/clk/SM at full
// DRAM rate: expect ~90% of the copy ceiling at R=3, falling below at R=8.
// Params: R (1..32), the radius; 256 threads per block, one output per thread.
// Shapes: any N >= 1 (N < 2^31).
#include "common.cuh"

extern "C" __global__ void stencil(const float* __restrict__ in, float* __restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = 0.0f;
#pragma unroll
    for (int k = -R; k <= R; ++k) {
        const int j = i + k;
        sum += (j >= 0 && j < n) ? in[j] : 0.0f;
    }
    // A true division (NVRTC's default -prec-div=true), so the result is the correctly rounded
    // float32 quotient the numpy reference computes too.
    out[i] = sum / (float)(2 * R + 1);
}
