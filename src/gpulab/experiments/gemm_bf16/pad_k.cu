// Padded staging for the TMA rungs (t2 and up) when K is not a multiple of 8: copies A (M x K) and
// Bt (N x K) into buffers whose rows are KP = K rounded up to 8 elements (16 bytes, the row pitch TMA
// takes), the pad columns zero. One launch stages both operands, before the GEMM's own launch and
// inside the timed work (what a user of such a shape pays).
// Why this shape: each thread writes one 16-byte chunk of a padded row (8 BF16, a single STG.128 to
// an aligned address) from 8 two-byte loads of the source row, whose start is only 2-byte aligned
// (K odd); a warp's 32 chunks are 512 contiguous bytes of a row on both sides, so every sector is
// used once. The source row's tail and the pad are produced by the same chunk: no separate zero fill.
// Napkin math at 4097^3: reads 2 x 4097 x 4097 x 2 = 67.1 MB, writes 2 x 4097 x 4104 x 2 = 67.3 MB,
// 134 MB at the H200's ~4.3 TB/s copy ceiling = ~31 us, against ~190 us of GEMM at 720 TFLOP/s.
// Arguments: A, Bt (row pitch K), their padded copies (row pitch KP), M and N rows, K, KP.

extern "C" __global__ void pad_k_bf16(const unsigned short* __restrict__ A, const unsigned short* __restrict__ Bt,
                                      unsigned short* __restrict__ A_pad, unsigned short* __restrict__ Bt_pad,
                                      int M, int N, int K, int KP) {
    const int chunks = KP / 8;  // 16-byte chunks per padded row
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)(M + N) * chunks) return;
    long long row = i / chunks;
    const int k0 = (int)(i - row * chunks) * 8;
    const unsigned short* src = A;
    unsigned short* dst = A_pad;
    if (row >= M) {  // rows M.. of the index space are Bt's
        row -= M;
        src = Bt;
        dst = Bt_pad;
    }
    src += row * K;
    unsigned w[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        const int k = k0 + 2 * j;
        const unsigned lo = k < K ? src[k] : 0u, hi = k + 1 < K ? src[k + 1] : 0u;
        w[j] = lo | (hi << 16);
    }
    *reinterpret_cast<uint4*>(dst + row * KP + k0) = make_uint4(w[0], w[1], w[2], w[3]);
}
