/* ssim.cl: loss (1 - lambda) * L1 + lambda * (1 - SSIM) with an 11x11 Gaussian window
 * (sigma 1.5, C1 = 0.01^2, C2 = 0.03^2, zero padding as torch conv2d), forward and analytic
 * backward as separable blurs, plus per-image metric sums (L1, squared error, SSIM).
 * Images: render (3, H, W) float; ground truth (H, W, GT_CH) 8-bit at a byte offset, GT_CH 3
 * (RGB) or 4 (RGB and a weight: masks and the invalid border of undistorted photos). A weight m
 * in [0, 1] blends the render towards the ground truth (m a + (1 - m) b) before both terms, so
 * a masked pixel adds nothing to L1 and D-SSIM and gets no gradient; the metric sums weight each
 * pixel by m and add up the weights in their 4th component. */
#define SSIM_C1 0.0001f
#define SSIM_C2 0.0009f
__constant float GAUSS11[11] = {1.028380084e-03f, 7.598758135e-03f, 3.600077213e-02f, 1.093606895e-01f,
                                2.130055377e-01f, 2.660117249e-01f, 2.130055377e-01f, 1.093606895e-01f,
                                3.600077213e-02f, 7.598758135e-03f, 1.028380084e-03f};

inline float load_render(__global const float *img, size_t i, int clamp01)
{
    float v = img[i];
    return clamp01 ? clamp(v, 0.f, 1.f) : v;
}
inline float load_gt(__global const uchar *gt, uint gt_off, int gt_ch, int W, int x, int y, int c)
{
    return gt[gt_off + ((size_t)y * W + x) * gt_ch + c] * (1.f / 255.f);
}
inline float gt_weight(__global const uchar *gt, uint gt_off, int gt_ch, int W, int x, int y)
{
    return gt_ch == 4 ? gt[gt_off + ((size_t)y * W + x) * 4 + 3] * (1.f / 255.f) : 1.f;
}
/* the render as the loss sees it: blended towards the ground truth B by the weight M */
inline float weighted_render(float a, float b, float m, int gt_ch) { return gt_ch == 4 ? b + m * (a - b) : a; }

/* Both passes run in one work-group of SSIM_T x SSIM_T pixels of one channel: the group loads
 * its pixels and a halo of SSIM_R (zero outside the image, as torch's zero padding), blurs the
 * rows of the halo horizontally in local memory, then each item blurs its column vertically.
 * The sums run in the order of separate passes (x taps, then y taps). */
#define SSIM_T 16
#define SSIM_R 5
#define SSIM_S (SSIM_T + 2 * SSIM_R) /* the loaded square's side */

/* Horizontal blur of 3 maps of the loaded square SRC (SSIM_S x SSIM_S each) into DST (SSIM_S
   rows x SSIM_T columns each); the group's items share the rows. */
inline void blur_rows3(__local const float *src, __local float *dst, int lid)
{
    for (int e = lid; e < SSIM_S * SSIM_T; e += SSIM_T * SSIM_T) {
        int r = e / SSIM_T, col = e - r * SSIM_T;
        __local const float *row = src + r * SSIM_S + col;
        float s[3] = {0.f, 0.f, 0.f};
        for (int k = 0; k < 11; k++)
            for (int q = 0; q < 3; q++) s[q] += GAUSS11[k] * row[q * SSIM_S * SSIM_S + k];
        for (int q = 0; q < 3; q++) dst[q * SSIM_S * SSIM_T + e] = s[q];
    }
}

/* SSIM map, its partial derivatives (scaled by dL/dSSIM) for the backward when WANT_GRAD, and
 * per-work-group partial sums (L1, squared error, SSIM) of the image. */
__kernel __attribute__((reqd_work_group_size(SSIM_T, SSIM_T, 1)))
void ssim_fwd(__global const float *img, __global const uchar *gt, uint gt_off, int gt_ch, int W, int H,
              int clamp01, int want_grad, float dL_dssim,
              __global float *dmap3,      /* (3, 3, H, W): dS/dm1, dS/de11, dS/de12 */
              __global float4 *partials)  /* (groups) */
{
    __local float ab[2 * SSIM_S * SSIM_S];      /* the weighted render a, then the ground truth b */
    __local float hm[5 * SSIM_S * SSIM_T];      /* rows blurred: a, b, a^2, b^2, ab */
    __local float4 red[SSIM_T * SSIM_T];
    int lx = get_local_id(0), ly = get_local_id(1), lid = ly * SSIM_T + lx, c = get_global_id(2);
    int x0 = (int)get_group_id(0) * SSIM_T - SSIM_R, y0 = (int)get_group_id(1) * SSIM_T - SSIM_R;
    size_t plane = (size_t)c * W * H;
    for (int e = lid; e < SSIM_S * SSIM_S; e += SSIM_T * SSIM_T) {
        int X = x0 + e % SSIM_S, Y = y0 + e / SSIM_S;
        float a = 0.f, b = 0.f;
        if (X >= 0 && X < W && Y >= 0 && Y < H) {
            b = load_gt(gt, gt_off, gt_ch, W, X, Y, c);
            a = weighted_render(load_render(img, plane + (size_t)Y * W + X, clamp01), b,
                                gt_weight(gt, gt_off, gt_ch, W, X, Y), gt_ch);
        }
        ab[e] = a;
        ab[SSIM_S * SSIM_S + e] = b;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int e = lid; e < SSIM_S * SSIM_T; e += SSIM_T * SSIM_T) {
        int r = e / SSIM_T, col = e - r * SSIM_T;
        __local const float *ra = ab + r * SSIM_S + col, *rb = ra + SSIM_S * SSIM_S;
        float s[5] = {0.f, 0.f, 0.f, 0.f, 0.f};
        for (int k = 0; k < 11; k++) {
            float w = GAUSS11[k], a = ra[k], b = rb[k];
            s[0] += w * a; s[1] += w * b; s[2] += w * a * a; s[3] += w * b * b; s[4] += w * a * b;
        }
        for (int q = 0; q < 5; q++) hm[q * SSIM_S * SSIM_T + e] = s[q];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = x0 + SSIM_R + lx, y = y0 + SSIM_R + ly;
    float4 acc = (float4)(0.f);
    if (x < W && y < H) {
        size_t n3 = (size_t)3 * W * H;
        float m[5] = {0.f, 0.f, 0.f, 0.f, 0.f};
        for (int k = 0; k < 11; k++)
            for (int q = 0; q < 5; q++) m[q] += GAUSS11[k] * hm[q * SSIM_S * SSIM_T + (ly + k) * SSIM_T + lx];
        float mu1 = m[0], mu2 = m[1];
        float s11 = m[2] - mu1 * mu1, s22 = m[3] - mu2 * mu2, s12 = m[4] - mu1 * mu2;
        float A1 = 2.f * mu1 * mu2 + SSIM_C1, A2 = 2.f * s12 + SSIM_C2;
        float B1 = mu1 * mu1 + mu2 * mu2 + SSIM_C1, B2 = s11 + s22 + SSIM_C2;
        float S = (A1 * A2) / (B1 * B2);
        size_t o = plane + (size_t)y * W + x;
        int li = (ly + SSIM_R) * SSIM_S + lx + SSIM_R;
        float a = ab[li], b = ab[SSIM_S * SSIM_S + li], wt = gt_weight(gt, gt_off, gt_ch, W, x, y);
        acc = (float4)(fabs(a - b), (a - b) * (a - b), S * wt, wt);
        if (want_grad) {
            dL_dssim *= wt;
            float dm1 = (2.f * mu2 * A2 - 2.f * mu2 * A1) / (B1 * B2) - S * (2.f * mu1 / B1 - 2.f * mu1 / B2);
            float de11 = -S / B2;
            float de12 = 2.f * A1 / (B1 * B2);
            dmap3[o] = dL_dssim * dm1;
            dmap3[n3 + o] = dL_dssim * de11;
            dmap3[2 * n3 + o] = dL_dssim * de12;
        }
    }
    red[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = SSIM_T * SSIM_T / 2; s > 0; s >>= 1) {
        if (lid < s) red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        size_t g = ((size_t)get_group_id(2) * get_num_groups(1) + get_group_id(1)) * get_num_groups(0) + get_group_id(0);
        partials[g] = red[0];
    }
}

/* The backward: both blurs of the 3 derivative maps, then with L1:
 * v_img = m (G*dm1 + 2 x G*de11 + y G*de12 + (1-lambda) sign(x-y) / (3HW)),
 * x the weighted render, m the weight (1 without one) */
__kernel __attribute__((reqd_work_group_size(SSIM_T, SSIM_T, 1)))
void ssim_bwd(__global const float *dmap3, __global const float *img, __global const uchar *gt, uint gt_off,
              int gt_ch, int W, int H, float dL_dl1, __global float *v_img)
{
    __local float d[3 * SSIM_S * SSIM_S];
    __local float hd[3 * SSIM_S * SSIM_T];
    int lx = get_local_id(0), ly = get_local_id(1), lid = ly * SSIM_T + lx, c = get_global_id(2);
    int x0 = (int)get_group_id(0) * SSIM_T - SSIM_R, y0 = (int)get_group_id(1) * SSIM_T - SSIM_R;
    size_t n3 = (size_t)3 * W * H, plane = (size_t)c * W * H;
    for (int e = lid; e < SSIM_S * SSIM_S; e += SSIM_T * SSIM_T) {
        int X = x0 + e % SSIM_S, Y = y0 + e / SSIM_S;
        int in = X >= 0 && X < W && Y >= 0 && Y < H;
        size_t o = plane + (size_t)(in ? Y : 0) * W + (in ? X : 0);
        for (int q = 0; q < 3; q++) d[q * SSIM_S * SSIM_S + e] = in ? dmap3[q * n3 + o] : 0.f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    blur_rows3(d, hd, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = x0 + SSIM_R + lx, y = y0 + SSIM_R + ly;
    if (x >= W || y >= H) return;
    float s[3] = {0.f, 0.f, 0.f};
    for (int k = 0; k < 11; k++)
        for (int q = 0; q < 3; q++) s[q] += GAUSS11[k] * hd[q * SSIM_S * SSIM_T + (ly + k) * SSIM_T + lx];
    size_t o = plane + (size_t)y * W + x;
    float b = load_gt(gt, gt_off, gt_ch, W, x, y, c), wt = gt_weight(gt, gt_off, gt_ch, W, x, y);
    float a = weighted_render(img[o], b, wt, gt_ch);
    float sgn = a > b ? 1.f : a < b ? -1.f : 0.f;
    float g = s[0] + 2.f * a * s[1] + b * s[2] + dL_dl1 * sgn;
    v_img[o] = gt_ch == 4 ? wt * g : g;
}

/* sums partials into out[slot] (one work-group) */
__kernel void reduce_partials(__global const float4 *partials, uint n, __global float4 *out, uint slot)
{
    __local float4 red[256];
    int lid = get_local_id(0);
    float4 a = (float4)(0.f);
    for (uint i = lid; i < n; i += get_local_size(0)) a += partials[i];
    red[lid] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (lid < s) red[lid] += red[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[slot] = red[0];
}
