/* densify.cl: graphdeco adaptive density control on the device: gradient statistics, clone /
 * split classification, appending new rows, prune flags, row compaction, opacity reset, and
 * the mip-splatting 3D filter. stats (N, 3): grad accum | views | max radius. */
enum { D_KEEP = 0, D_CLONE = 1, D_SPLIT = 2 };

/* gradient w.r.t. the NDC mean = pixel gradient * (W/2, H/2) */
__kernel void densify_stats(int n, __global const int *radii, __global const float *v_2d, int W, int H,
                            __global float *stats)
{
    int i = get_global_id(0);
    if (i >= n || radii[i] <= 0) return;
    float gx = v_2d[(size_t)i * CS_V2D_W + CS_V2D_MEAN] * 0.5f * W, gy = v_2d[(size_t)i * CS_V2D_W + CS_V2D_MEAN + 1] * 0.5f * H;
    stats[i * 3 + 0] += sqrt(gx * gx + gy * gy);
    stats[i * 3 + 1] += 1.f;
    stats[i * 3 + 2] = max(stats[i * 3 + 2], (float)radii[i]);
}

/* flags: D_CLONE (count 1) for small, D_SPLIT (count 2) for large Gaussians whose mean
 * accumulated gradient reaches the threshold */
__kernel void densify_classify(int n, __global const float *geo, __global const float *stats, float threshold,
                               float clone_max_scale, __global uint *flags, __global uint *counts)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float denom = stats[i * 3 + 1];
    float g = denom > 0.f ? stats[i * 3] / denom : 0.f;
    uint f = D_KEEP, c = 0;
    if (g >= threshold) {
        __global const float *r = geo + (size_t)i * CS_GEO_W;
        float ms = exp(max(r[CS_GEO_LOG_SCALE], max(r[CS_GEO_LOG_SCALE + 1], r[CS_GEO_LOG_SCALE + 2])));
        if (ms <= clone_max_scale) f = D_CLONE, c = 1;
        else f = D_SPLIT, c = 2;
    }
    flags[i] = f;
    counts[i] = c;
}

/* The error score (densify.error_views): V_IMG (3, H, W) is 1 on the pixels of the render
 * IMG (3, H, W) whose mean absolute colour error against GT (8-bit, GT_CH a pixel at GT_OFF; a
 * weight channel's 0 pixels never count) is above THRESHOLD, else 0. The rasterizer's backward
 * of that mask gives each Gaussian's blend weight summed over those pixels (its colour row of
 * v_2d), which error_score_add accumulates over the scored views. */
__kernel void error_mask(__global const float *img, __global const uchar *gt, uint gt_off, int gt_ch, int W, int H,
                         float threshold, __global float *v_img)
{
    int i = get_global_id(0);
    if (i >= W * H) return;
    size_t plane = (size_t)W * H;
    __global const uchar *g = gt + gt_off + (size_t)i * gt_ch;
    float e = 0.f;
    for (int c = 0; c < 3; c++) e += fabs(img[c * plane + i] - g[c] * (1.f / 255.f));
    float m = e * (1.f / 3.f) > threshold && (gt_ch < 4 || g[3] > 0) ? 1.f : 0.f;
    for (int c = 0; c < 3; c++) v_img[c * plane + i] = m;
}

/* score[i] += Gaussian i's blend weight over the masked pixels of the view just scored */
__kernel void error_score_add(int n, __global const int *radii, __global const float *v_2d, __global float *score)
{
    int i = get_global_id(0);
    if (i >= n || radii[i] <= 0) return;
    score[i] += v_2d[(size_t)i * CS_V2D_W + CS_V2D_RGB];
}

/* densify_classify's flags grown by the error score: a Gaussian the gradient rule keeps whose
 * score, averaged over VIEWS views, reaches THRESHOLD is cloned (small) or split (large) as the
 * gradient rule does */
__kernel void densify_score_flags(int n, __global const float *geo, __global const float *score, float views,
                                  float threshold, float clone_max_scale, __global uint *flags, __global uint *counts)
{
    int i = get_global_id(0);
    if (i >= n || flags[i] != D_KEEP || score[i] < threshold * views) return;
    __global const float *r = geo + (size_t)i * CS_GEO_W;
    float ms = exp(max(r[CS_GEO_LOG_SCALE], max(r[CS_GEO_LOG_SCALE + 1], r[CS_GEO_LOG_SCALE + 2])));
    uint f = ms <= clone_max_scale ? D_CLONE : D_SPLIT;
    flags[i] = f;
    counts[i] = f == D_CLONE ? 1 : 2;
}

/* src_of[offsets[i] + c] = i for each new row c of a cloned (1) or split (2) parent: the new
 * row n + offsets[i] + c is made from row i (model.c's cs_model_new_rows copies it) */
__kernel void densify_list_new(int n, __global const uint *flags, __global const uint *offsets, __global uint *src_of)
{
    int i = get_global_id(0);
    if (i >= n || flags[i] == D_KEEP) return;
    int copies = flags[i] == D_CLONE ? 1 : 2;
    for (int c = 0; c < copies; c++) src_of[offsets[i] + c] = (uint)i;
}

/* The split rule, on the children rows n + offsets[i] + c that were copied from their parent
 * i: each samples the parent's Gaussian for its mean and takes scale / 1.6. */
__kernel void densify_split(int n, __global float *geo, __global const uint *flags, __global const uint *offsets,
                            uint seed)
{
    int i = get_global_id(0);
    if (i >= n || flags[i] != D_SPLIT) return;
    __global const float *src = geo + (size_t)i * CS_GEO_W;
    float4 q = (float4)(src[CS_GEO_QUAT], src[CS_GEO_QUAT + 1], src[CS_GEO_QUAT + 2], src[CS_GEO_QUAT + 3]);
    q /= max(length(q), 1e-12f);
    float R[9];
    quat_to_rot(q, R);
    for (int c = 0; c < 2; c++) {
        size_t row = (size_t)n + offsets[i] + c;
        __global float *dst = geo + row * CS_GEO_W;
        __global const float *ls = src + CS_GEO_LOG_SCALE;
        float3 s = exp((float3)(ls[0], ls[1], ls[2]));
        float3 z = (float3)(rand_normal(seed, (uint)i, (uint)(c * 3 + 0)) * s.x,
                            rand_normal(seed, (uint)i, (uint)(c * 3 + 1)) * s.y,
                            rand_normal(seed, (uint)i, (uint)(c * 3 + 2)) * s.z);
        __global const float *mu = src + CS_GEO_MEAN;
        for (int a = 0; a < 3; a++)
            dst[CS_GEO_MEAN + a] = mu[a] + R[a * 3] * z.x + R[a * 3 + 1] * z.y + R[a * 3 + 2] * z.z;
        const float l16 = 0.47000362924573558f; /* log(1.6) */
        for (int a = 0; a < 3; a++) dst[CS_GEO_LOG_SCALE + a] = ls[a] - l16;
    }
}

/* keep = not a split parent, opacity >= min_opacity, and (when check_size) not too large on
 * screen or in the world */
__kernel void densify_prune_flags(int n_total, int n_old, __global const float *geo, __global const float *stats,
                                  __global const uint *flags, float min_opacity, int check_size, float max_screen,
                                  float max_world, __global uint *keep)
{
    int i = get_global_id(0);
    if (i >= n_total) return;
    __global const float *r = geo + (size_t)i * CS_GEO_W;
    uint k = 1;
    if (i < n_old && flags[i] == D_SPLIT) k = 0;
    if (sigmoidf(r[CS_GEO_LOGIT_OPACITY]) < min_opacity) k = 0;
    if (check_size) {
        float maxr = i < n_old ? stats[i * 3 + 2] : 0.f;
        if (max_screen > 0.f && maxr > max_screen) k = 0;
        if (exp(max(r[CS_GEO_LOG_SCALE], max(r[CS_GEO_LOG_SCALE + 1], r[CS_GEO_LOG_SCALE + 2]))) > max_world) k = 0;
    }
    keep[i] = k;
}

/* DECAY 0: opacity <- min(opacity, 0.01); DECAY in (0, 1): opacity <- opacity * DECAY where that
 * stays at least 1/255, else unchanged (with the 3D filter: of the filtered opacity). The
 * optimizer's state of the column is zeroed by the schema (cs_model_zero_state_column). */
__kernel void densify_reset_opacity(int n, __global float *geo, __global const float *filter3d, float decay)
{
    int i = get_global_id(0);
    if (i >= n) return;
    size_t o = (size_t)i * CS_GEO_W + CS_GEO_LOGIT_OPACITY;
    float op = sigmoidf(geo[o]);
    float c3 = 1.f;
#if FILTER_3D
    {
        float f2 = filter3d[i] * filter3d[i];
        float3 s2 = exp(2.f * (float3)(geo[i * CS_GEO_W + CS_GEO_LOG_SCALE], geo[i * CS_GEO_W + CS_GEO_LOG_SCALE + 1], geo[i * CS_GEO_W + CS_GEO_LOG_SCALE + 2]));
        c3 = sqrt((s2.x * s2.y * s2.z) / ((s2.x + f2) * (s2.y + f2) * (s2.z + f2)));
    }
#else
    (void)filter3d;
#endif
    float eff = op * c3;
    float target = (decay > 0.f ? (eff * decay >= 1.f / 255.f ? eff * decay : eff) : min(eff, 0.01f)) / c3;
    target = clamp(target, 1e-7f, 1.f - 1e-7f);
    geo[o] = log(target / (1.f - target));
}

/* mip-splatting 3D filter, pass 1: nearest depth over training cameras that see the mean
 * (z > 0.2 and inside the image with a 15% margin), or -1 when none; the largest such depth
 * via atomic_max on the bits of a positive float.
 * cams: (C, 20) R (9) | t (3) | fx fy cx cy | W H | pad */
#define CAM_W 20
__kernel void filter3d_depth(int n, __global const float *geo, __global const float *cams, int ncams,
                             __global float *dist, volatile __global uint *max_bits)
{
    int i = get_global_id(0);
    if (i >= n) return;
    __global const float *mu = geo + (size_t)i * CS_GEO_W + CS_GEO_MEAN;
    float3 p = (float3)(mu[0], mu[1], mu[2]);
    float best = INFINITY;
    for (int c = 0; c < ncams; c++) {
        __global const float *k = cams + c * CAM_W;
        float z = k[6] * p.x + k[7] * p.y + k[8] * p.z + k[11];
        if (z <= NEAR_PLANE) continue;
        float x = (k[0] * p.x + k[1] * p.y + k[2] * p.z + k[9]) / z * k[12] + k[14];
        float y = (k[3] * p.x + k[4] * p.y + k[5] * p.z + k[10]) / z * k[13] + k[15];
        float Wc = k[16], Hc = k[17];
        if (x < -0.15f * Wc || x > 1.15f * Wc || y < -0.15f * Hc || y > 1.15f * Hc) continue;
        best = min(best, z);
    }
    if (best < INFINITY) {
        dist[i] = best;
        atomic_max(max_bits, as_uint(best));
    } else {
        dist[i] = -1.f;
    }
}

/* pass 2: filter = depth / max focal * sqrt(0.2), unseen Gaussians take the largest depth */
__kernel void filter3d_finish(int n, __global const float *dist, __global const uint *max_bits, float focal,
                              __global float *filter3d)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float d = dist[i];
    if (d < 0.f) d = as_float(max_bits[0]);
    filter3d[i] = d / focal * 0.4472135954999579f;
}
