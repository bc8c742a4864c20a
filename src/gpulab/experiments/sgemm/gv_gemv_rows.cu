// gv GEMV-class product for a few rows (M <= BM, M = 1 above all): stream B once, split K across blocks.
//
// Changed from sk (sliced-K small tiles), which stages B through shared memory one k tile at a time
// and reaches ~50% of the copy bandwidth at 1 x 8192 x 8192: here B never touches shared memory.
// Each thread owns 4 consecutive columns of C (a float4 of every row of B it reads: a warp reads
// 512 contiguous bytes per row of B), the block's KT thread rows walk k in steps of KT, each thread
// with U float4 loads of B in flight before it uses any (the loads a memory-bound kernel needs to
// cover DRAM latency: at U = 4 and 256 threads x 4 blocks per SM, 64 KiB per SM in flight). The
// BM rows of A are read as broadcast scalars (one request per warp, L1 hits after the first). The
// KT partial sums of a column are added in shared memory in thread-row order; K is also cut into
// S slices by blockIdx.y (so that a 1 x 8192 product has 32 x S blocks, not 32): each slice writes
// its BM x BN partial to a workspace, and the block that arrives last at the tile (an atomic counter
// per tile, which that block resets to zero for the next launch) adds the S partials in slice order
// and stores C. Every sum is taken in a fixed order: the result has the same bits on every run.
// Expected effect: bound by reading B (4*K*N bytes; 268 MB at 1 x 8192 x 8192): >= 80% of the copy
// ceiling (~3.4-3.9 TB/s of 4.3 measured, ~70-80 us), about 2x sk's best (1,050 GFLOP/s) and near
// cuBLAS (2,007 GFLOP/s, 93% of copy). The workspace costs 2*4*S*BM*N bytes (0.5 MB at S = 16).
// Params: BM (rows of C per block, 1-4: each B float4 serves BM rows), CT (threads along N: the
//   block is BN = 4*CT columns wide), KT (thread rows along k), U (k rows per thread per step, all
//   loads issued first), S (k slices across blocks, grid.y), MINB (blocks per SM the registers are
//   sized for). Threads = CT*KT. Shared memory (static): KT*BM*BN floats for the partial sums.
//   Extra arguments: the workspace (S*M*N floats) and a counter per tile (zero before the first launch).
// Shapes: any M, N, K >= 1. float4 loads of B when N % 4 == 0 and B is 16-byte aligned, else four
//   scalar loads CT columns apart (still coalesced); columns past N and rows past M are not stored.
//   Meant for M <= 4: every block-row of M re-reads the whole of B.
#include "common.cuh"
#include "sgemm/split_k.cuh"

constexpr int BN = 4 * CT;
constexpr int THREADS = CT * KT;

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K, const float* __restrict__ A,
                                                            const float* __restrict__ B, float* __restrict__ C,
                                                            float* __restrict__ work, unsigned* __restrict__ counters) {
    __shared__ float part[KT * BM * BN];
    const int tn = threadIdx.x % CT, tk = threadIdx.x / CT;
    const int col0 = blockIdx.x * BN, row0 = blockIdx.z * BM;
    // Slice z of K: whole multiples of KT*U rows each (the last one takes what is left).
    const int step = KT * U;
    const int per_slice = ceil_div(ceil_div(K, S), step) * step;
    const int kb = blockIdx.y * per_slice, ke = min(K, kb + per_slice);
    const bool vec = (N % 4 == 0) && (reinterpret_cast<size_t>(B) % 16 == 0);
    // The thread's 4 columns: consecutive on the float4 path, CT apart on the scalar one.
    const int cfirst = vec ? col0 + 4 * tn : col0 + tn, cstep = vec ? 1 : CT;

    float acc[BM][4];
#pragma unroll
    for (int m = 0; m < BM; ++m)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[m][j] = 0.0f;
    const float* arow[BM];
#pragma unroll
    for (int m = 0; m < BM; ++m) arow[m] = A + (size_t)min(row0 + m, M - 1) * K;  // rows past M: never stored

    int k = kb + tk;
    if (vec && cfirst < N) {
        const float* bcol = B + cfirst;
        for (; k + (U - 1) * KT < ke; k += step) {
            float4 b[U];
#pragma unroll
            for (int u = 0; u < U; ++u) b[u] = __ldcs(reinterpret_cast<const float4*>(bcol + (size_t)(k + u * KT) * N));
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int m = 0; m < BM; ++m) {
                    const float a = __ldg(arow[m] + k + u * KT);
                    acc[m][0] = fmaf(a, b[u].x, acc[m][0]);
                    acc[m][1] = fmaf(a, b[u].y, acc[m][1]);
                    acc[m][2] = fmaf(a, b[u].z, acc[m][2]);
                    acc[m][3] = fmaf(a, b[u].w, acc[m][3]);
                }
        }
        // Not unrolled: with CT = 16 the two thread rows of a warp may run different trip counts, and
        // an unrolled loop runs the leftover trips first, apart (the loads executed would depend on
        // the unroll factor); rolled, one warp instruction per trip. Fewer than U trips: no cost.
#pragma unroll 1
        for (; k < ke; k += KT) {
            const float4 b = __ldcs(reinterpret_cast<const float4*>(bcol + (size_t)k * N));
#pragma unroll
            for (int m = 0; m < BM; ++m) {
                const float a = __ldg(arow[m] + k);
                acc[m][0] = fmaf(a, b.x, acc[m][0]);
                acc[m][1] = fmaf(a, b.y, acc[m][1]);
                acc[m][2] = fmaf(a, b.z, acc[m][2]);
                acc[m][3] = fmaf(a, b.w, acc[m][3]);
            }
        }
    } else if (!vec) {
        for (; k < ke; k += KT) {
            float b[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = cfirst + j * cstep;
                b[j] = c < N ? __ldcs(B + (size_t)k * N + c) : 0.0f;
            }
#pragma unroll
            for (int m = 0; m < BM; ++m) {
                const float a = __ldg(arow[m] + k);
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[m][j] = fmaf(a, b[j], acc[m][j]);
            }
        }
    }

    // The KT thread rows' partial sums, added in thread-row order.
#pragma unroll
    for (int m = 0; m < BM; ++m)
#pragma unroll
        for (int j = 0; j < 4; ++j) part[(tk * BM + m) * BN + (cfirst - col0) + j * cstep] = acc[m][j];
    __syncthreads();
    float sums[ceil_div(BM * BN, THREADS)];
#pragma unroll
    for (int i = 0; i < ceil_div(BM * BN, THREADS); ++i) {
        const int o = threadIdx.x + i * THREADS;
        float s = 0.0f;
        if (o < BM * BN) {
            s = part[o];
#pragma unroll
            for (int t = 1; t < KT; ++t) s += part[t * BM * BN + o];
        }
        sums[i] = s;
    }
    const auto store = [&](float* dst, int i) {  // element o of the tile, inside C's bounds
        const int o = threadIdx.x + i * THREADS, r = row0 + o / BN, c = col0 + o % BN;
        if (o < BM * BN && r < M && c < N) dst[(size_t)r * N + c] = sums[i];
    };
    if (S == 1) {
#pragma unroll
        for (int i = 0; i < ceil_div(BM * BN, THREADS); ++i) store(C, i);
        return;
    }

    // Slice z's partial tile to the workspace; the last block at this tile adds all S in order.
    const size_t plane = (size_t)M * N;
#pragma unroll
    for (int i = 0; i < ceil_div(BM * BN, THREADS); ++i) store(work + blockIdx.y * plane, i);
    if (!last_to_arrive(counters + blockIdx.z * gridDim.x + blockIdx.x, S)) return;
#pragma unroll
    for (int i = 0; i < ceil_div(BM * BN, THREADS); ++i) {
        const int o = threadIdx.x + i * THREADS, r = row0 + o / BN, c = col0 + o % BN;
        if (o < BM * BN && r < M && c < N) {
            const size_t at = (size_t)r * N + c;
            float s = __ldcg(work + at);  // L2: another SM wrote it
            for (int z = 1; z < S; ++z) s += __ldcg(work + z * plane + at);
            C[at] = s;
        }
    }
}
