// The one device header every variant may include: small helpers, nothing experiment-specific.
#pragma once

// Integer ceiling division, for grid sizes and tile counts.
__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

// 16-byte vector load/store. The address must be 16-byte aligned; callers check alignment
// (or the shape guarantees it) before taking these paths.
__device__ __forceinline__ float4 load_float4(const float* p) {
    return *reinterpret_cast<const float4*>(p);
}
__device__ __forceinline__ void store_float4(float* p, float4 v) {
    *reinterpret_cast<float4*>(p) = v;
}
