// Hopper (sm_90) building blocks for the gemm_bf16 rungs t2 and up, as inline PTX: the tensor-map
// parameter, mbarriers, TMA bulk tensor copies, and wgmma on shared-memory operands written with the
// 128-byte swizzle. Each wraps one PTX instruction (PTX ISA 8.0+, "Asynchronous warpgroup level
// matrix multiply-accumulate", "Tensor copy", "mbarrier"); the kernels say why they call them.
#pragma once
#include "gemm_bf16/tc.cuh"  // bf16_t, smem_u32

// The CUtensorMap the host encodes (gpulab.gpu.tma), passed by value: 128 opaque bytes, 64-byte
// aligned. NVRTC has no cuda.h, so its layout is restated here.
struct alignas(64) TmaDescriptor {
    unsigned long long opaque[16];
};

// -- mbarrier: the TMA copies of one stage complete on it (a transaction count of bytes) ----------
__device__ __forceinline__ void mbar_init(unsigned long long* bar, unsigned arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(arrivals) : "memory");
}

// Makes the initialized barriers visible to the async proxy (the TMA unit) before any copy uses them.
__device__ __forceinline__ void fence_barrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// One arrival that also tells the barrier how many bytes the copies of this phase will write.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}

// Spin until the barrier's phase with this parity has completed (arrivals done, all bytes landed).
__device__ __forceinline__ void mbar_wait(unsigned long long* bar, unsigned parity) {
    unsigned done;
    do {
        asm volatile(
            "{\n.reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(smem_u32(bar)), "r"(parity)
            : "memory");
    } while (!done);
}

// -- programmatic dependent launch -------------------------------------------------------------
// Waits until the grid launched before this one in the stream has finished and its writes are
// visible. Launched as a programmatic dependent (gpulab.gpu.launch, behind the staging copy of
// pad_k.cu) a kernel may start while that grid is still running: its launch and its setup (barriers,
// the cluster's sync) overlap the copy's tail, and it reads A and Bt only after this. After an
// ordinary launch it returns at once. Every rung that staging.py stages for calls it before any
// global access (tests/test_staging.py checks that).
__device__ __forceinline__ void wait_for_prior_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// -- TMA: one box of a 2D tensor map into shared memory, completing on `bar` ------------------
// c0 is the inner (contiguous) coordinate, c1 the row; a box past the tensor's edge is zero filled.
__device__ __forceinline__ void tma_load_2d(void* dst, const TmaDescriptor* map, unsigned long long* bar, int c0,
                                            int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];"
        ::"r"(smem_u32(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1)
        : "memory");
}

// -- wgmma --------------------------------------------------------------------------------------
// The operands' type, chosen at compile time for every wgmma below: BF16 by default; a kernel that
// defines WGMMA_TF32 before including this header gets TF32 (sgemm's v14 runs t4 that way). Either
// way one instruction reads 32 bytes of each 128-byte row (16 BF16 or 8 TF32), so the descriptors,
// the k loop and the ring are the same; TF32 takes no transpose immediates (K-major only).
#ifdef WGMMA_TF32
#define WGMMA_K_TYPES "k8.f32.tf32.tf32"
#define WGMMA_IMMEDIATES "1, 1"
#else
#define WGMMA_K_TYPES "k16.f32.bf16.bf16"
#define WGMMA_IMMEDIATES "1, 1, 0, 0"
#endif
// Shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format") for a K-major tile written by
// TMA with the 128-byte swizzle: rows of 64 BF16 (128 bytes), 8-row groups of 1024 bytes.
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset >> 4: unused for a swizzled K-major operand whose
//               k16 slice (32 bytes) lies inside one 128-byte row; 1 by convention
//   bits 32-45  stride-dimension byte offset >> 4: 1024 bytes from one 8-row group to the next
//   bits 49-51  base offset: 0, the tile starts on a 1024-byte boundary (the swizzle's period)
//   bits 62-63  swizzle mode: 1 = 128-byte
// Stepping k by 16 within the 64-wide row adds 32 bytes to the start address: the hardware applies
// the XOR swizzle to the address bits, so the tile must be 1024-byte aligned.
// The descriptor is built from two 32-bit words: the low one holds the start address >> 4 and the
// leading offset, the high one the stride offset and the swizzle mode, the same for every such tile.
// A tile 16 x d bytes further has a low word d larger: shared addresses stay below 256 KiB, so the
// start field never carries into the next. (t4 builds each k-tile's descriptors by one addition
// each from the ring's first slot: 20 fewer instructions per k-tile and warp than from addresses.)
__device__ __forceinline__ unsigned desc_k_major_sw128_low(const void* tile) {
    return ((smem_u32(tile) & 0x3FFFF) >> 4) | (1u << 16);
}
__device__ __forceinline__ unsigned long long desc_k_major_sw128_of(unsigned low) {
    return ((unsigned long long)((1024u >> 4) | (1u << 30)) << 32) | low;
}
__device__ __forceinline__ unsigned long long desc_k_major_sw128(const void* tile) {
    return desc_k_major_sw128_of(desc_k_major_sw128_low(tile));
}

// Orders this warpgroup's register accesses before the wgmma that follow (needed before the first
// wgmma touching accumulators that ordinary code wrote).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int PENDING>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(PENDING) : "memory");
}

// Keeps the compiler from moving reads or writes of accumulator registers across a wgmma fence or
// wait: to it the asynchronous wgmma finished when its asm statement did.
template <int R>
__device__ __forceinline__ void fence_registers(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// -- tile order and epilogue, shared by the rungs ------------------------------------------------
// Grouped rasterization of a 1D grid: GROUP_M block-rows at a time, column-major inside, so the
// blocks resident at once share a few block-rows of A and block-columns of Bt in L2.
template <int kBM, int kBN, int kGroupM>
__device__ __forceinline__ void grouped_tile(int M, int N, int& m0, int& n0) {
    const int grid_m = (M + kBM - 1) / kBM, grid_n = (N + kBN - 1) / kBN;
    const int per_group = kGroupM * grid_n;
    const int first_m = (blockIdx.x / per_group) * kGroupM;
    const int group_rows = min(grid_m - first_m, kGroupM);
    m0 = (first_m + (blockIdx.x % per_group) % group_rows) * kBM;
    n0 = ((blockIdx.x % per_group) / group_rows) * kBN;
}

// The accumulator fragment of m64nNk16 with FP32 D (PTX ISA, "Register Fragments", wgmma D): thread
// t of the warpgroup (warp w = t / 32, lane l = t % 32) holds, for i in [0, N/2):
//   row = 16 w + l / 4 + 8 ((i / 2) % 2),   col = 8 (i / 4) + 2 (l % 4) + (i % 2)
// The epilogues store through this mapping (notebook/device/device_wgmma.sh's exact test names a wrong row
// or column pattern in its terms).
// Stores a warpgroup's 64 x BN accumulator tile, rows m0.. and columns n0.. of C, through that
// mapping, masked at the edges; two adjacent columns as one 8-byte store where N is even (then
// col, col + 1 < N together and the address is 8-byte aligned). kFirst: the first 8-column group
// stored (t4's BN = 200 stores only its last 8 columns this way, the rest through TMA).
template <int kBN, int kFirst = 0>
__device__ __forceinline__ void store_accumulators(const float (&acc)[kBN / 2], float* C, int M, int N, int m0,
                                                   int n0) {
    const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
    const int row0 = m0 + warp * 16 + lane / 4;
    const bool pairs = (N % 2) == 0;
#pragma unroll
    for (int j = kFirst; j < kBN / 8; ++j) {
        const int col = n0 + j * 8 + (lane % 4) * 2;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = row0 + half * 8;
            if (row >= M || col >= N) continue;
            float* dst = C + (long long)row * N + col;
            const float v0 = acc[4 * j + 2 * half], v1 = acc[4 * j + 2 * half + 1];
            if (pairs) {
                *reinterpret_cast<float2*>(dst) = make_float2(v0, v1);
            } else {
                dst[0] = v0;
                if (col + 1 < N) dst[1] = v1;
            }
        }
    }
}
#include "gemm_bf16/wgmma_shapes.cuh"  // wgmma_m64nNk16 for N = 64, 128, 192, 200, 256

// -- warp specialization (t3) ---------------------------------------------------------------------
// A plain arrival (the consumers' "this slot is free again"), and a wait that backs off.
__device__ __forceinline__ void mbar_arrive(unsigned long long* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_u32(bar)) : "memory");
}

// Hand registers between warpgroups (sm_90a): every warp of the warpgroup executes it; it takes
// effect only under a register cap at entry (__launch_bounds__(threads, 1)).
template <int REGS>
__device__ __forceinline__ void regs_dealloc() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(REGS));
}
template <int REGS>
__device__ __forceinline__ void regs_alloc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(REGS));
}

// m64nBNk16 for the tile's BN, chosen at compile time.
// scale_d = 0: D = A x B, the accumulators' old values ignored (a tile's first k16 slice, instead of
// zeroing 128 registers first).
template <int kBN>
__device__ __forceinline__ void wgmma_m64k16(float (&d)[kBN / 2], unsigned long long desc_a, unsigned long long desc_b,
                                             unsigned scale_d = 1) {
    static_assert(kBN == 64 || kBN == 128 || kBN == 192 || kBN == 200 || kBN == 256,
                  "BN must be 64, 128, 192, 200 or 256");
    if constexpr (kBN == 64) wgmma_m64n64k16(d, desc_a, desc_b, scale_d);
    else if constexpr (kBN == 128) wgmma_m64n128k16(d, desc_a, desc_b, scale_d);
    else if constexpr (kBN == 192) wgmma_m64n192k16(d, desc_a, desc_b, scale_d);
    else if constexpr (kBN == 200) wgmma_m64n200k16(d, desc_a, desc_b, scale_d);
    else wgmma_m64n256k16(d, desc_a, desc_b, scale_d);
}

// One 64-deep k-tile of a warpgroup's 64 x BN product, from its 64 rows of the A tile and the BN rows
// of the Bt tile (both 128-byte swizzled, 1024-byte aligned): 4 wgmma of k16, each 32 bytes further
// along the rows, then waited for, so the caller may release the slot.
template <int kBN>
__device__ __forceinline__ void mma_k_tile(float (&acc)[kBN / 2], const unsigned char* a_tile,
                                           const unsigned char* b_tile) {
    fence_registers(acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        wgmma_m64k16<kBN>(acc, desc_k_major_sw128(a_tile + kk * 32), desc_k_major_sw128(b_tile + kk * 32));
    }
    wgmma_commit();
    wgmma_wait<0>();
    fence_registers(acc);
}

// Generic-proxy writes (st.shared) that the async proxy (wgmma, TMA) reads next: the writing threads
// fence before they signal the readers (PTX ISA, "Proxies"). t4's epilogue and the wgmma ceiling use it.
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// -- one ring slot's fill ---------------------------------------------------------------------------
// Fills one ring slot (the A tile, then the Bt tile after it) with k-tile k0: the calling thread alone
// arrives on `full` expecting the whole stage's bytes (out-of-bounds parts of a box are written as
// zeros and counted too) and issues the two copies. Every K reaches here through a tensor map: where
// K is not a multiple of 8 the host stages A and Bt with padded rows first (gemm_bf16/staging.py).
template <int kBM, int kBN>
__device__ __forceinline__ void fill_stage(unsigned char* slot, unsigned long long* full, const TmaDescriptor* map_a,
                                           const TmaDescriptor* map_bt, int m0, int n0, int k0) {
    mbar_arrive_expect_tx(full, (kBM + kBN) * 64 * 2);
    tma_load_2d(slot, map_a, full, k0, m0);
    tma_load_2d(slot + kBM * 64 * 2, map_bt, full, k0, n0);
}

// -- thread-block clusters (t4) ---------------------------------------------------------------------
// This block's rank in its cluster (0 .. cluster size - 1).
__device__ __forceinline__ unsigned cluster_ctarank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

// Every thread of every block of the cluster arrives, then waits for all the others: orders the
// barrier initialization before any peer's copy or arrival, and keeps a block alive until its peers
// no longer write into its shared memory or arrive on its barriers.
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// One arrival on the barrier at the same shared-memory offset in block `cta` of the cluster (mapa
// turns this block's address into that block's shared::cluster address; cta may be this block).
__device__ __forceinline__ void mbar_arrive_cluster(unsigned long long* bar, unsigned cta) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(smem_u32(bar)),
        "r"(cta)
        : "memory");
}

// As tma_load_2d, but the box lands at the same offset in the shared memory of every block in
// cta_mask (bit i: rank i), and completes on the barrier at `bar`'s offset in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const TmaDescriptor* map, unsigned long long* bar,
                                                      int c0, int c1, unsigned short cta_mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;"
        ::"r"(smem_u32(dst)), "l"(reinterpret_cast<unsigned long long>(map)), "r"(smem_u32(bar)), "r"(c0), "r"(c1),
        "h"(cta_mask)
        : "memory");
}

// -- TMA store of an output tile (t4's epilogue) ---------------------------------------------------
// One box of shared memory (laid out as the map's swizzle says) to the 2D tensor at (c0 = column,
// c1 = row); the parts of the box past the tensor's edge are not written. Issued by one thread after
// the writing threads' fence_proxy_async_shared and a barrier; tracked as a bulk async-group.
__device__ __forceinline__ void tma_store_2d(const TmaDescriptor* map, const void* src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(smem_u32(src)), "r"(c0), "r"(c1)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }
// Until at most N of this thread's bulk groups still read their shared-memory source.
template <int N>
__device__ __forceinline__ void bulk_wait_group_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}
// Until at most N of this thread's bulk groups are incomplete (their global writes done).
template <int N>
__device__ __forceinline__ void bulk_wait_group() {
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

// A barrier among `count` threads (a warpgroup: 128) on hardware barrier `id` (0 is __syncthreads').
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// -- flags between blocks of a persistent grid (t4's stream-K fixup) -------------------------------
// The writer: every thread of the group stored its part and passed a barrier with the calling thread
// (bar.sync orders them at CTA scope); this release at GPU scope then publishes all of it (release is
// cumulative) with the flag, as CUTLASS's GenericBarrier does.
__device__ __forceinline__ void flag_release(unsigned* flag) {
    asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(flag) : "memory");
}
// The reader: one thread spins with acquire loads until the flag is set, then clears it (no other
// block touches it again in this launch, so the next launch finds it zero: no memset per launch);
// a barrier after this hands the acquired data on to the rest of its group. Spinning is safe only
// where the writer is resident at the same time (a persistent grid: one block per SM).
__device__ __forceinline__ void flag_acquire_and_clear(unsigned* flag) {
    unsigned v;
    do {
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
    } while (v == 0);
    asm volatile("st.relaxed.gpu.global.u32 [%0], 0;" ::"l"(flag) : "memory");
}
