// Planted wrong kernel (grayscale): v1's row walk that never writes the last column of the image.
// A uint8 output has no NaN: only the two-poison check catches pixels that were never written.
extern "C" __global__ void grayscale(const uchar4* rgba, unsigned char* gray, int width, int height) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= width - 1) return;  // the bug: x == width - 1 is skipped
    const size_t p = (size_t)y * width + x;
    const uchar4 c = rgba[p];
    gray[p] = (unsigned char)((77u * c.x + 150u * c.y + 29u * c.z + 128u) >> 8);
}
