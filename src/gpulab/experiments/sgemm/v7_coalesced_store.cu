// v7 coalesced write-back: C leaves through a per-warp shared buffer (v6 of Tang's blog post).
//
// Changed from v6: the main loop is v6's; at the end each warp copies one 16 x 32 sub-tile of its
// accumulators at a time into its own slice of shared memory (reusing the tile buffers after a
// barrier), then reads it back row-wise and writes C: on the float4 path each lane stores one float4
// of a row (8 lanes per 128-byte row, 4 rows per instruction); on the scalar path (N % 4 != 0) each
// lane stores one float of a row, so a warp writes 128 contiguous bytes per instruction where v6's
// lanes wrote single floats 16 bytes apart (4 of every 32 bytes per sector per instruction, 4x the
// sectors). Only __syncwarp is needed inside the write-back: each warp owns its slice. The slice rows
// are padded to 36 floats so that the fragment writes of the zig-zag lanes (rows 4 apart) hit
// distinct banks.
// Expected effect: small. The epilogue runs once per block while the main loop runs K/BK times:
// at 4096^3 it is ~0.5% of the instructions, and on the float4 path v6's STG.128s were already
// whole-sector, so expect v7 = v6 within noise there (it adds STS/LDS round trips and barriers);
// expect a gain of a few percent only on ragged N with small K, where the scalar stores matter.
// The rung stays in the ladder because the pipelined rungs build on it and it makes their epilogue
// independent of the lane mapping.
// Params: as v6: BM, BN, BK (multiple of 8), WM (multiple of 16), WN = 32*WNITER, WNITER, TM = TN = 4.
// Shapes: any M, N, K >= 1, as v6 (float4 or scalar paths chosen at run time, guarded edges).
#include "sgemm/ladder.cuh"

#define WARPS ((BM / WM) * (BN / WN))
#define THREADS (WARPS * 32)
#define WMITER (WM / 16)                  // 16-row sub-tiles per warp tile (4 lane rows x TM)
#define AS_LD (BM + 4)
#define TILE_FLOATS (BK * AS_LD + BK * BN)
#define SLICE_FLOATS (WARPS * 16 * CS_LD)
#define SMEM_FLOATS (TILE_FLOATS > SLICE_FLOATS ? TILE_FLOATS : SLICE_FLOATS)

template <bool VEC_A, bool VEC_BC>
__device__ __forceinline__ void gemm_tile(int M, int N, int K, const float* __restrict__ A,
                                          const float* __restrict__ B, float* __restrict__ C,
                                          float* smem) {
    float (*As)[AS_LD] = reinterpret_cast<float (*)[AS_LD]>(smem);
    float (*Bs)[BN] = reinterpret_cast<float (*)[BN]>(smem + BK * AS_LD);
    const int tid = threadIdx.x;
    const int warp = tid >> 5, lane = tid & 31;
    const int wm = (warp / (BN / WN)) * WM;    // warp tile origin inside the block tile
    const int wn = (warp % (BN / WN)) * WN;
    const int lr = zigzag_row(lane), lc = zigzag_col(lane);  // v6's lane grid
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;

    float acc[WMITER * TM][WNITER * TN];
    zero(acc);

    for (int k0 = 0; k0 < K; k0 += BK) {  // v6's main loop
        load_tiles<VEC_A, VEC_BC, BM, BK, THREADS>(As, Bs, M, N, K, A, B, row0, col0, k0);
        __syncthreads();
        warp_tile_mma<BK>(acc, As, Bs, wm + lr * 4, wn + lc * 4);
        __syncthreads();
    }

    // Write-back through this warp's slice of shared memory, one 16 x 32 sub-tile at a time.
    __syncthreads();  // every warp is done reading As/Bs, which the slices overlay
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
            __syncwarp();  // the slice is rewritten by the next sub-tile
        }
}

extern "C" __global__ void __launch_bounds__(THREADS) sgemm(int M, int N, int K,
                                                            const float* __restrict__ A,
                                                            const float* __restrict__ B,
                                                            float* __restrict__ C) {
    __shared__ float4 smem4[SMEM_FLOATS / 4];  // the A and B tiles, later the write-back slices
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
