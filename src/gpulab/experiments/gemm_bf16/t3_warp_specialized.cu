// t3 warp specialization: a producer warpgroup issues the TMA copies, two consumer warpgroups run
// wgmma, and registers move from the producer to the consumers (setmaxnreg).
// Changed from t2: t2's warpgroups both copied (thread 0) and computed, and every k-tile ended
//   in a block barrier before the slot could be refilled, so the tensor cores idled while all
//   warpgroups drained. Here the roles are split and synchronize only through mbarriers:
//   - full[s]  (1 arrival + the stage's bytes): the producer's copies landed in slot s;
//   - empty[s] (256 arrivals: every consumer thread): both consumers finished reading slot s.
//   The producer runs up to STAGES k-tiles ahead, waiting on empty[s] only when the ring is full; a
//   consumer waits only for its data. The two consumers (64 rows each of the 128 x BN tile) drift
//   apart, so one issues wgmma while the other waits for its group to retire.
//   - Registers: 384 threads under __launch_bounds__(384, 1) start at 168 each; the producer gives
//     back to 40 and the consumers take 232 (128 x 40 + 256 x 232 = 64512 of 65536), room for the
//     128 accumulators of a 64 x 256 wgmma tile with no spills.
// Expected effect: the block barrier and the refill bubble gone, the tensor cores see back-to-back
//   wgmma from two warpgroups: ~1.2-1.4x t2 at 4096^3, 0.85-1.0x cuBLAS BF16 (671 TFLOP/s). What is
//   left for t4: each block still loads its tiles from L2 alone (no cluster multicast), the grid is
//   not persistent (a prologue and epilogue per tile), and C is stored from registers.
//   Napkin math at 4096^3, 128 x 256 tiles: 512 tiles, 3.9 waves over 132 SMs; per k-tile 48 KiB
//   arrive for 4.2 MFLOP; at 700 TFLOP/s an SM needs 48 KiB per ~0.8 us, 60 GB/s per SM, 8 TB/s from L2
//   over all SMs (each A tile is read by 16 block-columns, each B tile by 32 block-rows).
// Params: BM (128: two consumer warpgroups of 64 rows), BN (128 or 256: the wgmma's N), STAGES (ring
//   slots), GROUP_M (block-rows per rasterization group). BK = 64. Dynamic shared memory:
//   STAGES * (128 + BN) * 64 * 2 + 1024 bytes.
// Shapes: as t2: any M, N, K >= 1; for K not a multiple of 8 the host stages padded copies of A and Bt
//   (staging.py) and the tensor maps describe those.
#include "gemm_bf16/hopper.cuh"

#define BK 64
#define CONSUMERS 2
#define THREADS (128 * (CONSUMERS + 1))
#define A_TILE_BYTES (BM * BK * 2)
#define B_TILE_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)
#define ACC (BN / 2)
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232

#if BM != 64 * CONSUMERS
#error "BM is 64 rows per consumer warpgroup"
#endif
#if BN != 128 && BN != 256
#error "BN must be 128 or 256"
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1)
gemm_bf16(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C, const __grid_constant__ TmaDescriptor tma_a,
          const __grid_constant__ TmaDescriptor tma_bt) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ unsigned long long full[STAGES], empty[STAGES];
    unsigned char* ring = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);  // as t2

    int m0, n0;
    grouped_tile<BM, BN, GROUP_M>(M, N, m0, n0);
    const int k_tiles = (K + BK - 1) / BK;
    const int wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], 128 * CONSUMERS);
        }
        fence_barrier_init();
    }
    __syncthreads();
    wait_for_prior_grid();  // a staged A and Bt are written (hopper.cuh)

    if (wg == 0) {
        // Producer warpgroup: one thread issues every copy; the rest have nothing to do.
        regs_dealloc<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < k_tiles; ++kt) {
                const int slot = kt % STAGES;
                // The slot's previous k-tile (kt - STAGES) must have been read by both consumers.
                if (kt >= STAGES) mbar_wait(&empty[slot], ((kt / STAGES) - 1) & 1);
                fill_stage<BM, BN>(ring + slot * STAGE_BYTES, &full[slot], &tma_a, &tma_bt, m0, n0, kt * BK);
            }
        }
    } else {
        // Consumer warpgroups 1 and 2: rows (wg - 1) * 64 .. + 63 of the block tile.
        regs_alloc<CONSUMER_REGS>();
        const int c = wg - 1;
        float acc[ACC];
#pragma unroll
        for (int i = 0; i < ACC; ++i) acc[i] = 0.0f;
        for (int kt = 0; kt < k_tiles; ++kt) {
            const int slot = kt % STAGES;
            mbar_wait(&full[slot], (kt / STAGES) & 1);
            const unsigned char* a_tile = ring + slot * STAGE_BYTES + c * 64 * BK * 2;
            const unsigned char* b_tile = ring + slot * STAGE_BYTES + A_TILE_BYTES;
            mma_k_tile<BN>(acc, a_tile, b_tile);  // 4 wgmma, waited for
            mbar_arrive(&empty[slot]);  // this thread's reads of the slot are done
        }

        store_accumulators<BN>(acc, C, M, N, m0 + c * 64, n0);  // this consumer's 64 rows
    }
}
