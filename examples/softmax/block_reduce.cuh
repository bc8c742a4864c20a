// The block-wide max and sum the softmax kernels share: each warp reduces by shuffles, then every
// thread merges the warps' results from shared memory itself (each needs the block's value, not
// only warp 0), in one order, so every thread holds the same bits. `scratch` holds 32 floats.
#pragma once

// NVRTC has no math.h: -infinity spelled by its bits.
#define NEG_INF __int_as_float(0xff800000)

__device__ float block_max(float v, float* scratch) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    // Every thread merges the warps' results itself: each needs the block's value, not only warp 0.
    v = scratch[0];
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) v = fmaxf(v, scratch[w]);
    __syncthreads();  // scratch is reused by the next reduction
    return v;
}

__device__ float block_sum(float v, float* scratch) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
    __syncthreads();
    v = scratch[0];  // in the same order in every thread: every thread gets the same bits
    for (int w = 1; w < (int)(blockDim.x >> 5); ++w) v += scratch[w];
    __syncthreads();
    return v;
}
