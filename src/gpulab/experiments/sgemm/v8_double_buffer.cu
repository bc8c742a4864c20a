// v8 double buffering: the next tile's global loads are in flight while this tile is computed.
//
// Changed from v7: two A/B tile buffers in shared memory. At step t each thread first issues the
// global loads of tile t+1 into registers, then computes tile t from buffer t%2, then stores the
// registers into buffer (t+1)%2, and one barrier ends the step (v7 needed two: before and after the
// compute). The loads' latency (~600-800 cycles from L2/DRAM on the H200) is covered by the compute
// of a whole tile (BK*128 = 1024 FMAs per thread at the default 16 x 8, ~2000 cycles per
// sub-partition with 2 warps each) instead of by other warps alone. __launch_bounds__(THREADS,
// MINB) asks the compiler to fit MINB blocks per SM (255 registers for 2 blocks of 128 threads,
// 128 for 2 blocks of 256).
// Expected effect: v7 stalls each tile on its loads (long scoreboard) and on two barriers, with only
// 8-16 warps per SM to switch between; removing the exposed latency should lift the FMA pipe's
// busy fraction from ~60-70% toward ~80%: expect 1.1-1.3x v7 at 4096^3. Costs: 8-16 more registers
// (the staged float4s) and twice the tile shared memory (16.6 KB at 128 x 128 x 8; the write-back
// slices of v7 reuse it).
// Params: as v7 (BM, BN, BK multiple of 8, WM multiple of 16, WN = 32*WNITER, WNITER, TM = TN = 4)
//   plus MINB, the blocks per SM the register budget is sized for.
// Shapes: any M, N, K >= 1 (float4 or scalar paths chosen at run time, guarded edges).
#include "common.cuh"

#define WARPS ((BM / WM) * (BN / WN))
#define THREADS (WARPS * 32)
#define WMITER (WM / 16)
#define A_LOADS (BM * BK / 4 / THREADS)
#define B_LOADS (BK * BN / 4 / THREADS)
#define AS_LD (BM + 4)
#define CS_LD 36
#define TILE_FLOATS (BK * AS_LD + BK * BN)  // one stage: transposed A tile, then B tile
#define SLICE_FLOATS (WARPS * 16 * CS_LD)
#define SMEM_FLOATS (2 * TILE_FLOATS > SLICE_FLOATS ? 2 * TILE_FLOATS : SLICE_FLOATS)

__device__ __forceinline__ bool aligned16(const void* p) {
    return (reinterpret_cast<unsigned long long>(p) & 15ull) == 0;
}

// Global -> registers: tile at k0 (float4 or guarded scalar loads; zeros outside the matrices).
template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void load_tile(float4 (&ra)[A_LOADS], float4 (&rb)[B_LOADS], int M, int N,
                                          int K, const float* __restrict__ A,
                                          const float* __restrict__ B, int row0, int col0, int k0) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        const int idx = tid + l * THREADS;
        const int r = (idx >> 1) % BM, kq = ((idx / (2 * BM)) << 1) | (idx & 1);
        const int gr = row0 + r, gk = k0 + kq * 4;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (VEC_A) {
            if (gr < M && gk < K) v = load_float4(A + (size_t)gr * K + gk);
        } else if (gr < M) {
            const float* p = A + (size_t)gr * K;
            if (gk + 0 < K) v.x = p[gk + 0];
            if (gk + 1 < K) v.y = p[gk + 1];
            if (gk + 2 < K) v.z = p[gk + 2];
            if (gk + 3 < K) v.w = p[gk + 3];
        }
        ra[l] = v;
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        const int idx = tid + l * THREADS;
        const int r = idx / (BN / 4), cq = idx % (BN / 4);
        const int gk = k0 + r, gc = col0 + cq * 4;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (VEC_BC) {
            if (gk < K && gc < N) v = load_float4(B + (size_t)gk * N + gc);
        } else if (gk < K) {
            const float* p = B + (size_t)gk * N;
            if (gc + 0 < N) v.x = p[gc + 0];
            if (gc + 1 < N) v.y = p[gc + 1];
            if (gc + 2 < N) v.z = p[gc + 2];
            if (gc + 3 < N) v.w = p[gc + 3];
        }
        rb[l] = v;
    }
}

// Registers -> one shared stage (A transposed into the padded As, as since v5).
__device__ __forceinline__ void store_tile(const float4 (&ra)[A_LOADS], const float4 (&rb)[B_LOADS],
                                           float* stage) {
    float (*As)[AS_LD] = reinterpret_cast<float (*)[AS_LD]>(stage);
    float (*Bs)[BN] = reinterpret_cast<float (*)[BN]>(stage + BK * AS_LD);
    const int tid = threadIdx.x;
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
        const int idx = tid + l * THREADS;
        const int r = (idx >> 1) % BM, kq = ((idx / (2 * BM)) << 1) | (idx & 1);
        As[kq * 4 + 0][r] = ra[l].x;
        As[kq * 4 + 1][r] = ra[l].y;
        As[kq * 4 + 2][r] = ra[l].z;
        As[kq * 4 + 3][r] = ra[l].w;
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
        const int idx = tid + l * THREADS;
        store_float4(&Bs[idx / (BN / 4)][(idx % (BN / 4)) * 4], rb[l]);
    }
}

template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float* smem) {
    const int tid = threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = (warp / (BN / WN)) * WM;
    const int wn = (warp % (BN / WN)) * WN;
    const int lr = (lane & 1) | ((lane >> 4) << 1);  // zig-zag lane grid, as v6
    const int lc = (lane >> 1) & 7;
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.0f;

    float4 ra[A_LOADS], rb[B_LOADS];
    load_tile<VEC_A, VEC_BC>(ra, rb, M, N, K, A, B, row0, col0, 0);
    store_tile(ra, rb, smem);
    __syncthreads();

    const int ktiles = (K + BK - 1) / BK;
    for (int t = 0; t < ktiles; ++t) {
        const float* stage = smem + (t & 1) * TILE_FLOATS;
        const float (*As)[AS_LD] = reinterpret_cast<const float (*)[AS_LD]>(stage);
        const float (*Bs)[BN] = reinterpret_cast<const float (*)[BN]>(stage + BK * AS_LD);
        const bool more = t + 1 < ktiles;
        if (more) load_tile<VEC_A, VEC_BC>(ra, rb, M, N, K, A, B, row0, col0, (t + 1) * BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 a[WMITER], b[WNITER];
#pragma unroll
            for (int i = 0; i < WMITER; ++i) a[i] = load_float4(&As[k][wm + i * 16 + lr * 4]);
#pragma unroll
            for (int j = 0; j < WNITER; ++j) b[j] = load_float4(&Bs[k][wn + j * 32 + lc * 4]);
#pragma unroll
            for (int i = 0; i < WMITER; ++i) {
                const float av[4] = {a[i].x, a[i].y, a[i].z, a[i].w};
#pragma unroll
                for (int j = 0; j < WNITER; ++j) {
                    const float bv[4] = {b[j].x, b[j].y, b[j].z, b[j].w};
#pragma unroll
                    for (int r = 0; r < 4; ++r)
#pragma unroll
                        for (int c = 0; c < 4; ++c) acc[i * 4 + r][j * 4 + c] += av[r] * bv[c];
                }
            }
        }
        // The other stage was last read in step t-1, which every thread finished before the
        // barrier that ended it: it is free to overwrite now.
        if (more) store_tile(ra, rb, smem + ((t + 1) & 1) * TILE_FLOATS);
        __syncthreads();
    }

    // Write-back through this warp's slice (as v7); the loop's last barrier freed the stages.
    float* cs = smem + warp * (16 * CS_LD);
#pragma unroll
    for (int i = 0; i < WMITER; ++i)
#pragma unroll
        for (int j = 0; j < WNITER; ++j) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const float* v = &acc[i * 4 + r][j * 4];
                store_float4(&cs[(lr * 4 + r) * CS_LD + lc * 4], make_float4(v[0], v[1], v[2], v[3]));
            }
            __syncwarp();
            const int rbase = row0 + wm + i * 16, cbase = col0 + wn + j * 32;
            if (VEC_BC) {
                const int q = lane & 7, col = cbase + q * 4;
#pragma unroll
                for (int p = lane >> 3; p < 16; p += 4) {
                    const int row = rbase + p;
                    if (row < M && col < N) store_float4(C + (size_t)row * N + col, load_float4(&cs[p * CS_LD + q * 4]));
                }
            } else {
                const int col = cbase + lane;
#pragma unroll
                for (int p = 0; p < 16; ++p) {
                    const int row = rbase + p;
                    if (row < M && col < N) C[(size_t)row * N + col] = cs[p * CS_LD + lane];
                }
            }
            __syncwarp();
        }
}

extern "C" __global__ void __launch_bounds__(THREADS, MINB) sgemm(int M, int N, int K,
                                                                  const float* __restrict__ A,
                                                                  const float* __restrict__ B,
                                                                  float* __restrict__ C) {
    __shared__ float4 smem4[SMEM_FLOATS / 4];  // two tile stages, later the write-back slices
    float* smem = reinterpret_cast<float*>(smem4);
    const bool vec_a = (K % 4 == 0) && aligned16(A);
    const bool vec_bc = (N % 4 == 0) && aligned16(B) && aligned16(C);
    if (vec_a) {
        if (vec_bc) gemm_tile<true, true>(M, N, K, A, B, C, smem);
        else        gemm_tile<true, false>(M, N, K, A, B, C, smem);
    } else {
        if (vec_bc) gemm_tile<false, true>(M, N, K, A, B, C, smem);
        else        gemm_tile<false, false>(M, N, K, A, B, C, smem);
    }
}
