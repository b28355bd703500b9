/* mcmc.cl: 3DGS as Markov Chain Monte Carlo (Kheradmand et al. 2024; gsplat's MCMCStrategy):
 * sampling rows in proportion to opacity, relocating dead rows onto the samples and adding new
 * ones with the paper's opacity and scale correction, the opacity-gated position noise, and the
 * gradients of the opacity and scale L1 regularisers.
 * Sampling is exact in two levels, so float sums stay precise at millions of rows: a block of
 * CS_SORT_BLOCK rows keeps the inclusive scan of its weights, the block totals their own scan;
 * a sample finds its block by binary search, then its row inside the block. */

/* weights: opacity of rows above MIN_OP (with DEAD: dead[i] = 1 for the others, whose weight is
   0); without DEAD every row counts */
__kernel void mcmc_weights(int n, __global const float *geo, float min_op, int mark_dead, __global float *w,
                           __global uint *dead)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float o = sigmoidf(geo[(size_t)i * CS_GEO_W + CS_GEO_LOGIT_OPACITY]);
    int is_dead = mark_dead && o <= min_op;
    w[i] = is_dead ? 0.f : o;
    if (mark_dead) dead[i] = (uint)is_dead;
}

/* inclusive scan of one float per item over CS_SORT_WG items, in a fixed order */
inline float wg_scan_inclusive_f(float v, __local float *buf)
{
    int lid = get_local_id(0);
    buf[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int off = 1; off < CS_SORT_WG; off <<= 1) {
        float add = lid >= off ? buf[lid - off] : 0.f;
        barrier(CLK_LOCAL_MEM_FENCE);
        buf[lid] += add;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    float r = buf[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* cdf: the inclusive scan of w inside each block of CS_SORT_BLOCK rows; sums: block totals */
__kernel void mcmc_block_cdf(int n, __global const float *w, __global float *cdf, __global float *sums)
{
    __local float buf[CS_SORT_WG];
    int lid = get_local_id(0);
    size_t base = (size_t)get_group_id(0) * CS_SORT_BLOCK + (size_t)lid * CS_SORT_IPT;
    float v[CS_SORT_IPT], sum = 0.f;
    for (int k = 0; k < CS_SORT_IPT; k++) {
        v[k] = base + k < (size_t)n ? w[base + k] : 0.f;
        sum += v[k];
    }
    float run = wg_scan_inclusive_f(sum, buf) - sum;
    for (int k = 0; k < CS_SORT_IPT; k++) {
        run += v[k];
        if (base + k < (size_t)n) cdf[base + k] = run;
    }
    if (lid == CS_SORT_WG - 1) sums[get_group_id(0)] = run;
}

/* the inclusive scan of NB block totals in place, by one work-group of CS_SORT_WG items */
__kernel void mcmc_sums_cdf(int nb, __global float *sums)
{
    __local float buf[CS_SORT_WG];
    int lid = get_local_id(0);
    int per = (nb + CS_SORT_WG - 1) / CS_SORT_WG, lo = lid * per, hi = min(lo + per, nb);
    float sum = 0.f;
    for (int j = lo; j < hi; j++) sum += sums[j];
    float run = wg_scan_inclusive_f(sum, buf) - sum;
    for (int j = lo; j < hi; j++) {
        run += sums[j];
        sums[j] = run;
    }
}

/* first index in [lo, hi) whose value exceeds u (hi - 1 when none does) */
inline int search_above(__global const float *a, int lo, int hi, float u)
{
    int end = hi;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (a[mid] > u) hi = mid;
        else lo = mid + 1;
    }
    return lo < end ? lo : end - 1;
}

/* out[s] = a row drawn in proportion to w (n_samples draws, with replacement); counts[row]++ */
__kernel void mcmc_sample(int n_samples, uint seed, int n, __global const float *w, __global const float *cdf,
                          __global const float *sums, int nb, __global uint *out, volatile __global uint *counts)
{
    int s = get_global_id(0);
    if (s >= n_samples) return;
    float total = sums[nb - 1];
    float u = rand_uniform(seed, (uint)s, 0u) * total;
    int b = search_above(sums, 0, nb, u);
    float before = b > 0 ? sums[b - 1] : 0.f;
    int lo = b * CS_SORT_BLOCK, hi = min(lo + CS_SORT_BLOCK, n);
    /* the block's own total can round below u - before: stay inside its last positive weight */
    float ub = min(u - before, nextafter(cdf[hi - 1], 0.f));
    int row = search_above(cdf, lo, hi, max(ub, 0.f));
    /* a work-item's first cdf value starts from the group's scan, not from its neighbour's last
       sum, so rounding can give a row of weight 0 a sliver of its own: such a draw goes to the
       next row with weight, or else the last one before it (never to a dead row, which the
       relocation is overwriting at the same time) */
    if (!(w[row] > 0.f)) {
        int r = row;
        while (r + 1 < n && !(w[r] > 0.f)) r++;
        while (r > 0 && !(w[r] > 0.f)) r--;
        row = r;
    }
    out[s] = (uint)row;
    atomic_inc(&counts[row]);
}

/* The paper's correction for a Gaussian that becomes N = min(copies + 1, CS_MCMC_NMAX) of
   itself: opacity 1 - (1 - o)^(1/N), scale s * o / sum_{i=1..N} sum_{k=0..i-1} C(i-1, k)
   (-1)^k o'^(k+1) / sqrt(k+1), so that the copies together render as the original did.
   Applied to every sampled row (opacity clamped to [min_op, 1 - eps]); mcmc.c resets the
   row's optimizer state. */
__kernel void mcmc_update_sources(int n, __global float *geo, __global const uint *counts, float min_op)
{
    int i = get_global_id(0);
    if (i >= n || counts[i] == 0) return;
    int copies = (int)min(counts[i] + 1u, (uint)CS_MCMC_NMAX);
    __global float *r = geo + (size_t)i * CS_GEO_W;
    float o = sigmoidf(r[CS_GEO_LOGIT_OPACITY]);
    float on = 1.f - pow(1.f - o, 1.f / (float)copies);
    float denom = 0.f;
    for (int a = 1; a <= copies; a++) {
        float binom = 1.f, p = on; /* C(a-1, k), on^(k+1) */
        for (int k = 0; k < a; k++) {
            denom += binom * ((k & 1) ? -1.f : 1.f) * p * rsqrt((float)(k + 1));
            binom = binom * (float)(a - 1 - k) / (float)(k + 1);
            p *= on;
        }
    }
    float coeff = o / denom;
    float onc = clamp(on, min_op, 1.f - 1.1920929e-7f);
    r[CS_GEO_LOGIT_OPACITY] = log(onc / (1.f - onc));
    for (int a = 0; a < 3; a++) r[CS_GEO_LOG_SCALE + a] += log(coeff);
}

/* dead[i] = 1 rows, listed in order: list[offsets[i]] = i */
__kernel void mcmc_list_dead(int n, __global const uint *dead, __global const uint *offsets, __global uint *list)
{
    int i = get_global_id(0);
    if (i < n && dead[i]) list[offsets[i]] = (uint)i;
}

/* mean += scale * sigmoid(-100 (o - 0.005)) * Sigma z, z ~ N(0, I), Sigma = R S^2 R^T (the
   covariance itself, as the paper's code and gsplat use it) */
__kernel void mcmc_noise(int n, __global float *geo, float scale, uint seed)
{
    int i = get_global_id(0);
    if (i >= n) return;
    __global float *r = geo + (size_t)i * CS_GEO_W;
    float o = sigmoidf(r[CS_GEO_LOGIT_OPACITY]);
    float gate = 1.f / (1.f + exp(-100.f * ((1.f - o) - 0.995f)));
    if (gate * scale == 0.f) return;
    float4 q = (float4)(r[CS_GEO_QUAT], r[CS_GEO_QUAT + 1], r[CS_GEO_QUAT + 2], r[CS_GEO_QUAT + 3]);
    q /= max(length(q), 1e-12f);
    float R[9];
    quat_to_rot(q, R);
    float s2[3], z[3], t[3];
    for (int a = 0; a < 3; a++) {
        s2[a] = exp(2.f * r[CS_GEO_LOG_SCALE + a]);
        z[a] = rand_normal(seed, (uint)i, (uint)a) * gate * scale;
    }
    for (int a = 0; a < 3; a++) /* t = S^2 R^T z */
        t[a] = s2[a] * (R[0 * 3 + a] * z[0] + R[1 * 3 + a] * z[1] + R[2 * 3 + a] * z[2]);
    for (int a = 0; a < 3; a++) r[CS_GEO_MEAN + a] += R[a * 3] * t[0] + R[a * 3 + 1] * t[1] + R[a * 3 + 2] * t[2];
}

/* gradients of op_w * sum sigmoid(logit) + sc_w * sum exp(log_scale) (the weights carry the
   1/N and 1/3N of the means) added to v_geo */
__kernel void regularize_grad(int n, __global const float *geo, __global float *v_geo, float op_w, float sc_w)
{
    int i = get_global_id(0);
    if (i >= n) return;
    size_t r = (size_t)i * CS_GEO_W;
    float o = sigmoidf(geo[r + CS_GEO_LOGIT_OPACITY]);
    v_geo[r + CS_GEO_LOGIT_OPACITY] += op_w * o * (1.f - o);
    for (int a = 0; a < 3; a++) v_geo[r + CS_GEO_LOG_SCALE + a] += sc_w * exp(geo[r + CS_GEO_LOG_SCALE + a]);
}
