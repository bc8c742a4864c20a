// Probe kernels for the warp model's pattern fixtures.
//
// Each probe issues one warp-wide memory instruction (a global-load probe issues it twice, see
// LDG_PROBE) and nothing else that touches global or shared memory, so ncu's counters for its
// launch are the counters of that instruction.
// Which byte each lane touches is data, not code: lane i reads lane_offset[i] from constant memory
// (an LDC, counted by neither the global nor the shared metrics) and a negative offset predicates
// the lane off. gpulab/model/patterns.py holds the table of patterns; scripts/pattern_fixtures.py writes
// each pattern's offsets here, launches the probe of its space, kind and width (one block of one
// warp) and records what ncu counted, so the kernel and the model read the same addresses.
//
// The accesses are inline PTX with an explicit predicate: `asm volatile` is never removed or
// merged by the compiler, the width is exactly the one named (ld.shared.v4.u32 is LDS.128), and a
// lane whose offset is negative executes the instruction predicated off, as the guarded loads of
// the SGEMM kernels do. Shared memory is read without being written: the values do not matter,
// only the addresses.
//
// Launch: grid (1,1,1), block (32,1,1), argument: a global buffer of at least GLOBAL_BYTES bytes,
// 512-byte aligned (CuPy's pool gives that), used by the global probes only. Global-load probes
// issue their access twice; see LDG_PROBE.

#define LANES 32
#define SHARED_BYTES 8192

__constant__ long long lane_offset[LANES];

__device__ __forceinline__ long long my_offset() { return lane_offset[threadIdx.x]; }

__device__ __forceinline__ unsigned shared_addr(const unsigned char* window, long long off) {
    return static_cast<unsigned>(__cvta_generic_to_shared(window + (off < 0 ? 0 : off)));
}

__device__ __forceinline__ unsigned char* global_addr(unsigned char* buf, long long off) {
    return buf + (off < 0 ? 0 : off);
}

// Every lane, active or not, ends in one side effect that touches no memory: a nanosleep of at
// most 1 ns. For a load it consumes the loaded value (ptxas deletes a load nobody reads, asm
// volatile or not); for a store it keeps the predicated-off lanes alive to the end, so ptxas
// predicates the store instead of turning the guard into an early EXIT.
__device__ __forceinline__ void keep(unsigned v) { __nanosleep(v & 1u); }

// The predicate p is set from operand N, the lane's offset (NVVM takes numbered operands only).
#define PRED(N) "{\n\t.reg .pred p;\n\tsetp.ge.s64 p, %" #N ", 0;\n\t"
#define END "\n\t}"

// One predicated access of each width. Loads fold their value into `acc`; stores write the lane id.
// SPACE is the PTX state space, C the address constraint: "r" (32-bit shared offset) or "l".
#define LD8(SPACE, C)                                                                           \
    { unsigned v = 0;                                                                           \
      asm volatile(PRED(2) "@p ld." SPACE ".u8 %0, [%1];" END : "+r"(v) : C(a), "l"(off) : "memory"); \
      acc ^= v; }
#define LD16(SPACE, C)                                                                          \
    { unsigned v = 0;                                                                           \
      asm volatile(PRED(2) "@p ld." SPACE ".u16 %0, [%1];" END : "+r"(v) : C(a), "l"(off) : "memory"); \
      acc ^= v; }
#define LD32(SPACE, C)                                                                          \
    { unsigned v = 0;                                                                           \
      asm volatile(PRED(2) "@p ld." SPACE ".u32 %0, [%1];" END : "+r"(v) : C(a), "l"(off) : "memory"); \
      acc ^= v; }
#define LD64(SPACE, C)                                                                          \
    { unsigned v0 = 0, v1 = 0;                                                                  \
      asm volatile(PRED(3) "@p ld." SPACE ".v2.u32 {%0, %1}, [%2];" END                         \
                   : "+r"(v0), "+r"(v1) : C(a), "l"(off) : "memory");                           \
      acc ^= v0 ^ v1; }
#define LD128(SPACE, C)                                                                         \
    { unsigned v0 = 0, v1 = 0, v2 = 0, v3 = 0;                                                  \
      asm volatile(PRED(5) "@p ld." SPACE ".v4.u32 {%0, %1, %2, %3}, [%4];" END                 \
                   : "+r"(v0), "+r"(v1), "+r"(v2), "+r"(v3) : C(a), "l"(off) : "memory");       \
      acc ^= v0 ^ v1 ^ v2 ^ v3; }
#define ST8(SPACE, C)                                                                           \
    asm volatile(PRED(1) "@p st." SPACE ".u8 [%0], %2;" END : : C(a), "l"(off), "r"(lane) : "memory");
#define ST16(SPACE, C)                                                                          \
    asm volatile(PRED(1) "@p st." SPACE ".u16 [%0], %2;" END : : C(a), "l"(off), "r"(lane) : "memory");
#define ST32(SPACE, C)                                                                          \
    asm volatile(PRED(1) "@p st." SPACE ".u32 [%0], %2;" END : : C(a), "l"(off), "r"(lane) : "memory");
#define ST64(SPACE, C)                                                                          \
    asm volatile(PRED(1) "@p st." SPACE ".v2.u32 [%0], {%2, %2};" END                           \
                 : : C(a), "l"(off), "r"(lane) : "memory");
#define ST128(SPACE, C)                                                                         \
    asm volatile(PRED(1) "@p st." SPACE ".v4.u32 [%0], {%2, %2, %2, %2};" END                   \
                 : : C(a), "l"(off), "r"(lane) : "memory");

// Shared probes: one window per probe, aligned to a whole bank row so offset 0 is bank 0.
#define SHARED_PROBE(NAME, ACCESS)                                                              \
    extern "C" __global__ void NAME(unsigned char* buf) {                                       \
        __shared__ __align__(128) unsigned char window[SHARED_BYTES];                           \
        const long long off = my_offset();                                                      \
        const unsigned a = shared_addr(window, off);                                            \
        const unsigned lane = threadIdx.x;                                                      \
        unsigned acc = 0;                                                                       \
        ACCESS("shared", "r")                                                                   \
        (void)lane;                                                                             \
        keep(acc);                                                                              \
    }

// Global stores: one predicated STG.
#define STG_PROBE(NAME, ACCESS)                                                                 \
    extern "C" __global__ void NAME(unsigned char* buf) {                                       \
        const long long off = my_offset();                                                      \
        unsigned char* a = global_addr(buf, off);                                               \
        const unsigned lane = threadIdx.x;                                                      \
        ACCESS("global", "l")                                                                   \
        keep(0);                                                                                \
    }

// Global loads are issued TWICE (pattern.repeat = 2 in patterns.py): with one guarded load in
// straight-line code ptxas branches around the LDG rather than predicating it, so a warp with no
// active lane would skip it; with two it predicates both, as it does the guarded loads of the
// SGEMM kernels, and the fully-off case is then measured as an executed, predicated-off LDG.
// ld.global.nc is the read-only path (LDG.E.CONSTANT) that `const __restrict__` pointers take.
#define LDG_PROBE(NAME, ACCESS)                                                                 \
    extern "C" __global__ void NAME(unsigned char* buf) {                                       \
        const long long off = my_offset();                                                      \
        const unsigned char* a = global_addr(buf, off);                                         \
        unsigned acc = 0;                                                                       \
        ACCESS("global.nc", "l")                                                                \
        ACCESS("global.nc", "l")                                                                \
        keep(acc);                                                                              \
    }

SHARED_PROBE(probe_lds8, LD8)
SHARED_PROBE(probe_lds16, LD16)
SHARED_PROBE(probe_lds32, LD32)
SHARED_PROBE(probe_lds64, LD64)
SHARED_PROBE(probe_lds128, LD128)
SHARED_PROBE(probe_sts8, ST8)
SHARED_PROBE(probe_sts16, ST16)
SHARED_PROBE(probe_sts32, ST32)
SHARED_PROBE(probe_sts64, ST64)
SHARED_PROBE(probe_sts128, ST128)
LDG_PROBE(probe_ldg8, LD8)
LDG_PROBE(probe_ldg16, LD16)
LDG_PROBE(probe_ldg32, LD32)
LDG_PROBE(probe_ldg64, LD64)
LDG_PROBE(probe_ldg128, LD128)
STG_PROBE(probe_stg8, ST8)
STG_PROBE(probe_stg16, ST16)
STG_PROBE(probe_stg32, ST32)
STG_PROBE(probe_stg64, ST64)
STG_PROBE(probe_stg128, ST128)
