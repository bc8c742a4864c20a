// Tensor-core helpers of the gemm_bf16 rungs: shared addresses, cp.async, ldmatrix, mma.sync, wmma.
//
// All inline PTX, no CUDA headers: NVRTC's built-in headers do not include mma.h or cuda_bf16.h
// (NVRTC 13.5: "cannot open source file mma.h"), and the lab compiles with NVRTC alone, so a BF16
// value is its 16 bits in an unsigned short and the instructions are written as PTX. The wmma
// wrappers are the PTX that nvcuda::wmma's mma.h emits for BF16 (wmma.load / wmma.mma /
// wmma.store, m16n16k16), so t0 is the WMMA API rung in all but the C++ spelling.
#pragma once

typedef unsigned short bf16_t;  // the bits of one BF16 value

__device__ __forceinline__ unsigned smem_u32(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// -- cp.async: 16-byte global -> shared copies in the background (sm_80+) ------------------------
// src-size 0 reads nothing and zero-fills the 16 bytes: the ragged-edge guard.
__device__ __forceinline__ void cp_async16(unsigned dst, const void* src, bool in_range) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(in_range ? 16 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int PENDING>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING));
}

// -- ldmatrix: four 8x8 matrices of 16-bit values, each row 16 bytes at an address a lane gives ----
// Lanes 8i..8i+7 give the row addresses of matrix i; lane l gets, of each matrix, the two values of
// row l/4 at columns 2*(l%4) and 2*(l%4)+1, in one 32-bit register: the mma.sync fragment layout.
__device__ __forceinline__ void ldmatrix_x4(unsigned addr, unsigned& r0, unsigned& r1, unsigned& r2,
                                            unsigned& r3) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(addr));
}

// -- mma.sync m16n8k16, BF16 x BF16 + FP32 -> FP32 ----------------------------------------------
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// -- wmma m16n16k16 BF16 (the PTX behind nvcuda::wmma) ------------------------------------------
// A fragment: row-major 16x16 at a shared address, `ld` elements between rows; B fragment: the
// 16x16 k x n block stored column-major (n-th column's 16 k contiguous), `ld` between columns;
// accumulator: 8 FP32 values per lane.
struct WmmaA { unsigned x[4]; };
struct WmmaB { unsigned x[4]; };
struct WmmaC { float x[8]; };

__device__ __forceinline__ void wmma_load_a(WmmaA& f, unsigned addr, int ld) {
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3])
                 : "r"(addr), "r"(ld)
                 : "memory");
}
__device__ __forceinline__ void wmma_load_b(WmmaB& f, unsigned addr, int ld) {
    asm volatile("wmma.load.b.sync.aligned.col.m16n16k16.shared.bf16 {%0, %1, %2, %3}, [%4], %5;\n"
                 : "=r"(f.x[0]), "=r"(f.x[1]), "=r"(f.x[2]), "=r"(f.x[3])
                 : "r"(addr), "r"(ld)
                 : "memory");
}
__device__ __forceinline__ void wmma_mma(WmmaC& c, const WmmaA& a, const WmmaB& b) {
    asm volatile(
        "wmma.mma.sync.aligned.row.col.m16n16k16.f32.bf16.bf16.f32 "
        "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, {%12, %13, %14, %15}, "
        "{%0, %1, %2, %3, %4, %5, %6, %7};\n"
        : "+f"(c.x[0]), "+f"(c.x[1]), "+f"(c.x[2]), "+f"(c.x[3]), "+f"(c.x[4]), "+f"(c.x[5]),
          "+f"(c.x[6]), "+f"(c.x[7])
        : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[0]), "r"(b.x[1]), "r"(b.x[2]),
          "r"(b.x[3]));
}
__device__ __forceinline__ void wmma_store_c(unsigned addr, const WmmaC& c, int ld) {
    asm volatile(
        "wmma.store.d.sync.aligned.row.m16n16k16.shared.f32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8}, %9;\n"
        ::"r"(addr), "f"(c.x[0]), "f"(c.x[1]), "f"(c.x[2]), "f"(c.x[3]), "f"(c.x[4]), "f"(c.x[5]),
          "f"(c.x[6]), "f"(c.x[7]), "r"(ld)
        : "memory");
}
