/* adam.cl: Adam (Kingma & Ba; torch semantics: bias-corrected, eps outside the sqrt) over
 * the geometry rows (N, CS_GEO_W) with per-column learning rates, and over SH rows (N, K*3) with
 * DC / rest learning rates. SH may be stored as half (rounded to nearest even on store).
 * The moments are fp32, or with OPT_HALF 16 bits each (layout in src/model/model.h); the step
 * itself always uses the fp32 moments of this iteration. */

#if OPT_HALF
/* sqrt(v) as an unsigned float: 6 exponent bits biased by U16_BIAS, 10 mantissa bits; 0 is
   zero. Covers 2^-54 .. 2^9 (gradients far outside never occur: the loss is a pixel mean). */
#define U16_BIAS 55u
inline float u16_to_float(ushort s) { return s ? as_float(((uint)s << 13) + ((127u - U16_BIAS) << 23)) : 0.f; }
/* stochastic rounding: a uniform 13-bit value added below the kept bits before truncation */
inline ushort float_to_u16_sr(float u, uint r)
{
    int s = (int)((as_uint(u) + (r & 0x1fffu)) >> 13) - (int)((127u - U16_BIAS) << 10);
    return s <= 0 ? (ushort)0 : s > 0xffff ? (ushort)0xffff : (ushort)s;
}
#endif

/* One Adam step of element I: updates the stored moments, returns the parameter step. */
inline float adam_delta(size_t i, float g, __global mom_m_t *m, __global mom_v_t *v, float b1, float b2, float eps,
                        float bc1, float bc2, uint step)
{
#if OPT_HALF
    float u = u16_to_float(v[i]);
    float mp = vload_half(i, m) * u, vp = u * u;
#else
    float mp = m[i], vp = v[i];
#endif
    float mi = b1 * mp + (1.f - b1) * g;
    float vi = b2 * vp + (1.f - b2) * g * g;
#if OPT_HALF
    ushort us = float_to_u16_sr(sqrt(vi), hash_u32((uint)i * 0x9e3779b9u ^ hash_u32(step)));
    float uq = u16_to_float(us);
    v[i] = us;
    vstore_half_rte(uq > 0.f ? clamp(mi / uq, -65504.f, 65504.f) : 0.f, i, m);
#else
    m[i] = mi;
    v[i] = vi;
#endif
    return (mi / bc1) / (sqrt(vi / bc2) + eps);
}

/* One launch for both parameter groups: items [0, n_geo) step the geometry rows (per-column
 * learning rates), items [n_geo, n_geo + n_sh) the SH rows (DC / rest learning rates).
 * SPARSE: a row whose Gaussian the view did not see (radii <= 0) is left as it is, parameters
 * and moments (graphdeco's sparse Adam); radii is not read otherwise. */
__kernel void adam_step(uint n_geo, __global float *geo, __global const float *v_geo, __global mom_m_t *m_geo,
                        __global mom_v_t *v2_geo, uint n_sh, __global sh_t *sh, __global const float *v_sh,
                        __global mom_m_t *m_sh, __global mom_v_t *v2_sh, float lr_mean, float lr_scale, float lr_rot,
                        float lr_opac, float lr_dc, float lr_rest, float b1, float b2, float eps, float bc1, float bc2,
                        uint step, uint sparse, __global const int *radii)
{
    size_t i = get_global_id(0);
    if (i < n_geo) {
        if (sparse && radii[i / CS_GEO_W] <= 0) return;
        int col = (int)(i % CS_GEO_W);
        float lr = col < CS_GEO_LOG_SCALE ? lr_mean : col < CS_GEO_QUAT ? lr_scale : col < CS_GEO_LOGIT_OPACITY ? lr_rot : lr_opac;
        geo[i] -= lr * adam_delta(i, v_geo[i], m_geo, v2_geo, b1, b2, eps, bc1, bc2, step);
        return;
    }
    i -= n_geo;
    if (i >= n_sh || (sparse && radii[i / (SH_K * 3)] <= 0)) return;
    float lr = (i % (SH_K * 3)) < 3 ? lr_dc : lr_rest;
    float p = SH_LOAD(sh, i) - lr * adam_delta(i, v_sh[i], m_sh, v2_sh, b1, b2, eps, bc1, bc2, step ^ 0x5bd1e995u);
    SH_STORE(sh, i, p);
}
