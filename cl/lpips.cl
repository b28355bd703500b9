/* lpips.cl: the LPIPS metric (AlexNet features, v0.1 lin layers; ../shared/lpips/README.md)
 * in fp32: input scaling, convolution + ReLU as a tiled implicit GEMM, 3x3/2 max-pool, and per
 * layer the channel-normalised squared difference weighted by the lin layer, summed over the
 * positions in per-group partials. All weights live in one buffer W, addressed by offsets
 * (floats). Activations are planar (C, H, W). */

/* 8-bit interleaved pixels of CH channels (RGB first) at byte OFF (x / 127.5 - 1), then
 * (x - shift) / scale; W holds shift (3) and scale (3) at 0 */
__kernel void lpips_prep_u8(__global const uchar *src, uint off, int ch, int n, __global const float *w,
                            __global float *out)
{
    int i = get_global_id(0);
    if (i >= n) return;
    for (int c = 0; c < 3; c++)
        out[c * n + i] = ((float)src[off + (size_t)i * ch + c] / 127.5f - 1.f - w[c]) / w[3 + c];
}

/* a planar float image in [0, 1] (clamped first, as the evaluation's other metrics); with a
 * weighted ground truth GT (GT_CH 4: RGB and a weight m), blended as m x + (1 - m) gt, as the
 * loss and the other metrics see it (ssim.cl) */
__kernel void lpips_prep_f32(__global const float *src, int n, __global const uchar *gt, uint gt_off, int gt_ch,
                             __global const float *w, __global float *out)
{
    int i = get_global_id(0);
    if (i >= n) return;
    for (int c = 0; c < 3; c++) {
        float x = clamp(src[c * n + i], 0.f, 1.f);
        if (gt_ch == 4) {
            float m = gt[gt_off + (size_t)i * 4 + 3] * (1.f / 255.f), b = gt[gt_off + (size_t)i * 4 + c] * (1.f / 255.f);
            x = b + m * (x - b);
        }
        out[c * n + i] = (x * 2.f - 1.f - w[c]) / w[3 + c];
    }
}

/* out (COUT, HO, WO) = relu(bias + conv(in (CIN, H, WI), weights (COUT, CIN, KH, KW))):
 * M = COUT rows by N = HO * WO columns, K = CIN * KH * KW deep. A (16, 16) group computes a
 * CS_LPIPS_TM x CS_LPIPS_TN block, each work-item 4 x 4 of it, CS_LPIPS_TK deep per step
 * through local tiles (weights, and the input patch gathered on the fly). */
__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void lpips_conv(__global const float *in, int cin, int h, int wi, __global const float *w, int w_off, int b_off,
                int cout, int kh, int kw, int stride, int pad, __global float *out, int ho, int wo)
{
    __local float as[CS_LPIPS_TK][CS_LPIPS_TM + 1], bs[CS_LPIPS_TK][CS_LPIPS_TN + 1];
    int lx = get_local_id(0), ly = get_local_id(1), tid = ly * 16 + lx;
    int m0 = get_group_id(1) * CS_LPIPS_TM, n0 = get_group_id(0) * CS_LPIPS_TN;
    int khw = kh * kw, K = cin * khw, N = ho * wo;
    __global const float *wt = w + w_off;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = 0.f;
    for (int k0 = 0; k0 < K; k0 += CS_LPIPS_TK) {
        for (int r = 0; r < 4; r++) { /* weights: 16 consecutive k of one row per 16 items */
            int e = tid + 256 * r, m = e >> 4, kk = e & 15, gm = m0 + m, gk = k0 + kk;
            as[kk][m] = gm < cout && gk < K ? wt[(size_t)gm * K + gk] : 0.f;
        }
        for (int r = 0; r < 4; r++) { /* input patch: 64 consecutive output positions per k */
            int e = tid + 256 * r, kk = e >> 6, n = e & 63, gk = k0 + kk, gn = n0 + n;
            float v = 0.f;
            if (gk < K && gn < N) {
                int c = gk / khw, rem = gk - c * khw, ky = rem / kw, kx = rem - ky * kw;
                int oy = gn / wo, ox = gn - oy * wo;
                int iy = oy * stride - pad + ky, ix = ox * stride - pad + kx;
                if (iy >= 0 && iy < h && ix >= 0 && ix < wi) v = in[((size_t)c * h + iy) * wi + ix];
            }
            bs[kk][n] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int kk = 0; kk < CS_LPIPS_TK; kk++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++) a[i] = as[kk][ly + 16 * i], b[i] = bs[kk][lx + 16 * i];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (int i = 0; i < 4; i++) {
        int gm = m0 + ly + 16 * i;
        if (gm >= cout) continue;
        float bias = w[b_off + gm];
        for (int j = 0; j < 4; j++) {
            int gn = n0 + lx + 16 * j;
            if (gn < N) out[(size_t)gm * N + gn] = max(acc[i][j] + bias, 0.f);
        }
    }
}

/* 3x3 stride-2 max-pool without padding: (C, H, W) -> (C, HO, WO) */
__kernel void lpips_maxpool(__global const float *in, int c, int h, int wi, __global float *out, int ho, int wo)
{
    int i = get_global_id(0);
    if (i >= c * ho * wo) return;
    int ch = i / (ho * wo), p = i - ch * ho * wo, oy = p / wo, ox = p - oy * wo;
    __global const float *s = in + ((size_t)ch * h + oy * 2) * wi + ox * 2;
    float m = s[0];
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 3; x++) m = max(m, s[y * wi + x]);
    out[i] = m;
}

/* per position p: sum_c lin[c] (a_c / (|a| + 1e-10) - b_c / (|b| + 1e-10))^2, summed over
 * each group's positions into partial[part_off + group] */
__kernel __attribute__((reqd_work_group_size(CS_LPIPS_WG, 1, 1)))
void lpips_distance(__global const float *a, __global const float *b, int c, int n, __global const float *w, int lin_off,
                    __global float *partial, int part_off)
{
    __local float s[CS_LPIPS_WG];
    int p = get_global_id(0), l = get_local_id(0);
    float d = 0.f;
    if (p < n) {
        float na = 0.f, nb = 0.f;
        for (int k = 0; k < c; k++) {
            float x = a[(size_t)k * n + p], y = b[(size_t)k * n + p];
            na += x * x, nb += y * y;
        }
        na = 1.f / (sqrt(na) + 1e-10f), nb = 1.f / (sqrt(nb) + 1e-10f);
        for (int k = 0; k < c; k++) {
            float t = a[(size_t)k * n + p] * na - b[(size_t)k * n + p] * nb;
            d += w[lin_off + k] * t * t;
        }
    }
    s[l] = d;
    for (int h = CS_LPIPS_WG / 2; h > 0; h >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < h) s[l] += s[l + h];
    }
    if (l == 0) partial[part_off + get_group_id(0)] = s[0];
}

/* The same convolution for CPU devices, where local-memory tiles and barriers cost more than
 * they save and compilers vectorise explicit vector types, not work-items with loops inside:
 * a work-item computes 8 consecutive output positions of a row (one float8) for
 * CS_LPIPS_CPB output channels. Global size (row blocks, HO, channel blocks). */
__kernel void lpips_conv_direct(__global const float *in, int cin, int h, int wi, __global const float *w, int w_off,
                                int b_off, int cout, int kh, int kw, int stride, int pad, __global float *out, int ho,
                                int wo)
{
    int xb = get_global_id(0), oy = get_global_id(1), o0 = get_global_id(2) * CS_LPIPS_CPB;
    if (xb * 8 >= wo || oy >= ho || o0 >= cout) return;
    int ox0 = xb * 8, nv = min(8, wo - ox0), no = min(CS_LPIPS_CPB, cout - o0), K = cin * kh * kw;
    __global const float *wt = w + w_off + (size_t)o0 * K;
    float8 acc[CS_LPIPS_CPB];
    for (int j = 0; j < CS_LPIPS_CPB; j++) acc[j] = (float8)(0.f);
    for (int c = 0; c < cin; c++)
        for (int ky = 0; ky < kh; ky++) {
            int iy = oy * stride - pad + ky;
            if (iy < 0 || iy >= h) continue;
            __global const float *row = in + ((size_t)c * h + iy) * wi;
            for (int kx = 0; kx < kw; kx++) {
                int ix0 = ox0 * stride - pad + kx, k = (c * kh + ky) * kw + kx;
                float8 v;
                if (stride == 1 && ix0 >= 0 && ix0 + 7 < wi) {
                    v = vload8(0, row + ix0);
                } else {
                    float t[8];
                    for (int i = 0; i < 8; i++) {
                        int ix = ix0 + i * stride;
                        t[i] = i < nv && ix >= 0 && ix < wi ? row[ix] : 0.f;
                    }
                    v = vload8(0, t);
                }
                for (int j = 0; j < CS_LPIPS_CPB; j++) acc[j] = fma((float8)(wt[(size_t)min(j, no - 1) * K + k]), v, acc[j]);
            }
        }
    for (int j = 0; j < no; j++) {
        float r[8], b = w[b_off + o0 + j];
        vstore8(acc[j], 0, r);
        __global float *o = out + (size_t)(o0 + j) * ho * wo + (size_t)oy * wo + ox0;
        for (int i = 0; i < nv; i++) o[i] = max(r[i] + b, 0.f);
    }
}
