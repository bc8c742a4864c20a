// Split-K's ordered fixup, shared by the kernels that cut K across blocks (gv, sx): a tile of C is
// computed by S blocks, each of which writes its partial tile to a workspace plane of its own; the
// last of them to arrive adds the S planes in slice order (the same bits on every run).
#pragma once

// Called by every thread of a block once its partial tile is written: whether this block is the
// last of `slices` to arrive at the tile's counter. The fences make the other blocks' partials
// visible to the last one (read them with __ldcg: L1 is not coherent); the last one resets the
// counter to zero, so the counters are ready for the next launch without a memset.
__device__ __forceinline__ bool last_to_arrive(unsigned* counter, unsigned slices) {
    __shared__ bool last;
    __threadfence();  // this block's partials are visible device-wide before it is counted
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(counter, 1u) == slices - 1;
        if (last) *counter = 0;  // every slice has arrived
    }
    __syncthreads();
    const bool mine = last;
    if (mine) __threadfence();
    return mine;
}
