// Planted faulting kernel: a 16-byte vector load from A + 1 float, an address 4 bytes off the
// 16-byte alignment the instruction needs. The launch ends with cudaErrorMisalignedAddress.
extern "C" __global__ void sgemm(int M, int N, int K, const float* A, const float* B, float* C) {
    const float4 v = *reinterpret_cast<const float4*>(A + 1 + 4 * threadIdx.x);
    C[threadIdx.x] = v.x + v.y + v.z + v.w;
}
