// t1 mma.sync m16n8k16 fed by ldmatrix from XOR-swizzled shared tiles, cp.async multistage ring.
//
// Changed from t0: the WMMA API's opaque fragments give way to the instructions under them, chosen
// and laid out by hand:
//   - mma.sync.m16n8k16 (HMMA.16816) on fragments loaded with ldmatrix.x4 (LDSM: four 8x8 matrices of
//     BF16 per instruction, the A fragment of a 16x16 block or the B fragments of two n8 tiles);
//   - the tiles are unpadded, K-major, 128 bytes (64 k) a row-panel, and the 16-byte chunk c of row r
//     is stored at chunk c ^ (r % 8): the 8 row addresses an 8x8 ldmatrix reads at once then fall in
//     8 different 16-byte bank groups (one shared wavefront per matrix, no conflicts), and so do the
//     8 chunks of one row that 8 consecutive threads copy in;
//   - global -> shared copies are 16-byte cp.async.cg (L2 only, no registers held) into a ring of
//     STAGES slots: STAGES-1 tiles are in flight while one is computed; one barrier per tile both
//     publishes the landed tile and frees the slot the next copy reuses (as sgemm v9);
//   - a 1D grid in groups of GROUP_M block-rows, so the blocks resident at once share A and Bt in L2;
//   - bigger tiles: 128 x 128 a block by default, 64 x 32 a warp (16 HMMA per 16 k from 4 + 2 LDSM,
//     where t0 issued 4 HMMA from 4 wmma loads).
// Edges: rows past M or N and k past K are zero-filled by cp.async's src-size 0; when K % 8 != 0 the
// rows are not 16-byte aligned, and each chunk is read element by element and stored to shared
// memory instead (a run-time branch, same layout). C is written from the accumulators with masks,
// two floats (8 bytes) per lane when N is even.
// Expected effect: several times t0 (no barrier stall per tile with nothing in flight, a third of
// the fragment loads per HMMA, no bank conflicts), but still the mma.sync class: the tensor pipe is fed
// a warp at a time from registers, so the ceiling is the measured mma.sync rate (`tensor_bf16`,
// roughly 60-65% of the 989 TFLOP/s datasheet on an H200), not cuBLAS's wgmma kernels. Expect about
// 40-60% of cuBLAS BF16 at 4096^3.
// Params: BM, BN (block tile), BK (k per slot, a multiple of 64), WM (multiple of 16), WN (multiple
//   of 16) warp tile; STAGES (ring slots), MINB (blocks per SM the registers are sized for), GROUP_M
//   (block-rows per rasterization group). Dynamic shared memory: STAGES * 2 * (BM + BN) * BK bytes.
// Shapes: any M, N, K >= 1 (cp.async or per-element copies chosen at run time by K % 8; float2 or
//   scalar C stores by N % 2).
#include "gemm_bf16/tc.cuh"

#define WARPS_N (BN / WN)
#define THREADS ((BM / WM) * WARPS_N * 32)
#define MI (WM / 16)                 // m16 tiles per warp
#define NI (WN / 8)                  // n8 tiles per warp
#define CHUNKS_ROW (BK / 8)          // 16-byte chunks per tile row
#define A_BYTES (BM * BK * 2)
#define SLOT_BYTES ((BM + BN) * BK * 2)

// Byte offset of 16-byte chunk c (8 k) of row r in a tile of ROWS rows: row-panels of 64 k
// (128 bytes), the chunk XOR-swizzled by the row's low 3 bits.
template <int ROWS>
__device__ __forceinline__ unsigned swz(int r, int c) {
    return (((c >> 3) * ROWS + r) * 8 + ((c & 7) ^ (r & 7))) * 16;
}

// This thread's share of the copies of one ROWS x BK tile of a K-major matrix with `rows` rows:
// copy i moves the 16-byte chunk c (8 k) of tile row r0 + i*ROW_STEP, where id = tid + i*THREADS,
// r0 = tid / CHUNKS_ROW, c = tid % CHUNKS_ROW (THREADS is a multiple of CHUNKS_ROW, a constraint).
// What does not change from tile to tile (rows, shared offsets, which rows exist) is worked out
// once, so a tile's copies cost a compare for k, an add and an LDGSTS each.
template <int ROWS>
struct TileCopier {
    static constexpr int COPIES = ROWS * CHUNKS_ROW / THREADS;
    static constexpr int ROW_STEP = THREADS / CHUNKS_ROW;
    const bf16_t* src;  // chunk c of tile row r0 at k0 = 0
    size_t step;        // elements between copy i and i+1 (ROW_STEP rows)
    int rows_left;      // rows of the matrix from tile row r0 on (<= 0: none)
    int c;

    __device__ __forceinline__ TileCopier(const bf16_t* base, int rows, int K, int row0) {
        const int r0 = threadIdx.x / CHUNKS_ROW;
        c = threadIdx.x % CHUNKS_ROW;
        src = base + (size_t)(row0 + r0) * K + 8 * c;
        step = (size_t)ROW_STEP * K;
        rows_left = rows - row0 - r0;
    }
    __device__ __forceinline__ unsigned dst(int i) const {
        return swz<ROWS>(threadIdx.x / CHUNKS_ROW + i * ROW_STEP, c);
    }
    // 16-byte cp.async of the tile at k0 (K % 8 == 0: a chunk is all inside or all outside).
    __device__ __forceinline__ void issue(unsigned slot, const bf16_t* base, int K, int k0) const {
        const bool k_inside = k0 + 8 * c < K;
#pragma unroll
        for (int i = 0; i < COPIES; ++i) {
            const bool inside = k_inside && i * ROW_STEP < rows_left;
            cp_async16(slot + dst(i), inside ? src + i * step + k0 : base, inside);
        }
    }
    // K % 8 != 0: rows are not 16-byte aligned, so each chunk is read element by element (zeros
    // past the edges) and stored to the same place; visible after the next barrier like a copy.
    __device__ void store(unsigned slot, int K, int k0) const {
        for (int i = 0; i < COPIES; ++i) {
            unsigned w[4] = {0, 0, 0, 0};
            if (i * ROW_STEP < rows_left) {
                const bf16_t* p = src + i * step + k0;
                for (int e = 0; e < 8; ++e)
                    if (k0 + 8 * c + e < K) w[e / 2] |= (unsigned)p[e] << (16 * (e % 2));
            }
            asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(slot + dst(i)), "r"(w[0]),
                         "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
        }
    }
};

extern "C" __global__ void __launch_bounds__(THREADS, MINB)
gemm_bf16(int M, int N, int K, const bf16_t* __restrict__ A, const bf16_t* __restrict__ Bt,
          float* __restrict__ C) {
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned base = smem_u32(smem);

    // Grouped rasterization: GROUP_M block-rows at a time, column by column inside a group.
    const int grid_m = (M + BM - 1) / BM, grid_n = (N + BN - 1) / BN;
    const int per_group = GROUP_M * grid_n, pid = blockIdx.x;
    const int first_m = (pid / per_group) * GROUP_M;
    const int group_rows = min(grid_m - first_m, GROUP_M);
    const int row0 = (first_m + (pid % per_group) % group_rows) * BM;
    const int col0 = ((pid % per_group) / group_rows) * BN;

    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    const bool vec = (K % 8) == 0;
    const int ktiles = (K + BK - 1) / BK;

    const TileCopier<BM> a_copy(A, M, K, row0);
    const TileCopier<BN> b_copy(Bt, N, K, col0);
    // Tile `t` into ring slot `slot`.
    auto copy = [&](unsigned slot, int t) {
        if (vec) {
            a_copy.issue(slot, A, K, t * BK);
            b_copy.issue(slot + A_BYTES, Bt, K, t * BK);
        } else {
            a_copy.store(slot, K, t * BK);
            b_copy.store(slot + A_BYTES, K, t * BK);
        }
    };

    float acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

    // Prologue: tiles 0 .. STAGES-2 in flight. Every stage commits a group, empty or not, so that
    // wait_group<STAGES-2> always means "the tile about to be computed has landed".
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) copy(base + s * SLOT_BYTES, s);
        cp_async_commit();
    }

    // ldmatrix row addresses: for A, lane l gives row l % 16 of the 16x16 block at k half l / 16;
    // for B, two n8 tiles: row (l / 16) * 8 + l % 8 at k half (l / 8) % 2.
    const int a_row = wm + lane % 16, a_half = lane / 16;
    const int b_row = wn + (lane / 16) * 8 + lane % 8, b_half = (lane / 8) % 2;

    for (int kt = 0; kt < ktiles; ++kt) {
        cp_async_wait<STAGES - 2>();
        __syncthreads();  // tile kt visible to all; every warp is done with tile kt-1's slot
        {
            const int next = kt + STAGES - 1;
            if (next < ktiles) copy(base + (next % STAGES) * SLOT_BYTES, next);
            cp_async_commit();
        }
        const unsigned as = base + (kt % STAGES) * SLOT_BYTES, bs = as + A_BYTES;
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk) {
            unsigned a[MI][4], b[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i)
                ldmatrix_x4(as + swz<BM>(a_row + 16 * i, 2 * kk + a_half), a[i][0], a[i][1], a[i][2], a[i][3]);
#pragma unroll
            for (int j = 0; j < NI; j += 2)
                ldmatrix_x4(bs + swz<BN>(b_row + 8 * j, 2 * kk + b_half), b[j][0], b[j][1], b[j + 1][0], b[j + 1][1]);
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j) mma_m16n8k16_bf16(acc[i][j], a[i], b[j]);
        }
    }
    cp_async_wait<0>();  // no copy may still write shared memory when the block exits

    // Epilogue: lane l holds, of each m16n8 tile, rows l/4 and l/4 + 8 at columns 2*(l%4), +1.
    const bool pairs = (N % 2) == 0;
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + wm + 16 * i + lane / 4 + 8 * h;
                const int c = col0 + wn + 8 * j + 2 * (lane % 4);
                if (r >= M) continue;
                float* p = C + (size_t)r * N + c;
                if (pairs && c + 1 < N) {
                    *reinterpret_cast<float2*>(p) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (c < N) p[0] = acc[i][j][2 * h];
                    if (c + 1 < N) p[1] = acc[i][j][2 * h + 1];
                }
            }
}
