// The narrow wgmma shapes of ks (ks_stream_k_swap.cu), m64nNk16 for N = 8, 16 and 32 with FP32
// accumulators: there the wgmma's N is a batch of tokens (the rows of A), so a decode batch of 1-16
// tokens costs an N of 8 or 16, not the 64-256 of the ladder's tiles. One asm statement per N, as in
// wgmma_shapes.cuh (a PTX instruction names all N/2 accumulator registers); kept out of that file
// so that the ladder's kernels, which never use them, keep their source fingerprints
// (gpulab.gpu.compile.source_fingerprint) and with them their tuned picks. Needs hopper.cuh first
// (WGMMA_K_TYPES, WGMMA_IMMEDIATES, wgmma_m64n64k16 and m64n128k16).
#pragma once

// m64n8k16: D (64 x 8 FP32, 4 per thread) += A (64 x 16, shared) * B (8 x 16, shared), both K-major.
__device__ __forceinline__ void wgmma_m64n8k16(float (&d)[4], unsigned long long desc_a, unsigned long long desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %6, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n8" WGMMA_K_TYPES " {"
        "%0, %1, %2, %3"
        "}, %4, %5, p, " WGMMA_IMMEDIATES ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "l"(desc_a), "l"(desc_b), "r"(1u));
}

// m64n16k16: D (64 x 16 FP32, 8 per thread) += A (64 x 16, shared) * B (16 x 16, shared), both K-major.
__device__ __forceinline__ void wgmma_m64n16k16(float (&d)[8], unsigned long long desc_a, unsigned long long desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n16" WGMMA_K_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7"
        "}, %8, %9, p, " WGMMA_IMMEDIATES ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "l"(desc_a), "l"(desc_b), "r"(1u));
}

// m64n32k16: D (64 x 32 FP32, 16 per thread) += A (64 x 16, shared) * B (32 x 16, shared), both K-major.
__device__ __forceinline__ void wgmma_m64n32k16(float (&d)[16], unsigned long long desc_a, unsigned long long desc_b) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32" WGMMA_K_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15"
        "}, %16, %17, p, " WGMMA_IMMEDIATES ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(desc_a), "l"(desc_b), "r"(1u));
}

// m64nTNk16 for ks's token tile TN, chosen at compile time; accumulators added to (scale-d = 1).
template <int kTN>
__device__ __forceinline__ void wgmma_m64_tokens(float (&d)[kTN / 2], unsigned long long desc_a,
                                                 unsigned long long desc_b) {
    static_assert(kTN == 8 || kTN == 16 || kTN == 32 || kTN == 64 || kTN == 128, "TN must be 8, 16, 32, 64 or 128");
    if constexpr (kTN == 8) wgmma_m64n8k16(d, desc_a, desc_b);
    else if constexpr (kTN == 16) wgmma_m64n16k16(d, desc_a, desc_b);
    else if constexpr (kTN == 32) wgmma_m64n32k16(d, desc_a, desc_b);
    else if constexpr (kTN == 64) wgmma_m64n64k16(d, desc_a, desc_b, 1);
    else wgmma_m64n128k16(d, desc_a, desc_b, 1);
}
