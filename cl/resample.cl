/* resample.cl: ground truth at a lower resolution for the resolution schedule. */

/* OUT (W / F x H / F, C channels, 8-bit) <- the F x F box average of SRC (W x H at byte offset
 * OFF), rounded to nearest. */
__kernel void gt_downsample(__global const uchar *src, uint off, int W, int C, int f, __global uchar *out, int w2,
                            int h2)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w2 || y >= h2) return;
    for (int c = 0; c < C; c++) {
        uint sum = 0;
        for (int j = 0; j < f; j++)
            for (int i = 0; i < f; i++) sum += src[off + ((size_t)(y * f + j) * W + (size_t)(x * f + i)) * C + c];
        uint n = (uint)(f * f);
        out[((size_t)y * w2 + x) * C + c] = (uchar)((sum + n / 2) / n);
    }
}
