// Grid-stride kernels for notebook/probes/copy_sms/copy_sms.py: a fixed number of blocks moves the
// whole buffer, so the launch's blocks (one an SM where there are no more blocks than SMs) say how
// many SMs pull from DRAM, and U (loads a thread issues before it uses any) how many bytes each warp
// keeps in flight: a rate per SM set by bytes in flight over latency is Little's law.
#ifndef U
#define U 1
#endif

// Copy: every byte read is written back, as in a copy ceiling.
extern "C" __global__ void copy_stride(const float4* __restrict__ in, float4* __restrict__ out, long long n4) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n4; i += U * stride) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = in[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; ++u) out[i + u * stride] = v[u];
    }
    for (; i < n4; i += stride) out[i] = in[i];
}

// Read: the bytes are summed and only one float a thread is written, as a GEMV's weights are read.
extern "C" __global__ void read_stride(const float4* __restrict__ in, float* __restrict__ out, long long n4) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    float acc = 0.f;
    for (; i + (U - 1) * stride < n4; i += U * stride) {
        float4 v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = in[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; ++u) acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
    }
    for (; i < n4; i += stride) acc += (in[i].x + in[i].y) + (in[i].z + in[i].w);
    out[(long long)blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
