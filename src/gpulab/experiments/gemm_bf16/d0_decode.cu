// d0 decode: C = A * Bt^T for M <= 16 rows of A (a batch of tokens against a weight matrix), as a
// stream of Bt's N x K BF16 bytes read once at the copy ceiling, on mma.sync with k permuted.
// Changed from t1 (mma.sync m16n8k16 fed by ldmatrix from shared tiles of 128+ rows of A): here A
//   has at most 16 rows and Bt is the whole cost (N*K*2 bytes, 50-940 MB at the Llama shapes,
//   against M*K*2 <= 0.9 MB of A), so nothing is staged in shared memory and no tile of C is
//   reused: each warp loads 16-byte chunks of Bt rows straight into mma fragments.
//   - Roles swapped: the mma computes C^T = Bt * A^T, Bt's rows as its A operand (m16: 16 rows of
//     Bt, the wide side) and A's rows as its B operand (n8: 8 rows of A; a second n8 tile where
//     M > 8). So M <= 8 wastes nothing of the 16-row operand, and 16 rows of Bt x 16 k are one
//     instruction (512 bytes of Bt).
//   - k permuted: a dot product adds its k terms in any order, and the mma pairs its 16 k slots
//     between the two operands slot by slot, so the same permutation on both sides changes nothing.
//     Lane l = 4 r + q of the fragment holds, for row r and r + 8, slots {2q, 2q+1, 2q+8, 2q+9}; here
//     it loads one 16-byte chunk (8 consecutive k) of row r and one of row r + 8 (LDG.128 each) and
//     feeds words 0, 1 of the chunks to one mma and words 2, 3 to the next (slot 2q+e <- k 4j+e,
//     slot 2q+8+e <- k 4j+2+e of the chunk, for mma j = 0, 1). The matching chunk of A row r (the B
//     operand, b0 = k slots 2q.., b1 = 2q+8..) is one LDG.128 too: words 2j, 2j+1. No shuffles, no
//     ldmatrix, no conversion: 2 LDG.128 of Bt per 32 k per row pair, one mma per 16 k.
//   - Chunk 4u + q of a step for lane q (u < U): each LDG.128 reads 64 contiguous bytes (two whole
//     sectors) of 8 rows, and the U loads of a step a whole 64U-byte run of every row.
//   - K split three ways, all reduced in a fixed order (the same bits on every run): a warp's k
//     range into steps of 32U k; a block's KW warps take consecutive k ranges of the same 16G rows
//     and add their partial 16G x 16 tiles through shared memory in warp order (16G*16*4 bytes a warp,
//     no global traffic); S blocks along y take consecutive k slices and, where S > 1, each writes
//     its 16G x M partial to a workspace plane and the last to arrive at the tile (a counter per tile,
//     sgemm/split_k.cuh) adds the S planes in slice order and stores C.
// Napkin math (H200: ~4.2 TB/s copy ceiling, 132 SMs at ~1.98 GHz, ~16 B per SM cycle):
//   - FLOP rate at the copy ceiling, M = 16: 2 * 16 * N * K flops per 2 N K bytes = 16 FLOP/byte,
//     67 TFLOP/s. FP32 FMA on CUDA cores: 132 SMs x 128 lanes x 2 x 1.98 GHz = 67 TFLOP/s, the whole
//     FMA pipe with nothing left for the BF16 -> FP32 conversions (one per element of Bt) or the loads
//     of A: FMA cannot keep up at M = 16. mma.sync m16n8k16 runs at 632 TFLOP/s on the H200
//     (results/h200/ceilings.csv, tensor_bf16_mma_sync), 9x what is needed, and takes BF16 as it is.
//     At M <= 8 one mma per 512 bytes of Bt: per SM ~1 mma every 32 cycles; at M = 16 two. FMA would
//     do at M = 1 (4 TFLOP/s); mma does too, and one kernel serves every M up to 16.
//   - Copy ceiling: 4.29-4.31 TB/s read + written (copy_memcpy, copy_kernel, same file); a stream
//     of reads alone may run somewhat faster or slower, the bench says which.
//   - Bytes in flight: 4.2 TB/s x ~1 us of loaded DRAM latency = 4.2 MB, ~32 KB per SM. A warp step
//     has 2 U G LDG.128 of Bt in flight per lane: 1 KB x U G a warp (4 KB at U = G = 2), DEPTH steps
//     of it while the warp waits; MINB blocks of KW warps per SM: 3 x 4 x 8 KB = 96 KB at the
//     defaults (the first card run's 2 x 8 x 4 KB = 64 KB held 87% of copy over many waves, below).
//   - A's traffic: each warp re-reads A's chunks for its k range (L2 -> SM, L1 where another warp of
//     the SM just read them): per step U LDG.128 per n8 tile against 2 U G of Bt, i.e. 1/(2G) of Bt's
//     bytes at M <= 8 (only lanes of rows < M load: 1/16 of that at M = 1) and 1/G at M > 8.
//   - The reductions: KW x 16G x 16 FP32 in shared memory per block (18 KiB at the defaults) and, for
//     S > 1, S x 16G x M FP32 written and read back per tile through L2 (S x M x N x 4 bytes in all:
//     2 MB at M = 16, N = 4096, S = 2, 6% of Bt's 33.5 MB), plus one atomic per block.
// Expected effect: the time of one pass over Bt at ~90% of the copy ceiling plus a launch: 1 x 6144 x
//   4096 (50 MB) ~13-14 us, 16 x 57344 x 8192 (940 MB) ~240 us, where t4 computes 128-row tiles of
//   which 127 (112) rows are padding and reads Bt through TMA one tile column per cluster.
// Second pass, from the first card run (H200, 2026-12-04, G 2 U 2 KW 8 MINB 2, one step in flight):
//   16 x 57344 x 8192 252 us (3.74 TB/s, 87% of copy; 1792 blocks, 6.8 waves), but 1 x 6144 x 4096
//   19.6 us (0.946x cuBLAS's 18.6) and 16 x 6144 x 4096 21.4 us (0.822x of 17.6). There the launch is
//   one partial wave, 192 blocks for 264 slots (60 SMs ran two, 72 one), and two things cost:
//   - In flight: at most 6.3 MB (192 x 8 warps x 4 KB), 75% of what the many waves held, and only
//     while a warp waited: a step's loads were issued after the previous step's mma, so each of a
//     warp's 8 steps was a whole DRAM round trip with nothing of that warp in flight during its mma.
//   - The mma at M = 16 (the 1.8 us between M = 1 and 16): 16 a step a warp (two n8 tiles), and the
//     warps of an SM, started together and fed by the same round trips, reach them together: 16
//     warps x 16 mma at ~0.59 mma a cycle an SM (the measured 632 TFLOP/s) is ~430 cycles (0.22 us)
//     a step with the SM's loads drained, ~1.7 us over 8 steps. Not the reduction (S = 1 there: 18
//     KiB of shared memory a block) and not the launch (the same at M = 1).
//   So DEPTH = 2: the next step's loads are issued before this step's mma (two named register sets,
//   ping-pong), two steps in flight while a warp waits and one during its mma, at twice the chunk
//   registers (167 at G 2 U 2 under NVRTC 13.0, the H200's); the defaults KW 4 MINB 3 fit 12 such
//   warps an SM (396 slots), and the host's S = 2 at N = 6144 gives 384 blocks, every SM in the one
//   wave: 12 x 8 KB = 96 KB in flight per SM, 12.6 MB in all, held through the mma. Cost: S = 2's
//   planes (2 x 16 x 6144 x 4 B = 0.8 MB through L2, one ticket a block) and the last tile's fixup
//   (~1 us of tail). The mma run in the same order: DEPTH 1 and 2 give the same bits.
//   Expected: 16 x 6144 x 4096 and 1 x 6144 x 4096 at ~16-18 us (>= 0.95x cuBLAS), 16 x 57344 x 8192
//   at >= 90% of copy. Measured (H200, 2026-12-04, notebook/device/device_call2.sh): slower, 24.6 us
//   at 16 x 6144 x 4096 and 22.0 at 1 x 6144 x 4096 against DEPTH 1 at KW 8 MINB 2's 21.4 and 19.3,
//   and S = 1 23.2: the defaults stay KW 8, MINB 2, DEPTH 1; DEPTH 2 stays a param. Why the deeper
//   pipeline lost is not found: the guess above (nothing in flight during the mma) was not the limit.
// Tuned (H200, 2026-12-05, notebook/device/device_call22.sh): at the eight decode layers of 33-134 MB
//   (1 and 16 tokens) G = 1, U = 4 was the fastest config at every one, never timed before. U = 4
//   (256 contiguous bytes a row a step: twice the bytes in flight a lane) took 7-16% off U = 2's
//   time at either G, G = 1 (16 rows a warp, twice the blocks) 1-9% more. 1 x 4096 x 4096 ran 12.5 us
//   (16.5 at the defaults; cuBLAS BF16 14.3), 16 x 8192 x 8192 37.3 (45.5; 34.9).
// Params: G (row groups of 16 per warp: 16G rows of Bt per block; A's chunks are reused G times from
//   registers), U (chunks of 8 k per lane per step: 2 U G LDG.128 of Bt in flight per lane), KW (warps
//   per block, each its own k range), S (k slices across blocks, grid.y; 0: chosen on the host,
//   gemm_bf16.decode.auto_slices: MINB x SMs blocks where N alone gives fewer), MINB (blocks per SM
//   the registers are sized for), DEPTH (steps in flight per warp: 1 loads then multiplies, 2 loads
//   the next step first). Dynamic shared memory KW x 16 x (16G + 4) x 4 bytes.
// Shapes: any M, N, K >= 1, made for M <= 16: each further 16 rows of A are a block row of grid.z,
//   one more pass over Bt (M = 1024: 64 passes; the registry's only limit is grid.z's 65535). K % 8
//   == 0: 16-byte loads (rows 16-byte aligned); any other K: the same chunks element by element
//   (LDG.U16, guarded), correct and slow, no staging copy (which would double the bytes). Rows of Bt
//   past N and of A past M, and k past K, load zeros; C's stores are masked.
// Arguments: the experiment's, then the workspace (gridDim.z x S x gridDim.x x 16 x 16G FP32) and a
//   counter per tile (gridDim.z x gridDim.x, zeroed once by the host, left zero by the kernel); with
//   S = 1 neither is touched.
#include "gemm_bf16/tc.cuh"
#include "sgemm/split_k.cuh"  // last_to_arrive: the ticket of the ordered fixup

#define THREADS (32 * KW)
#define ROWS (16 * G)             // rows of Bt (columns of C) per block
#define STEP_K (32 * U)           // k per warp step: 4 lanes x U chunks of 8
#define RED_ROWS 16               // rows of A a partial holds (M <= 16)
#define RED_PITCH (ROWS + 4)      // floats per partial row: 16G + 4 puts the 4 q-rows of a store on 4 bank octets

#if G != 1 && G != 2 && G != 4
#error "G must be 1, 2 or 4"
#endif
#if U != 1 && U != 2 && U != 4
#error "U must be 1, 2 or 4"
#endif
#if DEPTH != 1 && DEPTH != 2
#error "DEPTH must be 1 or 2 steps in flight"
#endif

// Bt is read once: streamed past L1 (no_allocate), with L2 asked to fetch 256-byte runs (the next
// step's 64U bytes of the row come with the first).
__device__ __forceinline__ uint4 ldg_stream(const uint4* p) {
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

// Chunk c (k = 8c .. 8c + 7) of a row: 16 bytes, or zeros where the row or the chunk lies outside.
// VEC: K % 8 == 0, the row 16-byte aligned, a chunk wholly inside K or wholly past it. Otherwise
// element by element, each guarded by k < K (rows of any pitch). STREAM: Bt (read once), else A
// (read by every block column: kept in L1 and L2).
template <bool VEC, bool STREAM>
__device__ __forceinline__ uint4 load_chunk(const bf16_t* row, bool row_ok, int c, int K) {
    uint4 v = make_uint4(0u, 0u, 0u, 0u);
    if (VEC) {
        if (row_ok && 8 * c < K) {
            const uint4* p = reinterpret_cast<const uint4*>(row) + c;
            v = STREAM ? ldg_stream(p) : __ldg(p);
        }
    } else if (row_ok) {
        unsigned w[4] = {0u, 0u, 0u, 0u};
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            const int k = 8 * c + e;
            const unsigned x = k < K ? (unsigned)__ldg(row + k) : 0u;
            w[e / 2] |= x << (16 * (e % 2));  // the lower k in the low half, as a 16-byte load has it
        }
        v = make_uint4(w[0], w[1], w[2], w[3]);
    }
    return v;
}

// One step's chunks of one lane: 2 U G of Bt (rows r, r + 8 of each group), U NM of A.
template <int NM>
struct StepChunks {
    uint4 b[G][2][U], a[NM][U];
};

// Every load of a step (2 U G + U NM LDG.128 in flight), none where `live` is false (a step past the
// warp's range, loaded ahead by DEPTH = 2).
template <int NM, bool VEC>
__device__ __forceinline__ void load_step(StepChunks<NM>& x, int step, bool live, int K,
                                          const bf16_t* const (&a_row)[NM], const bool (&a_ok)[NM],
                                          const bf16_t* const (&b_row)[G][2], const bool (&b_ok)[G][2]) {
    const int q = threadIdx.x % 4;
#pragma unroll
    for (int u = 0; u < U; ++u) {
        const int c = step * 4 * U + 4 * u + q;  // chunk index along the row
#pragma unroll
        for (int g = 0; g < G; ++g)
#pragma unroll
            for (int h = 0; h < 2; ++h) x.b[g][h][u] = load_chunk<VEC, true>(b_row[g][h], live && b_ok[g][h], c, K);
#pragma unroll
        for (int t = 0; t < NM; ++t) x.a[t][u] = load_chunk<VEC, false>(a_row[t], live && a_ok[t], c, K);
    }
}

// A step's mma: 2 U G NM of them, words 2j, 2j + 1 of the chunks (k 4j .. 4j + 3 of each) to mma j.
template <int NM>
__device__ __forceinline__ void mma_step(float (&acc)[G][NM][4], const StepChunks<NM>& x) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
#pragma unroll
            for (int g = 0; g < G; ++g) {
                const unsigned* lo = reinterpret_cast<const unsigned*>(&x.b[g][0][u]);
                const unsigned* hi = reinterpret_cast<const unsigned*>(&x.b[g][1][u]);
                const unsigned fa[4] = {lo[2 * j], hi[2 * j], lo[2 * j + 1], hi[2 * j + 1]};
#pragma unroll
                for (int t = 0; t < NM; ++t) {
                    const unsigned* y = reinterpret_cast<const unsigned*>(&x.a[t][u]);
                    const unsigned fb[2] = {y[2 * j], y[2 * j + 1]};
                    mma_m16n8k16_bf16(acc[g][t], fa, fb);
                }
            }
        }
    }
}

// One warp's partial C^T tile over steps [sb, se) of its rows n0 .. n0 + 16G - 1, stored into its
// shared slice red_w[m][n] (m < 8 NM, n < 16G). NM: n8 tiles of A rows (1: M <= 8, 2: M <= 16).
template <int NM, bool VEC>
__device__ __forceinline__ void warp_partial(int M, int N, int K, const bf16_t* __restrict__ A,
                                             const bf16_t* __restrict__ Bt, int n0, int sb, int se, float* red_w) {
    const int lane = threadIdx.x % 32, r = lane / 4, q = lane % 4;
    // The rows this lane reads: Bt rows n0 + 16g + r (+8), A rows 8t + r; a row past the matrix
    // points at its last row and loads nothing.
    const bf16_t* b_row[G][2];
    bool b_ok[G][2];
#pragma unroll
    for (int g = 0; g < G; ++g) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int n = n0 + 16 * g + r + 8 * h;
            b_ok[g][h] = n < N;
            b_row[g][h] = Bt + (long long)min(n, N - 1) * K;
        }
    }
    const bf16_t* a_row[NM];
    bool a_ok[NM];
#pragma unroll
    for (int t = 0; t < NM; ++t) {
        a_ok[t] = 8 * t + r < M;
        a_row[t] = A + (long long)min(8 * t + r, M - 1) * K;
    }

    float acc[G][NM][4];
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
        for (int t = 0; t < NM; ++t)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[g][t][i] = 0.0f;

    if (DEPTH == 1) {
        // One step at a time: its loads, then its mma.
#pragma unroll 1
        for (int step = sb; step < se; ++step) {
            StepChunks<NM> x;
            load_step<NM, VEC>(x, step, true, K, a_row, a_ok, b_row, b_ok);
            mma_step<NM>(acc, x);
        }
    } else {
        // Two steps in flight: step + 1's loads are issued before step's mma, so the mma (and the
        // wait for step's data) overlap the next loads. Ping-pong between two named sets (a register
        // array indexed by a loop variable would go to local memory); a load past se is predicated
        // off. The mma run in the same step order as DEPTH = 1: the same bits.
        StepChunks<NM> x0, x1;
        load_step<NM, VEC>(x0, sb, sb < se, K, a_row, a_ok, b_row, b_ok);
#pragma unroll 1
        for (int step = sb; step < se; step += 2) {
            load_step<NM, VEC>(x1, step + 1, step + 1 < se, K, a_row, a_ok, b_row, b_ok);
            mma_step<NM>(acc, x0);
            if (step + 1 >= se) break;
            load_step<NM, VEC>(x0, step + 2, step + 2 < se, K, a_row, a_ok, b_row, b_ok);
            mma_step<NM>(acc, x1);
        }
    }

    // The fragment of C^T (m16n8, FP32): c0, c1 at Bt row r, A rows 2q, 2q + 1; c2, c3 at row r + 8.
#pragma unroll
    for (int g = 0; g < G; ++g)
#pragma unroll
        for (int t = 0; t < NM; ++t)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const int m = 8 * t + 2 * q + (i % 2), n = 16 * g + r + 8 * (i / 2);
                red_w[m * RED_PITCH + n] = acc[g][t][i];
            }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
gemm_bf16(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C, float* __restrict__ work, unsigned* __restrict__ counters) {
    extern __shared__ float red[];  // [KW][RED_ROWS][RED_PITCH]: each warp's partial tile
    const int warp = threadIdx.x / 32;
    const int n0 = blockIdx.x * ROWS;
    // S (the param) is the host's to choose (0: auto); the launch's is gridDim.y.
    const int n_slices = gridDim.y, s = blockIdx.y;
    // Rows 16z .. 16z + 15 of A and C (grid.z): a decode batch is one group; each 16 rows more of a
    // larger M are one more pass over Bt (correct at any M, made for M <= 16).
    const int m0 = blockIdx.z * RED_ROWS, rows_a = min(M - m0, RED_ROWS);
    A += (long long)m0 * K;
    C += (long long)m0 * N;
    const long long tile = (long long)blockIdx.z * gridDim.x + blockIdx.x;  // this block's tile of C

    // Warp-slice w of the S x KW takes steps [w T / (S KW), (w + 1) T / (S KW)): even to one step.
    const long long steps = (K + STEP_K - 1) / STEP_K, slices = (long long)n_slices * KW, w = (long long)s * KW + warp;
    const int sb = (int)(w * steps / slices), se = (int)((w + 1) * steps / slices);
    float* red_w = red + warp * RED_ROWS * RED_PITCH;
    if (K % 8 == 0) {
        if (rows_a > 8) warp_partial<2, true>(rows_a, N, K, A, Bt, n0, sb, se, red_w);
        else warp_partial<1, true>(rows_a, N, K, A, Bt, n0, sb, se, red_w);
    } else {
        if (rows_a > 8) warp_partial<2, false>(rows_a, N, K, A, Bt, n0, sb, se, red_w);
        else warp_partial<1, false>(rows_a, N, K, A, Bt, n0, sb, se, red_w);
    }
    __syncthreads();

    // The block's tile: element i = m * ROWS + n (m < rows_a), its KW warps' partials added in warp
    // order; consecutive threads take consecutive columns of C (coalesced stores, conflict-free reads).
    // Slice s's plane of the tile in the workspace: [z][s][x], RED_ROWS x ROWS floats each.
    const int elements = rows_a * ROWS;
    const long long plane_floats = RED_ROWS * ROWS, slice_stride = (long long)gridDim.x * plane_floats;
    float* first = work + ((long long)blockIdx.z * n_slices * gridDim.x + blockIdx.x) * plane_floats;
#pragma unroll 1
    for (int i = threadIdx.x; i < elements; i += THREADS) {
        const int m = i / ROWS, n = i % ROWS;
        float sum = red[m * RED_PITCH + n];
#pragma unroll
        for (int v = 1; v < KW; ++v) sum += red[(v * RED_ROWS + m) * RED_PITCH + n];
        if (n_slices == 1) {
            if (n0 + n < N) C[(long long)m * N + n0 + n] = sum;
        } else {
            __stcg(first + s * slice_stride + i, sum);  // L2: the last block of the tile runs on another SM
        }
    }
    if (n_slices == 1) return;

    // The ordered fixup: the last of the tile's S blocks adds the S planes in slice order.
    if (!last_to_arrive(counters + tile, n_slices)) return;
#pragma unroll 1
    for (int i = threadIdx.x; i < elements; i += THREADS) {
        const int m = i / ROWS, n = i % ROWS;
        float sum = __ldcg(first + i);
#pragma unroll 1
        for (int p = 1; p < n_slices; ++p) sum += __ldcg(first + p * slice_stride + i);
        if (n0 + n < N) C[(long long)m * N + n0 + n] = sum;
    }
}
