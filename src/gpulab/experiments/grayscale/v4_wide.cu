// v4 wide: each thread converts V groups of four pixels: V 16-byte loads, all issued before any
// arithmetic, then V 4-byte stores; the groups are a block-width apart, so every load and store
// instruction of a warp is one contiguous run (512 B read, 128 B written).
//
// Changed from v3 (V=1 is v3's access pattern): V 16-byte loads in flight per thread instead of
// one, and interior blocks run with no bounds check at all (only the last block checks, and ends
// with the scalar tail of (width*height) % 4 pixels).
// Expected effect: v3 keeps at most 16 B per thread in flight, 32 KB per SM at full occupancy,
// just at what Little's law asks to cover DRAM latency (4.3 TB/s x ~1 us / 132 SMs ~ 32 KB), and
// any lull (a block retiring, the next one starting) drops under it. V=2 keeps 32 B per thread
// and V=4 64 B (40 registers: 6 blocks of 256 per SM, 48 KB and 96 KB per SM in flight); V=4 needs
// a quarter of v3's blocks (8,100 at 7680x4320). Napkin at 7680x4320: 132.7 MB read + 33.2 MB
// written = 165.9 MB, 38.9 us at the 4,262 GB/s copy ceiling; >= 90% needs <= 43.2 us (v3: 47.4 us).
// HINT=1 loads with ld.global.cs (evict-first in L1 and L2: each pixel is read once). The timing
// harness flushes L2 by writing a buffer twice its size, so each timed launch starts with L2 full of
// dirty lines; plain reads evict them and pay their write-back (up to ~60 MB, a third of this
// problem's bytes) inside the timed window, while evict-first reads mostly replace each other and
// leave them. HINT=1 minus HINT=0 measures that write-back; the kernel's own bytes are the same.
// Measured (H200, 2026-11-29, 7680x4320): v3 47.9 us (81.2%); V=1 47.5 us (81.9%), with HINT=1
// 45.0 us (86.6%); V=2 45.0 us (86.4%), V=4 45.2-45.3 us (85.9-86.1%, two runs), but with HINT=1
// 46.9-47.0 us (~83%). More bytes in flight and evict-first reads each win ~2.5 us, not together;
// short of 90% (43.2 us). For scale, the harness's float4 copy of 134 MB (coalesce rows VEC=4 at
// 4096x4096) reaches 88.7%: at this size the launch, ramp and the flush's dirty L2 lines weigh.
// Params: V (1, 2 or 4; default 2) groups of 4 pixels per thread; HINT (0 or 1; default 0);
// 256 threads per block.
// Shapes: any width, height >= 1: the image is one flat run of width*height pixels (a group may
// straddle two rows); every 16-byte load is aligned (cupy buffers are 256-byte aligned and group g
// sits at byte 16g).
#include "common.cuh"

#define BLOCK 256

static_assert(V == 1 || V == 2 || V == 4, "V must be 1, 2 or 4");
static_assert(HINT == 0 || HINT == 1, "HINT must be 0 or 1");

// BT.601 luma in 8-bit fixed point: (77 R + 150 G + 29 B + 128) >> 8, alpha ignored (see v0).
// `word` is one RGBA pixel read as a little-endian 32-bit word: R in the low byte.
__device__ __forceinline__ unsigned luma_word(unsigned word) {
    return (77u * (word & 0xFFu) + 150u * ((word >> 8) & 0xFFu) + 29u * ((word >> 16) & 0xFFu) + 128u) >> 8;
}
__device__ __forceinline__ unsigned luma4(uint4 four) {  // four gray bytes, packed little-endian
    return luma_word(four.x) | (luma_word(four.y) << 8) | (luma_word(four.z) << 16) | (luma_word(four.w) << 24);
}
__device__ __forceinline__ uint4 load_group(const uint4* __restrict__ p) {
#if HINT == 1
    return __ldcs(p);
#else
    return *p;
#endif
}

extern "C" __global__ void grayscale(const uchar4* __restrict__ rgba, unsigned char* __restrict__ gray,
                                     int width, int height) {
    const size_t total = (size_t)width * height;
    const size_t groups = total / 4;  // whole groups of four pixels
    const size_t block_first = (size_t)blockIdx.x * (BLOCK * V);
    const size_t first = block_first + threadIdx.x;  // this thread's groups: first + v*BLOCK
    const uint4* __restrict__ in4 = reinterpret_cast<const uint4*>(rgba);
    unsigned* __restrict__ out4 = reinterpret_cast<unsigned*>(gray);

    if (block_first + BLOCK * V <= groups) {  // an interior block: no checks; every load first
        uint4 p[V];
#pragma unroll
        for (int v = 0; v < V; ++v) p[v] = load_group(in4 + first + v * BLOCK);
#pragma unroll
        for (int v = 0; v < V; ++v) out4[first + v * BLOCK] = luma4(p[v]);
        return;
    }
    // The last block: whole groups with a check, then the 1-3 pixels of a last partial group, by
    // the thread whose group it is.
#pragma unroll
    for (int v = 0; v < V; ++v) {
        const size_t g = first + v * BLOCK;
        if (g < groups) {
            out4[g] = luma4(load_group(in4 + g));
        } else if (g == groups) {
            for (size_t p = 4 * groups; p < total; ++p) {
                const uchar4 px = rgba[p];
                gray[p] = (unsigned char)((77u * px.x + 150u * px.y + 29u * px.z + 128u) >> 8);
            }
        }
    }
}
