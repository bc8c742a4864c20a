// t2 wgmma with both operands in shared memory, written there by TMA, through an mbarrier pipeline.
// Changed from t1 (mma.sync m16n8k16 fed by ldmatrix, cp.async): the tensor cores' Hopper path.
//   - Copies: one thread issues a TMA bulk tensor copy per operand tile (cp.async.bulk.tensor.2d)
//     instead of 128+ threads issuing 16-byte cp.async each; the copy engine writes the tile with the
//     128-byte swizzle wgmma reads without bank conflicts, and fills past the edges of M, N and K with
//     zeros (the ragged-edge strategy for loads: no masks, no clamped addresses).
//   - Math: wgmma.mma_async m64nBNk16 issued by a warpgroup (4 warps) reads A and B straight from
//     shared memory through 64-bit matrix descriptors: no ldmatrix, no operand registers, and one
//     instruction does 64 x BN x 16 multiply-adds (BN = 256: 32x the work of one m16n8k16).
//   - Pipeline: STAGES ring slots, each with one mbarrier the copies complete on (a transaction count
//     of bytes); every thread waits on the slot's barrier, the warpgroups run BK/16 = 4 wgmma on it,
//     wait for them, and after a block barrier thread 0 refills the slot with the k-tile STAGES ahead.
// Expected effect: t1's mma.sync path tops out near ~60% of the dense BF16 rate on Hopper (HMMA issue
//   plus ldmatrix traffic); wgmma reaches the full rate. Each k-tile here still ends in a wait for the
//   wgmma and a block barrier (no warp specialization: that is t3), which leaves the tensor cores idle
//   while the warpgroups drain and resynchronize, ~10-20% of each k-tile at BM x BN = 128 x 256.
//   Napkin math at 4096^3, 128 x 256 tiles: 512 tiles over 132 SMs (3.9 waves, the last 88% full);
//   per k-tile 48 KiB loaded for 2*128*256*64 = 4.2 MFLOP (87 FLOP/byte of shared memory, L2 serves
//   most of it: each A tile is read by 16 block-columns). Expect 450-600 TFLOP/s, 0.6-0.85x cuBLAS
//   BF16 (671 TFLOP/s measured at 4096^3).
// Params: BM (64, 128, 256: one warpgroup per 64 rows), BN (64, 128, 256: the wgmma's N), STAGES (ring
//   slots), GROUP_M (block-rows per rasterization group). BK is 64: one 128-byte swizzled row of BF16.
//   Dynamic shared memory: STAGES * (BM + BN) * 64 * 2 bytes + 1024 (to align the ring to the
//   swizzle's 1024-byte period).
// Shapes: any M, N, K >= 1. M and N edges: TMA zero fill on loads, masked stores. TMA describes a
//   matrix only when its row pitch is a multiple of 16 bytes (K a multiple of 8 BF16); for any other
//   K the host stages A and Bt into copies with padded rows before each launch (staging.py, timed with
//   the GEMM) and the tensor maps describe those: the kernel is the same for every K.
// Arguments: the experiment's (M, N, K; A M x K and Bt N x K, both row-major BF16 bits; C M x N FP32
//   row-major), then the tensor maps of A (box 64 x BM) and Bt (box 64 x BN), encoded by the host.
//   The kernel reads A and Bt only through the tensor maps.
#include "gemm_bf16/hopper.cuh"

#define BK 64
#define WARPGROUPS (BM / 64)
#define THREADS (WARPGROUPS * 128)
#define A_TILE_BYTES (BM * BK * 2)
#define B_TILE_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)
#define ACC (BN / 2)  // FP32 accumulators per thread: a 64 x BN tile over 128 threads


extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_bf16(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C, const __grid_constant__ TmaDescriptor tma_a,
          const __grid_constant__ TmaDescriptor tma_bt) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ unsigned long long full[STAGES];  // slot s holds its k-tile when full[s] completes
    // The ring starts on a 1024-byte boundary: the 128-byte swizzle repeats every 8 rows of 128 bytes,
    // and both the TMA writes and the wgmma descriptors (base offset 0) assume a tile starts on one.
    unsigned char* ring = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);

    // Grouped rasterization (hopper.cuh): blocks resident at once share rows of A and Bt in L2.
    int m0, n0;
    grouped_tile<BM, BN, GROUP_M>(M, N, m0, n0);
    const int k_tiles = (K + BK - 1) / BK;
    const int wg = threadIdx.x / 128;

    const bool filler = threadIdx.x == 0;
    if (filler) {
        for (int s = 0; s < STAGES; ++s) mbar_init(&full[s], 1);
        fence_barrier_init();
    }
    __syncthreads();
    wait_for_prior_grid();  // a staged A and Bt are written (hopper.cuh)

    // Thread 0 fills a slot: one arrival expecting the stage's bytes, two TMA copies (hopper.cuh).
    auto fill = [&](int slot, int kt) {
        fill_stage<BM, BN>(ring + slot * STAGE_BYTES, &full[slot], &tma_a, &tma_bt, m0, n0, kt * BK);
    };
    if (filler) {
        for (int s = 0; s < STAGES && s < k_tiles; ++s) fill(s, s);
    }

    float acc[ACC];
#pragma unroll
    for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;

    for (int kt = 0; kt < k_tiles; ++kt) {
        const int slot = kt % STAGES;
        mbar_wait(&full[slot], (kt / STAGES) & 1);  // the slot's phase flips once per pass of the ring
        const unsigned char* a_tile = ring + slot * STAGE_BYTES + wg * 64 * BK * 2;  // this warpgroup's 64 rows
        const unsigned char* b_tile = ring + slot * STAGE_BYTES + A_TILE_BYTES;
        mma_k_tile<BN>(acc, a_tile, b_tile);  // 4 wgmma, waited for
        // Every warpgroup has finished reading the slot before the copy engine overwrites it.
        __syncthreads();
        if (filler && kt + STAGES < k_tiles) fill(slot, kt + STAGES);
    }

    // Epilogue: the accumulator fragment straight to C, masked (hopper.cuh).
    store_accumulators<BN>(acc, C, M, N, m0 + wg * 64, n0);
}
