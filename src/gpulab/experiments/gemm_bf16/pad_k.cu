// Padded staging for the TMA rungs (t2 and up) when K is not a multiple of 8: copies A (M x K) and
// Bt (N x K) into buffers whose rows are KP = K rounded up to 64 elements (128 bytes: TMA takes any
// multiple of 16, but reads rows on a 32-byte boundary faster; staging.py), the pad columns zero. One launch stages both operands, before the GEMM's own launch and
// inside the timed work (what a user of such a shape pays).
// Why this shape: each thread writes one 16-byte chunk of a padded row (8 BF16, a single STG.128 to
// an aligned address). Its 8 source elements start anywhere (a row of odd K starts 2-byte aligned),
// so the thread loads the two aligned 16-byte words that hold them (LDG.128; the second is the next
// thread's first, an L1 hit) and shifts them into place: whole 32-bit words where the start is
// 4-byte aligned, funnel shifts by 16 bits otherwise. Elements past the row's end (the next row's
// first ones) become the zero pad. A warp's 32 chunks are 512 contiguous bytes on both sides, so
// every sector is used once. (The first version loaded the 8 elements as 8 two-byte LDGs: 16 load
// instructions' worth of L1 requests per 16 bytes.)
// Napkin math at 4097^3: reads 2 x 4097 x 4097 x 2 = 67.1 MB, writes 2 x 4097 x 4160 x 2 = 68.2 MB,
// 135 MB at the H200's ~4.3 TB/s copy ceiling = ~31 us, against ~190 us of GEMM at 720 TFLOP/s.
// Measured alone (H200, 2026-12-01, notebook/probes/time_pad_k.py, the pitch then 4104): 35.9 us at 4097^3
// (3.74 TB/s), where the two-byte loads took 39.3 us (3.42 TB/s). The pad's whole chunks (KP - K
// up to 63 elements) are written as zeros without loading anything.
// Arguments: A, Bt (row pitch K), their padded copies (row pitch KP), M and N rows, K, KP.

// Word i (0 .. 7) of the 32 bytes lo:hi, for a compile-time i.
__device__ __forceinline__ unsigned word(const uint4& lo, const uint4& hi, int i) {
    const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
    return w[i];
}

// The 16 bytes starting FIRST words into lo:hi (FIRST a compile-time 0 .. 3), shifted down by 16
// more bits where `odd` (the start is 2 bytes past a word).
template <int FIRST>
__device__ __forceinline__ uint4 window(const uint4& lo, const uint4& hi, bool odd) {
    unsigned out[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        out[i] = __funnelshift_r(word(lo, hi, FIRST + i), word(lo, hi, FIRST + i + 1 < 8 ? FIRST + i + 1 : 7),
                                 odd ? 16 : 0);
    }
    return make_uint4(out[0], out[1], out[2], out[3]);
}

// Aligned 16-byte word w of a matrix of `total` elements; the matrix's last word may end before the
// word does (the allocation ends there): its elements one by one, zeros past the end.
__device__ __forceinline__ uint4 load_word(const unsigned short* src, long long w, long long total) {
    if (8 * w + 8 <= total) return reinterpret_cast<const uint4*>(src)[w];
    unsigned out[4] = {0u, 0u, 0u, 0u};
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        if (8 * w + j < total) out[j / 2] |= (unsigned)src[8 * w + j] << (16 * (j % 2));
    }
    return make_uint4(out[0], out[1], out[2], out[3]);
}

extern "C" __global__ void pad_k_bf16(const unsigned short* __restrict__ A, const unsigned short* __restrict__ Bt,
                                      unsigned short* __restrict__ A_pad, unsigned short* __restrict__ Bt_pad,
                                      int M, int N, int K, int KP) {
#if __CUDA_ARCH__ >= 900
    // The GEMM launched behind this copy (programmatically: gpulab.gpu.launch) may start once every
    // block of this grid has reached here; it waits for this grid's writes itself (wait_for_prior_grid).
    asm volatile("griddepcontrol.launch_dependents;");
#endif
    const int chunks = KP / 8;  // 16-byte chunks per padded row
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)(M + N) * chunks) return;
    long long row = i / chunks;
    const int k0 = (int)(i - row * chunks) * 8;
    const int valid = K - k0;  // elements of the row in this chunk: 8 or fewer, none in the pad's whole chunks
    const unsigned short* src = A;
    unsigned short* dst = A_pad;
    long long rows = M;
    if (row >= M) {  // rows M.. of the index space are Bt's
        row -= M;
        src = Bt;
        dst = Bt_pad;
        rows = N;
    }
    if (valid <= 0) {  // all pad
        *reinterpret_cast<uint4*>(dst + row * KP + k0) = make_uint4(0u, 0u, 0u, 0u);
        return;
    }
    // Element e = row K + k0 of the source lies in aligned 16-byte word e / 8, at element e % 8.
    const long long e = row * K + k0, total = rows * K;
    const uint4 lo = load_word(src, e / 8, total);
    const uint4 hi = load_word(src, e / 8 + 1, total);
    const int at = (int)(e % 8);
    const bool odd = at % 2;
    uint4 v;
    switch (at / 2) {
        case 0: v = window<0>(lo, hi, odd); break;
        case 1: v = window<1>(lo, hi, odd); break;
        case 2: v = window<2>(lo, hi, odd); break;
        default: v = window<3>(lo, hi, odd); break;
    }
    // Zero what lies past the row's end: the next row's first elements, or nothing at all.
    if (valid < 8) {
        unsigned* w = reinterpret_cast<unsigned*>(&v);
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (2 * j >= valid) w[j] = 0u;
            else if (2 * j + 1 >= valid) w[j] &= 0xFFFFu;
        }
    }
    *reinterpret_cast<uint4*>(dst + row * KP + k0) = v;
}
