// Minimal cluster kernels for telling which of t4's cluster operations compute-sanitizer's racecheck
// trips on (scripts/probe_cluster_sanitizer.py runs each under a tool; docs/notes/gemm_bf16-notes.md,
// "Under compute-sanitizer"). Clusters of two blocks, one warp each; thread 0 of each block does the
// one operation of its CASE, and every block writes what it saw to out[blockIdx.x]:
//   CASE 0  local:         arrive on its own mbarrier through its plain shared address, wait on it
//   CASE 1  mapa self:     arrive on its own mbarrier through mapa (rank = its own), as t4 does when
//                          a consumer releases a slot of its own block
//   CASE 2  remote arrive: arrive on the peer's mbarrier through mapa (t4's release of the peer's
//                          slot), wait on its own for the peer's arrival
//   CASE 3  remote store:  st.shared::cluster of one word into the peer's shared memory, read back
//                          its own word after the cluster barrier
//   CASE 4  TMA load:      each block copies the whole 16 x 64 BF16 matrix into its own shared memory
//                          (one box, 128-byte swizzle), as t4's A tiles in a cluster
//   CASE 5  TMA multicast: each block copies its 8-row half of the matrix into both blocks' shared
//                          memory with one multicast copy, as t4's Bt slices
// Expected out: CASE 0-2 1 (each block's wait completed), CASE 3 the peer's rank + 1, CASE 4-5 the
// sum of the matrix's 16-bit words as each block's shared memory holds them (0 + 1 + .. + 1023).
#include "gemm_bf16/hopper.cuh"

#ifndef CASE
#define CASE 0
#endif

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(32)
    probe(int* __restrict__ out, const __grid_constant__ TmaDescriptor map) {
    __shared__ __align__(1024) unsigned short tile[16 * 64];  // the swizzle's 1024-byte period
    __shared__ __align__(8) unsigned long long bar;
    __shared__ int word;
    const unsigned rank = cluster_ctarank();
    if (threadIdx.x == 0) {
        mbar_init(&bar, 1);
        word = -1;
        fence_barrier_init();
    }
    cluster_sync();  // both blocks' barriers exist before either arrives on the other's
    int seen = -1;
    if (threadIdx.x == 0) {
#if CASE == 0
        mbar_arrive(&bar);
        mbar_wait(&bar, 0);
        seen = 1;
#elif CASE == 1
        mbar_arrive_cluster(&bar, rank);
        mbar_wait(&bar, 0);
        seen = 1;
#elif CASE == 2
        mbar_arrive_cluster(&bar, rank ^ 1u);
        mbar_wait(&bar, 0);  // the peer's arrival on this block's barrier
        seen = 1;
#elif CASE == 4
        mbar_arrive_expect_tx(&bar, sizeof(tile));
        tma_load_2d(tile, &map, &bar, 0, 0);
        mbar_wait(&bar, 0);
#elif CASE == 5
        mbar_arrive_expect_tx(&bar, sizeof(tile));  // both halves land here: its own and the peer's
        tma_load_2d_multicast(tile + rank * 8 * 64, &map, &bar, 0, static_cast<int>(rank) * 8, 0x3);
        mbar_wait(&bar, 0);
#else
        asm volatile(
            "{\n.reg .b32 remote;\n"
            "mapa.shared::cluster.u32 remote, %0, %1;\n"
            "st.shared::cluster.u32 [remote], %2;\n}\n" ::"r"(smem_u32(&word)),
            "r"(rank ^ 1u), "r"(static_cast<int>(rank) + 1)
            : "memory");
#endif
    }
    cluster_sync();  // no block reads its word, or exits, before the peer's operation on it is done
#if CASE == 3
    if (threadIdx.x == 0) seen = word;
#elif CASE >= 4
    if (threadIdx.x == 0) {  // the swizzle permutes the words inside each 1024 bytes: their sum is the matrix's
        seen = 0;
        for (int i = 0; i < 16 * 64; ++i) seen += tile[i];
    }
#endif
    if (threadIdx.x == 0) out[blockIdx.x] = seen;
}
