// Split-K's ordered fixup, shared by the kernels that cut K across blocks (gv, sx): a tile of C is
// computed by S blocks, each of which writes its partial tile to a workspace plane of its own; the
// last of them to arrive adds the S planes in slice order (the same bits on every run).
#pragma once

// Called by every thread of a block once its partial tile is written: whether this block is the
// last of `slices` to arrive at the tile's counter. The fences make the other blocks' partials
// visible to the last one (read them with __ldcg: L1 is not coherent); the last one resets the
// counter to zero, so the counters are ready for the next launch without a memset. Thread 0's
// answer reaches the block through the barrier itself (__syncthreads_or), not a __shared__ flag: a
// static shared variable goes first in the block's shared memory and moves the dynamic allocation
// after it by 16 bytes, so sx's and v13's cp.async ring, laid out for 128-byte lines, straddled
// them (ncu, H200: 5/3 the cp.async shared wavefronts of v11's same ring, and a quarter more global
// sectors on B's 16-byte copies than the model's).
__device__ __forceinline__ bool last_to_arrive(unsigned* counter, unsigned slices) {
    __threadfence();  // this block's partials are visible device-wide before it is counted
    __syncthreads();
    bool mine = false;
    if (threadIdx.x == 0) {
        mine = atomicAdd(counter, 1u) == slices - 1;
        if (mine) *counter = 0;  // every slice has arrived
    }
    const bool last = __syncthreads_or(mine);
    if (last) __threadfence();
    return last;
}
