// kc split-K across a thread-block cluster: SPLIT blocks compute one 128 x BN tile of C over
// consecutive slices of K and add their partial tiles through distributed shared memory, in slice order.
// Changed from t3 (a TMA producer warpgroup and two wgmma consumers, one block per tile): where C has
//   fewer tiles than the card has SMs (M = 128 tokens: 16-80 tiles of 128 x 128-256 at N = 4096-10240;
//   1024 x 1024: 32-64; 257 x 129: 3-6), each tile is computed by a cluster of SPLIT blocks (grid =
//   tiles x SPLIT, __cluster_dims__(SPLIT)), block rank s taking k-tiles [s T / SPLIT, (s + 1) T /
//   SPLIT) of the T = ceil(K / 64). The mainloop is t3's with t4's wgmma wait depth 1 (the k-tile's
//   group stays in flight while the previous slot is released).
//   - The reduction, in the cluster: after its last wgmma each block writes its 128 x BN FP32 partial
//     over its own ring (free by then: every copy it issued was consumed, and both consumers passed a
//     barrier after their last wgmma), thread-major (float4 i of consumer thread t at [c][i][t]: 512
//     contiguous bytes per warp store, and the same thread of every block holds the same elements).
//     A cluster barrier (release / acquire at cluster scope) publishes the partials; then block s
//     adds, for its share of the float4s (band i in [s Q / SPLIT, (s + 1) Q / SPLIT), Q = BN / 8), the
//     SPLIT partials of ranks 0, 1, ..., SPLIT - 1 in that order (ld.shared::cluster, mapa: 512
//     contiguous bytes per warp load) and stores its band of C; a second cluster barrier keeps every
//     block's shared memory alive until its peers have read it. Fixed order: the same bits on every
//     run. No workspace, no flags, no spin: the cluster's blocks are co-resident by construction.
//   - Cost: per block BM x BN x 4 bytes written to its own shared memory (128 KiB at BN = 256) and
//     (SPLIT - 1) / SPLIT of that read from its peers', nothing through L2. Against the mainloop's
//     (K / SPLIT) x (BM + BN) x 2 bytes per block: 128 (SPLIT - 1) / K x BN / (BM + BN) x 2 of it,
//     e.g. 4.7% at K = 4096, SPLIT = 2, BN = 128; 14% at SPLIT = 4, BN = 256. The distributed
//     shared memory's bandwidth is not measured here (published figures vary): the tune decides.
// Expected effect: at M = 128, K = 4096, N = 6144 (Bt 50 MB: ~12 us at the copy ceiling, compute
//   ~6.4 GFLOP) t3/t4 run 24-48 tiles on as many SMs, each the whole K: the time of 64 k-tiles on one
//   SM (~35 us at t4's ~1,050 cycles per 128 x 256 k-tile). Split three ways the 24 tiles of 128 x 256
//   fill 72 SMs, each with 4 stages of 48 KiB in flight (13.8 MB in all, ~3x what the copy ceiling
//   needs): the time falls towards the copy ceiling's (~13-15 us). Why BN = 256 by default: A's 128
//   rows are re-read by every tile column, so at BN = 128 the L2 -> SM traffic is twice Bt's bytes
//   (~8.4 TB/s at the copy ceiling, near what the L2 serves), at 256 1.5x. Why clusters of three or
//   two: the H200 holds 66 clusters of two and 30 of four (gpulab.gpu.clusters); 96-128 blocks in
//   clusters of four run a second wave. 1024 x 1024 x 4096: 32 tiles of 128 x 256 (t4: 0.375x
//   cuBLAS), 96 blocks at SPLIT 3. 257 x 129 x 8191: 3-9 tiles (t4: 0.179x cuBLAS), 24-72 blocks at
//   SPLIT 8, each 16 of the 128 k-tiles.
// Params: BN (64, 96, 128, 192, 256: the wgmma's N), STAGES (ring slots; with SPLIT > 1 the ring must
//   hold the 128 x BN partial: STAGES x (128 + BN) x 128 >= 512 BN), SPLIT (blocks per cluster, k
//   slices: 1 is t3 with t4's wait depth, 2-8), GROUP_M (tile-rows per rasterization group). BM = 128
//   (two consumer warpgroups of 64 rows), BK = 64. Dynamic shared memory: STAGES x (128 + BN) x 128
//   + 1024 bytes. Registers: producer 40, consumers 232 (setmaxnreg), as t3.
// Shapes: any M, N, K >= 1, as t3: ragged M and N by TMA zero fill and masked stores; K not a multiple
//   of 8 through the staged copies (staging.py). A slice with no k-tile (K < 64 (SPLIT - 1)) adds zeros.
#include "gemm_bf16/hopper.cuh"
#include "gemm_bf16/wgmma_n96.cuh"  // wgmma_m64n96k16: BN = 96, which hopper.cuh's dispatch does not take

#define BK 64
#define CONSUMERS 2
#define THREADS (128 * (CONSUMERS + 1))
#define A_TILE_BYTES (BM * BK * 2)
#define B_TILE_BYTES (BN * BK * 2)
#define STAGE_BYTES (A_TILE_BYTES + B_TILE_BYTES)
#define SLOT_DESC_STEP (STAGE_BYTES / 16)  // one ring slot further: the descriptors' low words
#define ACC (BN / 2)                       // one 64-row half's accumulators per thread
#define QUADS (ACC / 4)                    // its float4s
#define PRODUCER_REGS 40
#define CONSUMER_REGS 232
#define RELEASES_PER_SLOT (4 * CONSUMERS)  // one arrival per consumer warp

#if BM != 64 * CONSUMERS
#error "BM is 64 rows per consumer warpgroup"
#endif
#if BN != 64 && BN != 96 && BN != 128 && BN != 192 && BN != 256
#error "BN must be 64, 96, 128, 192 or 256"
#endif
#if SPLIT < 1 || SPLIT > 8
#error "SPLIT must be 1 to 8 blocks per cluster (8: the portable cluster size)"
#endif

// One k16 step's wgmma: hopper.cuh's for the widths its dispatch takes, wgmma_n96.cuh's for 96.
__device__ __forceinline__ void kc_wgmma(float (&d)[ACC], unsigned long long desc_a, unsigned long long desc_b) {
#if BN == 96
    wgmma_m64n96k16(d, desc_a, desc_b);
#else
    wgmma_m64k16<BN>(d, desc_a, desc_b);
#endif
}

#if SPLIT > 1
#if STAGES * STAGE_BYTES < BM * BN * 4
#error "with SPLIT > 1 the ring holds the block's 128 x BN FP32 partial: more STAGES"
#endif
#define CLUSTER_DIMS __cluster_dims__(SPLIT, 1, 1)  // fixed at compile time: a plain launch forms clusters
#else
#define CLUSTER_DIMS
#endif

// Tile t of the grouped order (GROUP_M tile-rows at a time, column-major inside) -> its origin; the
// SPLIT blocks of a cluster share one tile.
__device__ __forceinline__ void tile_origin(int t, int M, int N, int& m0, int& n0) {
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int per_group = GROUP_M * grid_n;
    const int first_m = (t / per_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    m0 = (first_m + (t % per_group) % group_rows) * BM;
    n0 = ((t % per_group) / group_rows) * BN;
}

// Two FP32 values at C[row][col], C[row][col + 1], masked at the edges; one 8-byte store where N is
// even (then the pair is 8-byte aligned and both columns lie inside together).
__device__ __forceinline__ void store_pair(float* C, int M, int N, int row, int col, float x, float y) {
    if (row >= M || col >= N) return;
    float* dst = C + (long long)row * N + col;
    if (N % 2 == 0) {
        *reinterpret_cast<float2*>(dst) = make_float2(x, y);
    } else {
        dst[0] = x;
        if (col + 1 < N) dst[1] = y;
    }
}

#if SPLIT > 1
// 16 bytes of block `rank`'s shared memory at the offset `local` has in this block's.
__device__ __forceinline__ float4 ld_cluster_f4(const void* local, unsigned rank) {
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_u32(local)), "r"(rank));
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(remote)
                 : "memory");
    return v;
}
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1) CLUSTER_DIMS
gemm_bf16(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C, const __grid_constant__ TmaDescriptor tma_a,
          const __grid_constant__ TmaDescriptor tma_bt) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ unsigned long long full[STAGES], empty[STAGES];
    // Same offset in every block of the cluster (same kernel, same static layout): the reduction's
    // loads from a peer's partial rely on it.
    unsigned char* ring = smem_raw + ((1024 - (smem_u32(smem_raw) & 1023)) & 1023);

    int m0, n0;
    tile_origin(blockIdx.x / SPLIT, M, N, m0, n0);
    const int slice = SPLIT > 1 ? (int)cluster_ctarank() : 0;  // = blockIdx.x % SPLIT
    const int k_tiles = (K + BK - 1) / BK;
    const int kb = slice * k_tiles / SPLIT, n_k = (slice + 1) * k_tiles / SPLIT - kb;
    const int wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);
            mbar_init(&empty[s], RELEASES_PER_SLOT);
        }
        fence_barrier_init();
    }
    __syncthreads();
    wait_for_prior_grid();  // a staged A and Bt are written (hopper.cuh)

    if (wg == 0) {
        // Producer warpgroup: one thread issues every copy of this block's slice.
        regs_dealloc<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            for (int i = 0; i < n_k; ++i) {
                const int slot = i % STAGES;
                // The slot's previous k-tile (i - STAGES) was read by every consumer warp.
                if (i >= STAGES) mbar_wait(&empty[slot], ((i / STAGES) - 1) & 1);
                fill_stage<BM, BN>(ring + slot * STAGE_BYTES, &full[slot], &tma_a, &tma_bt, m0, n0, (kb + i) * BK);
            }
        }
    } else {
        // Consumer warpgroups 1 and 2: rows (wg - 1) * 64 .. + 63 of the tile.
        regs_alloc<CONSUMER_REGS>();
        const int c = wg - 1, t = threadIdx.x % 128;
        const unsigned a_low0 = desc_k_major_sw128_low(ring + c * 64 * BK * 2);
        const unsigned b_low0 = desc_k_major_sw128_low(ring + A_TILE_BYTES);
        float acc[ACC];
#pragma unroll
        for (int j = 0; j < ACC; ++j) acc[j] = 0.0f;  // a slice with no k-tile adds zeros
        for (int i = 0; i < n_k; ++i) {
            const int slot = i % STAGES;
            mbar_wait(&full[slot], (i / STAGES) & 1);
            const unsigned a_low = a_low0 + slot * SLOT_DESC_STEP, b_low = b_low0 + slot * SLOT_DESC_STEP;
            fence_registers(acc);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < 4; ++kk) {  // k16 slice kk: 32 bytes along the rows
                kc_wgmma(acc, desc_k_major_sw128_of(a_low + 2 * kk), desc_k_major_sw128_of(b_low + 2 * kk));
            }
            wgmma_commit();
            // Keep this k-tile's group in flight; the previous one has retired: free its slot.
            wgmma_wait<1>();
            fence_registers(acc);
            if (i > 0 && t % 32 == 0) mbar_arrive(&empty[(i - 1) % STAGES]);
        }
        wgmma_wait<0>();
        fence_registers(acc);
#if SPLIT == 1
        store_accumulators<BN>(acc, C, M, N, m0 + c * 64, n0);
#else
        // Both consumers' last wgmma have read the ring: it becomes this block's partial.
        named_barrier_sync(1, 128 * CONSUMERS);
        float4* partial = reinterpret_cast<float4*>(ring) + c * QUADS * 128 + t;
#pragma unroll
        for (int q = 0; q < QUADS; ++q) {
            partial[q * 128] = make_float4(acc[4 * q], acc[4 * q + 1], acc[4 * q + 2], acc[4 * q + 3]);
        }
#endif
    }
#if SPLIT > 1
    cluster_sync();  // every block's partial written, and visible across the cluster
    if (wg > 0) {
        // This block's band of every consumer thread's float4s: the SPLIT partials added in rank order.
        // Float4 q of consumer thread t (warp w, lane l) holds rows 16 w + l / 4 (+ 8) and columns
        // 8 q + 2 (l % 4) (+ 1) of its 64-row half (hopper.cuh: the wgmma D fragment).
        const int c = wg - 1, t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
        const float4* mine = reinterpret_cast<const float4*>(ring) + c * QUADS * 128 + t;
        const int row = m0 + c * 64 + warp * 16 + lane / 4;
        const int q_end = (slice + 1) * QUADS / SPLIT;
#pragma unroll 1
        for (int q = slice * QUADS / SPLIT; q < q_end; ++q) {
            float4 v[SPLIT];
#pragma unroll
            for (int r = 0; r < SPLIT; ++r) v[r] = ld_cluster_f4(mine + q * 128, r);
            float4 sum = v[0];
#pragma unroll
            for (int r = 1; r < SPLIT; ++r) {
                sum.x += v[r].x;
                sum.y += v[r].y;
                sum.z += v[r].z;
                sum.w += v[r].w;
            }
            const int col = n0 + 8 * q + 2 * (lane % 4);
            store_pair(C, M, N, row, col, sum.x, sum.y);
            store_pair(C, M, N, row + 8, col, sum.z, sum.w);
        }
    }
    cluster_sync();  // no block exits while a peer may still read its partial
#endif
}
