// The 96-wide wgmma, m64n96k16 with FP32 accumulators, for kc alone (kc_split_k_cluster.cu: 64
// tiles of 128 x 96 split two ways fill 128 of 132 SMs at 128 tokens x 6144). Apart from
// wgmma_shapes.cuh because every Hopper kernel includes that one through hopper.cuh, and a width
// added there changes all their fingerprints (gpulab.gpu.compile.source_fingerprint), and with them
// the standing of every record they have. The operand types come from hopper.cuh, included first.
#pragma once

// m64n96k16: D (64 x 96 FP32, 48 per thread) += A (64 x 16, shared) * B (96 x 16, shared), both K-major.
__device__ __forceinline__ void wgmma_m64n96k16(float (&d)[48], unsigned long long desc_a, unsigned long long desc_b,
                                                unsigned scale_d = 1) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %50, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n96" WGMMA_K_TYPES " {"
        "%0, %1, %2, %3, %4, %5, %6, %7, "
        "%8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, "
        "%24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, "
        "%40, %41, %42, %43, %44, %45, %46, %47"
        "}, %48, %49, p, " WGMMA_IMMEDIATES ";\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47])
        : "l"(desc_a), "l"(desc_b), "r"(scale_d));
}
