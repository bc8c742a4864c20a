// Device probe (notebook/probes/probe_tma_maps.py): one TMA box of a BF16 tensor map into shared memory,
// copied out as it landed (128-byte swizzled), so the host can compare it with the matrix.
#include "gemm_bf16/hopper.cuh"

extern "C" __global__ void tma_probe(const __grid_constant__ TmaDescriptor map, unsigned short* out, int c0, int c1,
                                     int bytes) {
    __shared__ __align__(1024) unsigned char buf[128 * 128];  // up to a 128-row box
    __shared__ unsigned long long bar;
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        fence_barrier_init();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mbar_arrive_expect_tx(&bar, bytes);
        tma_load_2d(buf, &map, &bar, c0, c1);
    }
    mbar_wait(&bar, 0);
    for (int i = threadIdx.x; i < bytes / 2; i += blockDim.x) out[i] = reinterpret_cast<unsigned short*>(buf)[i];
}
