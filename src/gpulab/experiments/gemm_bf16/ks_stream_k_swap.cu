// ks stream-K with the operands swapped: C^T = Bt * A^T on wgmma, the weights' rows on the wgmma's M
// side and the few tokens (rows of A) on its N side, the k-tiles of all tiles shared evenly by one
// wave of blocks, partials added in a fixed order.
// Changed from kc (t3's TMA ring and wgmma, split over K across a cluster): kc's tiles are 128 rows
//   of A by BN rows of Bt, so a decode batch of 1-16 tokens fills 1-16 of the 128 rows (the rest TMA
//   zero fill: the tensor cores compute 8-128x the products needed), and its split needs clusters,
//   of which the H200 holds 30 of four. Here:
//   - Swapped: the wgmma's A operand is a 64-row slice of a 128-row tile of Bt (two consumer
//     warpgroups), its B operand the TN rows of A (TN = 8-128, the wgmma's N); both tiles K-major
//     with the 128-byte swizzle, as every TMA rung (Bt and A are both row-major with k contiguous).
//     The accumulators are C^T's 128 x TN tile: the epilogue stores element (n, m) at C[m][n].
//   - Stream-K over every tile: the units (tile, k-tile), tile-major, are cut into one contiguous
//     range per block of a single wave (SMs x BPS blocks); a block's range runs through a few tiles,
//     the first and last of them partly. Where a block holds a whole tile it stores C; otherwise it
//     writes its 128 x TN FP32 partial to its own workspace slot, and the last of the tile's blocks
//     to arrive (a counter per tile, reset by that block) adds the partials in block order, i.e. k
//     order, and stores C: the same bits on every run, no spin, any grid.
//   - One producer warp (warp 8) issues the TMA copies of the block's units into a ring of STAGES
//     slots, units of different tiles back to back, so the ring never drains at a tile's end.
// Napkin math (H200: copy ceiling ~4.3 TB/s, 132 SMs, 228 KiB of shared memory an SM):
//   - Decode (M = 1-16, TN = 16) is one read of Bt: 1 x 4096 x 4096 is 33.5 MB, 7.8 us at the copy
//     ceiling; 16 x 57344 x 8192 940 MB, 218 us. Bytes in flight: 4.3 TB/s x ~1.5 us of loaded DRAM
//     latency ~ 6.5 MB, 49 KB an SM. A slot holds 16 KiB of Bt (128 rows x 128 bytes) and 2 KiB of
//     A: STAGES = 8 keeps 128 KiB of Bt in flight per SM (d0 holds up to 64 KiB, and only in its
//     registers while the warp waits), without a register spent on it.
//   - Tensor work per unit: 2 x 4 wgmma m64nTNk16, 2 x 128 x TN x 64 FLOP (262 KFLOP at TN = 16)
//     against 16 KiB of Bt: at 32 GB/s an SM (the copy ceiling's share) a unit is ~0.5 us of DRAM
//     time and ~0.05 us of tensor time at TN = 16, ~0.4 us at TN = 128 (M = 128 tokens: there the
//     two are close, and A's 16 KiB tile per unit comes from L2).
//   - The fixup: 128 x TN x 4 bytes a partial (8 KiB at TN = 16), at most two per block, read back
//     once by a tile's last block: at 1 x 4096 x 4096 (32 tiles of 64 k-tiles over 132 blocks) 160
//     partials, 1.3 MB written and read through L2 against Bt's 33.5 MB.
// Expected effect: decode shapes at ~90% of the copy ceiling once the launch is paid (d0: 47-90%,
//   0.78-0.95x cuBLAS BF16 on the H200, 2026-12-05), the same kernel at 16-128 tokens, every shape a
//   single balanced wave.
// Measured (H200, 2026-12-05, notebook/device/device_call18.sh to device_call22.sh): the widest
//   decode layers at 93-97% of the copy ceiling (1 x 57344 x 8192 in 223 us, 1.03x cuBLAS BF16); the
//   times fit a fixed cost of ~9 us plus the bytes at ~4.4 TB/s, where cuBLAS's fit ~7 us. Of that
//   fixed part the fixup's tail was some: a ticket with acquire-release semantics (one trip to L2
//   where __threadfence and a relaxed atomicAdd took two) and the partials loaded FIXUP_CHUNK at a
//   time cut 2-8% at the layers of 33-134 MB (16 x 4096 x 4096: 19.1 -> 17.4 us); the shared-memory
//   carve-out was not (empty kernels of 132 x 288 threads: 2.98 us with 16-200 KiB, 2.82 with none).
//   d0 tuned (G = 1, U = 4) runs those layers faster still (12.5 us at 1 x 4096 x 4096).
// Params: TN (tokens per tile: the wgmma's N, 8-128), STAGES (ring slots of 128 + TN rows x 128
//   bytes), BPS (blocks per SM: the wave is SMs x BPS blocks). BW = 128 rows of Bt per tile (two
//   consumer warpgroups of 64), BK = 64. Dynamic shared memory STAGES x (128 + TN) x 128 + 1024 bytes.
// Shapes: any M, N, K >= 1; ragged M and N by TMA zero fill and masked stores; K not a multiple of 8
//   through the staged copies (staging.py), as every TMA rung. M past TN: more token tiles, each one
//   more pass over Bt (correct at any M, made for M <= 128).
// Arguments: the experiment's, Bt's tensor map (boxes of 128 rows x 64 k), A's (TN rows x 64 k), the
//   workspace (2 x gridDim.x x 128 x TN FP32: a first and a last partial per block) and a counter per
//   tile (zeroed once by the host, left zero by the kernel).
#include "gemm_bf16/hopper.cuh"
#include "gemm_bf16/wgmma_small.cuh"

#define BK 64
#define CONSUMERS 2
#define BW (64 * CONSUMERS)                 // rows of Bt (columns of C) per tile
#define CONSUMER_THREADS (128 * CONSUMERS)
#define THREADS (CONSUMER_THREADS + 32)      // the consumers' warpgroups, then the producer warp
#define W_TILE_BYTES (BW * BK * 2)
#define A_TILE_BYTES (TN * BK * 2)
#define STAGE_BYTES (W_TILE_BYTES + A_TILE_BYTES)
#define SLOT_DESC_STEP (STAGE_BYTES / 16)    // one slot further: the descriptors' low words
#define ACC (TN / 2)                         // accumulators per consumer thread
#define PARTIAL_FLOATS (BW * TN)             // one tile's FP32 partial
#define RELEASES_PER_SLOT (4 * CONSUMERS)    // one arrival per consumer warp
#define FIXUP_BARRIER 1                      // named barrier of the consumer threads (0 is __syncthreads')
#define FIXUP_CHUNK (ACC >= 32 ? 1 : 32 / ACC)  // partials in flight at once in the fixup: 32 registers

#if TN != 8 && TN != 16 && TN != 32 && TN != 64 && TN != 128
#error "TN must be 8, 16, 32, 64 or 128"
#endif

// The block of a wave of `blocks` whose range [b U / G, (b + 1) U / G) holds unit u.
__device__ __forceinline__ int owner(long long u, long long units, int blocks) {
    return (int)(((u + 1) * blocks - 1) / units);
}
__device__ __forceinline__ long long range_start(int b, long long units, int blocks) {
    return (long long)b * units / blocks;
}

// Where block b keeps its partial of tile t: its first tile's in slot 2b, its last's in 2b + 1.
__device__ __forceinline__ long long partial_slot(int b, int t, int k_tiles, long long units, int blocks) {
    const bool first = range_start(b, units, blocks) / k_tiles == t;
    return 2LL * b + (first ? 0 : 1);
}

// The fixup's ticket: the tile's count of blocks arrived, as it was before this one. bar.sync has
// ordered every consumer thread's partial before this thread's release (cumulative); its acquire
// orders the partials of the blocks counted before it ahead of what the consumers read after the
// next barrier: CUTLASS's GenericBarrier pattern, one trip to L2 where __threadfence and a relaxed
// atomicAdd took two. sgemm/split_k.cuh's last_to_arrive is that older ticket for whole blocks
// (__syncthreads): here the producer warp has left and the consumers meet on a named barrier. The
// kernels on last_to_arrive (d0, gv, sx, v13) keep it until a card has timed them with this one.
__device__ __forceinline__ unsigned ticket_acq_rel(unsigned* counter) {
    unsigned old;
    asm volatile("atom.acq_rel.gpu.global.add.u32 %0, [%1], 1;" : "=r"(old) : "l"(counter) : "memory");
    return old;
}

// Tile t (token tiles fastest: the tiles sharing 128 rows of Bt run back to back) -> its origin.
__device__ __forceinline__ void tile_origin(int t, int M, int& m0, int& n0) {
    const int m_tiles = (M + TN - 1) / TN;
    m0 = (t % m_tiles) * TN;
    n0 = (t / m_tiles) * BW;
}

// Accumulator i of consumer thread `ct` (warpgroup c = ct / 128, warp w, lane l) holds C^T's row
// 64 c + 16 w + l / 4 + 8 ((i / 2) % 2) (a column n of C) and column 8 (i / 4) + 2 (l % 4) + i % 2
// (a row m of C): the wgmma D fragment (hopper.cuh). Stores it masked at the edges.
__device__ __forceinline__ void store_element(float* C, int M, int N, int m0, int n0, int ct, int i, float v) {
    const int w = (ct / 32) % 4, l = ct % 32;
    const int n = n0 + 64 * (ct / 128) + 16 * w + l / 4 + 8 * ((i / 2) % 2);
    const int m = m0 + 8 * (i / 4) + 2 * (l % 4) + (i % 2);
    if (m < M && n < N) C[(long long)m * N + n] = v;
}

extern "C" __global__ void __launch_bounds__(THREADS, BPS)
gemm_bf16(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C, const __grid_constant__ TmaDescriptor tma_bt,
          const __grid_constant__ TmaDescriptor tma_a, float* __restrict__ work, unsigned* __restrict__ counters) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ unsigned long long full[STAGES], empty[STAGES];
    __shared__ int last_here;  // the fixup's verdict, from consumer thread 0 to the rest
    unsigned char* ring = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);  // the swizzle's period

    const int k_tiles = (K + BK - 1) / BK;
    const long long tiles = (long long)((M + TN - 1) / TN) * ((N + BW - 1) / BW);
    const long long units = tiles * k_tiles;
    const int blocks = gridDim.x, b = blockIdx.x;
    const long long ub = range_start(b, units, blocks), ue = range_start(b + 1, units, blocks);

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], RELEASES_PER_SLOT);
        }
        fence_barrier_init();
    }
    __syncthreads();
    wait_for_prior_grid();  // a staged A and Bt are written (hopper.cuh)

    if (threadIdx.x >= CONSUMER_THREADS) {
        // The producer warp: its first lane copies every unit of the range, in order.
        if (threadIdx.x == CONSUMER_THREADS) {
            int i = 0;
            for (long long u = ub; u < ue; ++u, ++i) {
                const int slot = i % STAGES;
                if (i >= STAGES) mbar_wait(&empty[slot], ((i / STAGES) - 1) & 1);
                int m0, n0;
                tile_origin((int)(u / k_tiles), M, m0, n0);
                const int k0 = (int)(u % k_tiles) * BK;
                unsigned char* dst = ring + slot * STAGE_BYTES;
                mbar_arrive_expect_tx(&full[slot], STAGE_BYTES);  // zero-filled parts count too
                tma_load_2d(dst, &tma_bt, &full[slot], k0, n0);
                tma_load_2d(dst + W_TILE_BYTES, &tma_a, &full[slot], k0, m0);
            }
        }
        return;
    }

    // The consumers: warpgroup c computes rows 64 c .. 64 c + 63 of each tile's 128 x TN product.
    const int ct = threadIdx.x, c = ct / 128;
    const unsigned w_low0 = desc_k_major_sw128_low(ring + c * 64 * BK * 2);
    const unsigned a_low0 = desc_k_major_sw128_low(ring + W_TILE_BYTES);
    int i = 0;  // units consumed: the ring position
    for (long long u = ub; u < ue;) {
        const int t = (int)(u / k_tiles);
        const long long tile_end = (long long)(t + 1) * k_tiles, seg_end = min(ue, tile_end);
        const bool whole = u == (long long)t * k_tiles && seg_end == tile_end;
        float acc[ACC];
#pragma unroll
        for (int j = 0; j < ACC; ++j) acc[j] = 0.0f;
        for (long long v = u; v < seg_end; ++v, ++i) {
            const int slot = i % STAGES;
            mbar_wait(&full[slot], (i / STAGES) & 1);
            const unsigned w_low = w_low0 + slot * SLOT_DESC_STEP, a_low = a_low0 + slot * SLOT_DESC_STEP;
            fence_registers(acc);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {  // k16 slice kk: 32 bytes along the rows
                wgmma_m64_tokens<TN>(acc, desc_k_major_sw128_of(w_low + 2 * kk), desc_k_major_sw128_of(a_low + 2 * kk));
            }
            wgmma_commit();
            // Keep this unit's group in flight; the previous one has retired: free its slot.
            wgmma_wait<1>();
            fence_registers(acc);
            if (v > u && ct % 32 == 0) mbar_arrive(&empty[(i - 1) % STAGES]);
        }
        wgmma_wait<0>();
        fence_registers(acc);
        if (ct % 32 == 0) mbar_arrive(&empty[(i - 1) % STAGES]);  // the segment's last slot

        int m0, n0;
        tile_origin(t, M, m0, n0);
        if (whole) {
#pragma unroll
            for (int j = 0; j < ACC; ++j) store_element(C, M, N, m0, n0, ct, j, acc[j]);
        } else {
            // This block's share of the tile: to its slot, thread-major (accumulator j of thread ct at
            // j x 256 + ct: 128 contiguous bytes a warp store, and the same thread of the last block
            // reads the same elements back).
            float* mine = work + partial_slot(b, t, k_tiles, units, blocks) * PARTIAL_FLOATS + ct;
#pragma unroll
            for (int j = 0; j < ACC; ++j) __stcg(mine + j * CONSUMER_THREADS, acc[j]);
            named_barrier_sync(FIXUP_BARRIER, CONSUMER_THREADS);  // every consumer's partial stored ...
            const int first_b = owner((long long)t * k_tiles, units, blocks);
            const int last_b = owner(tile_end - 1, units, blocks);
            if (ct == 0) {
                // ... before this ticket releases them all; its acquire makes the partials counted
                // before it readable after the next barrier.
                const unsigned arrived = ticket_acq_rel(counters + t);
                last_here = arrived == (unsigned)(last_b - first_b);
                if (last_here) counters[t] = 0;  // every block of the tile has arrived: ready for the next launch
            }
            named_barrier_sync(FIXUP_BARRIER, CONSUMER_THREADS);
            if (last_here) {
                // The partials in block order, i.e. k order; FIXUP_CHUNK of them loaded before any is
                // added, so the tail after the stream is a few trips to L2, not one a partial.
                float sum[ACC];
                const float* p0 = work + partial_slot(first_b, t, k_tiles, units, blocks) * PARTIAL_FLOATS + ct;
#pragma unroll
                for (int j = 0; j < ACC; ++j) sum[j] = __ldcg(p0 + j * CONSUMER_THREADS);
#pragma unroll 1
                for (int p = first_b + 1; p <= last_b; p += FIXUP_CHUNK) {
                    float part[FIXUP_CHUNK][ACC];
#pragma unroll
                    for (int f = 0; f < FIXUP_CHUNK && p + f <= last_b; ++f) {
                        const float* q = work + partial_slot(p + f, t, k_tiles, units, blocks) * PARTIAL_FLOATS + ct;
#pragma unroll
                        for (int j = 0; j < ACC; ++j) part[f][j] = __ldcg(q + j * CONSUMER_THREADS);
                    }
#pragma unroll
                    for (int f = 0; f < FIXUP_CHUNK && p + f <= last_b; ++f) {
#pragma unroll
                        for (int j = 0; j < ACC; ++j) sum[j] += part[f][j];
                    }
                }
#pragma unroll
                for (int j = 0; j < ACC; ++j) store_element(C, M, N, m0, n0, ct, j, sum[j]);
            }
        }
        u = seg_end;
    }
}
