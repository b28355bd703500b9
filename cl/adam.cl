/* adam.cl: Adam (Kingma & Ba; torch semantics: bias-corrected, eps outside the sqrt) over
 * the geometry rows (N, 11) with per-column learning rates, and over SH rows (N, K*3) with
 * DC / rest learning rates. SH may be stored as half (rounded to nearest even on store). */

__kernel void adam_geo(uint n_elems, __global float *geo, __global const float *v_geo, __global float *m,
                       __global float *v, float lr_mean, float lr_scale, float lr_rot, float lr_opac, float b1, float b2,
                       float eps, float bc1, float bc2)
{
    size_t i = get_global_id(0);
    if (i >= n_elems) return;
    int col = (int)(i % GEO_W);
    float lr = col < 3 ? lr_mean : col < 6 ? lr_scale : col < 10 ? lr_rot : lr_opac;
    float g = v_geo[i];
    float mi = b1 * m[i] + (1.f - b1) * g;
    float vi = b2 * v[i] + (1.f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    geo[i] -= lr * (mi / bc1) / (sqrt(vi / bc2) + eps);
}

__kernel void adam_sh(uint n_elems, __global sh_t *sh, __global const float *v_sh, __global float *m, __global float *v,
                      float lr_dc, float lr_rest, float b1, float b2, float eps, float bc1, float bc2)
{
    size_t i = get_global_id(0);
    if (i >= n_elems) return;
    float lr = (i % (SH_K * 3)) < 3 ? lr_dc : lr_rest;
    float g = v_sh[i];
    float mi = b1 * m[i] + (1.f - b1) * g;
    float vi = b2 * v[i] + (1.f - b2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float p = SH_LOAD(sh, i) - lr * (mi / bc1) / (sqrt(vi / bc2) + eps);
    SH_STORE(sh, i, p);
}

/* capability check for the float-atomics path: every work-item adds 1 to out[0] */
__kernel void atomics_selftest(__global float *out)
{
    atomic_add_global_f(out, 1.0f);
}
