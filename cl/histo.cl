/* histo.cl: histograms of per-Gaussian quantities for TensorBoard, reduced on the device into
 * fixed-size per-group partials (CS_HISTO_GROUPS groups of CS_HISTO_WG work-items, a grid-
 * stride loop over the Gaussians), so nothing per-Gaussian crosses to the host. Quantities
 * (CS_HISTO_*): opacity, largest scale, SH-rest magnitude, the densification gradient mean. */

float histo_value(int q, int i, __global const float *geo, __global const sh_t *sh, __global const float *stats)
{
    __global const float *r = geo + (size_t)i * CS_GEO_W;
    if (q == CS_HISTO_OPACITY) return 1.f / (1.f + exp(-r[CS_GEO_LOGIT_OPACITY]));
    if (q == CS_HISTO_SCALE)
        return exp(max(r[CS_GEO_LOG_SCALE], max(r[CS_GEO_LOG_SCALE + 1], r[CS_GEO_LOG_SCALE + 2])));
    if (q == CS_HISTO_SH_REST) {
        float s = 0.f;
        for (int k = 3; k < SH_K * 3; k++) {
            float v = SH_LOAD(sh, (size_t)i * SH_K * 3 + k);
            s += v * v;
        }
        return sqrt(s);
    }
    float denom = stats[i * 3 + 1];
    return denom > 0.f ? stats[i * 3] / denom : 0.f;
}

/* part (CS_HISTO_GROUPS, 4): min, max, sum, sum of squares of each group's share */
__kernel void histo_range(int n, int q, __global const float *geo, __global const sh_t *sh,
                          __global const float *stats, __global float *part)
{
    __local float lmin[CS_HISTO_WG], lmax[CS_HISTO_WG], lsum[CS_HISTO_WG], lsq[CS_HISTO_WG];
    int l = get_local_id(0);
    float mn = INFINITY, mx = -INFINITY, s = 0.f, sq = 0.f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        float v = histo_value(q, i, geo, sh, stats);
        mn = min(mn, v), mx = max(mx, v), s += v, sq += v * v;
    }
    lmin[l] = mn, lmax[l] = mx, lsum[l] = s, lsq[l] = sq;
    for (int w = CS_HISTO_WG / 2; w > 0; w >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l < w) {
            lmin[l] = min(lmin[l], lmin[l + w]), lmax[l] = max(lmax[l], lmax[l + w]);
            lsum[l] += lsum[l + w], lsq[l] += lsq[l + w];
        }
    }
    if (l == 0) {
        __global float *p = part + get_group_id(0) * 4;
        p[0] = lmin[0], p[1] = lmax[0], p[2] = lsum[0], p[3] = lsq[0];
    }
}

/* part, after histo_range's rows: (CS_HISTO_GROUPS, CS_HISTO_BUCKETS) counts of CS_HISTO_BUCKETS equal buckets from LO
 * to HI, of the value or (LOG_SPACED) of its logarithm (LO, HI then the logarithms) */
__kernel void histo_count(int n, int q, float lo, float hi, int log_spaced, __global const float *geo,
                          __global const sh_t *sh, __global const float *stats, __global uint *part)
{
    __local uint cnt[CS_HISTO_BUCKETS];
    int l = get_local_id(0);
    part += CS_HISTO_GROUPS * 4;
    for (int b = l; b < CS_HISTO_BUCKETS; b += CS_HISTO_WG) cnt[b] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    float scale = hi > lo ? CS_HISTO_BUCKETS / (hi - lo) : 0.f;
    for (int i = get_global_id(0); i < n; i += get_global_size(0)) {
        float v = histo_value(q, i, geo, sh, stats);
        if (log_spaced) v = log(v);
        int b = (int)((v - lo) * scale);
        atomic_inc(&cnt[clamp(b, 0, CS_HISTO_BUCKETS - 1)]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int b = l; b < CS_HISTO_BUCKETS; b += CS_HISTO_WG) part[get_group_id(0) * CS_HISTO_BUCKETS + b] = cnt[b];
}
