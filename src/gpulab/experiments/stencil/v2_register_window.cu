// v2 register window: the shared tile, and each thread computes 4 neighbouring outputs from one
// window of 4 + 2R inputs held in registers.
//
// Changed from v1: a block now covers 1024 outputs (256 threads x 4). A thread reads its window
// tile[4t .. 4t + 4 + 2R) with 16-byte shared loads, ceil((4 + 2R) / 4) of them, into registers,
// and sums each of its 4 outputs from there; the outputs go out as one 16-byte store.
// Expected effect: v1 spends 2R+1 shared-memory wavefronts per warp and per 32 outputs (17 at R=8,
// plus the fill), and the L1/shared data path moves 128 B per clock per SM: at R=8 that caps v0 and
// v1 near 80% of a ~4.2 TB/s copy ceiling (132 SMs x 1.98 GHz / ~20 wavefronts x 32 outputs x 8 B).
// Here a warp's 128 outputs cost ceil((4+2R)/4) LDS.128 of 4 wavefronts each (20 at R=8: 5 per 32
// outputs) plus the fill, so shared memory stops being the limit and DRAM is: expect >= 90% of the
// copy ceiling at R=3 and R=8. Quarter-warp phases of 8 lanes read 128 contiguous bytes, so the
// 16-byte loads are free of bank conflicts. The adds (2R+1 per output) stay far from the FP32 rate.
// Params: R (1..32); 256 threads per block, 4 outputs per thread; (1020 + 4*ceil((4+2R)/4)) x 4 B
// of static shared memory (4.2 KiB at R=8); 4*ceil((4+2R)/4) window registers per thread.
// Shapes: any N >= 1 (N < 2^31); a last group of fewer than 4 outputs is stored one by one.
#include "common.cuh"

#define BLOCK 256
#define PER 4                              // outputs per thread
#define SPAN4 ((PER + 2 * R + 3) / 4)      // 16-byte reads that cover one thread's window
#define TILE (BLOCK * PER - PER + 4 * SPAN4)

extern "C" __global__ void stencil(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ __align__(16) float tile[TILE];
    const int block_first = (int)blockIdx.x * (BLOCK * PER);  // first output of the block
    const int first = block_first - R;                        // the input index held by tile[0]
    for (int k = threadIdx.x; k < TILE; k += BLOCK) {
        const int j = first + k;
        tile[k] = (j >= 0 && j < n) ? in[j] : 0.0f;
    }
    __syncthreads();

    float v[4 * SPAN4];  // tile[4t .. 4t + 4*SPAN4): every input this thread's 4 outputs need
#pragma unroll
    for (int q = 0; q < SPAN4; ++q) {
        const float4 f = reinterpret_cast<const float4*>(tile)[threadIdx.x + q];
        v[4 * q + 0] = f.x;
        v[4 * q + 1] = f.y;
        v[4 * q + 2] = f.z;
        v[4 * q + 3] = f.w;
    }
    float s[PER];
#pragma unroll
    for (int m = 0; m < PER; ++m) {
        float sum = 0.0f;
#pragma unroll
        for (int k = 0; k <= 2 * R; ++k) sum += v[m + k];
        s[m] = sum / (float)(2 * R + 1);
    }

    const int i = block_first + PER * (int)threadIdx.x;  // a multiple of 4: out + i is 16-byte aligned
    if (i + PER <= n) {
        store_float4(out + i, make_float4(s[0], s[1], s[2], s[3]));
    } else {
#pragma unroll
        for (int m = 0; m < PER; ++m)
            if (i + m < n) out[i + m] = s[m];
    }
}
