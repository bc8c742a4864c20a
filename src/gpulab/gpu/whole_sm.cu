// A kernel that does nothing, for gpulab.gpu.clusters: launched (or asked about) with the largest
// dynamic shared memory a block may take, each of its blocks holds a whole SM, as gemm_bf16's t4 does.
extern "C" __global__ void whole_sm() {}
