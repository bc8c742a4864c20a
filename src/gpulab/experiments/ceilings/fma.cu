// The FP32 FMA ceiling: CHAINS independent multiply-add chains per thread, `iters` steps each.
//
// Not an experiment (nothing to check): the kernel `gpulab ceilings` times to learn this card's FP32
// rate, the ceiling compute-bound records are shown against.
// Why this shape: an FFMA's result is ready about 4 cycles after it issues, and each of an SM's 4
// schedulers issues one warp instruction per cycle to 32 FP32 lanes (128 FMA per clock per SM). One
// chain can issue once per latency, so a scheduler needs >= 4 chains ready every cycle: CHAINS=8 per
// thread and 16 warps per scheduler (8 blocks of 256 per SM) leave a wide margin. The inner loop is
// unrolled 32 deep so the loop's own add, compare and branch take ~1% of the issue slots.
// Expected: 2 flops x 128 x 132 SMs x ~1.98 GHz = 66.9 TFLOP/s on an H200 (an earlier measurement
// with a similar loop read 64.0).
// The chains converge to b / (1 - a) = 1, so values stay normal (no denormal slow path); the sum is
// stored so the compiler cannot drop the work, and fmaf cannot be reassociated away without fast-math.
// Params: CHAINS (independent chains per thread). Runtime: iters, a multiple of 32.

extern "C" __global__ void fma_peak(float* __restrict__ out, float a, float b, int iters) {
    float x[CHAINS];
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) x[c] = 1e-3f * threadIdx.x + c;
#pragma unroll 32
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int c = 0; c < CHAINS; ++c) x[c] = fmaf(x[c], a, b);
    }
    float sum = 0.0f;
#pragma unroll
    for (int c = 0; c < CHAINS; ++c) sum += x[c];
    out[(size_t)blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
