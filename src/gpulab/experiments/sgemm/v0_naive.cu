// v0 naive: one thread computes one element of C = A * B (row-major, float32).
//
// Changed from the previous rung: nothing; this is the floor of the ladder.
// Expected effect: every thread reads a full row of A and a full column of B from global memory,
// 2K loads for 2K flops (0.25 flop per byte requested). A warp is BLOCK consecutive columns of one or
// two rows, so B's loads are coalesced and A's are broadcasts; the caches absorb most of the reuse,
// but the load/store pipe and latency, not DRAM, set the speed.
// Params: BLOCK (16 or 32): the block is BLOCK x BLOCK threads, one per element of a C tile.
// Shapes: any M, N, K >= 1; threads outside C return after the guard.
#include "common.cuh"

extern "C" __global__ void sgemm(int M, int N, int K, const float* __restrict__ A,
                                 const float* __restrict__ B, float* __restrict__ C) {
    const int col = blockIdx.x * BLOCK + threadIdx.x;
    const int row = blockIdx.y * BLOCK + threadIdx.y;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int p = 0; p < K; ++p) {
        acc += A[(size_t)row * K + p] * B[(size_t)p * N + col];
    }
    C[(size_t)row * N + col] = acc;
}
