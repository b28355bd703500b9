/* project_bwd.cl: gradients of the projection, from d/d(mean2d, conic, opacity, rgb) to the
 * parameters (means, log-scales, quaternions, logit opacity, SH). Writes every element of every
 * row once (zeros for culled Gaussians and inactive SH bands), so no clearing is needed.
 *
 * The rows leave through local memory: a work-item's row is 11 + 3K floats, and written by
 * each item on its own, a warp's stores land 44 or 12K bytes apart. Instead each item leaves a
 * slice of CS_STAGE_W columns in STAGE (an odd stride, so no bank conflicts) and the group
 * writes the slice out, consecutive work-items to consecutive addresses. STAGE holds
 * (local size) * (CS_STAGE_W + 1) floats. */

/* One slice of the group's rows, columns [col0, col0 + CS_STAGE_W) of R: after every item has
   left its values in stage, the group copies them to OUT (rows row0.. of the group, < n). */
inline void stage_out(__local float *stage, __global float *out, int R, int col0, int row0, int n)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    int wg = (int)get_local_size(0), lid = (int)get_local_id(0);
    int w = min(CS_STAGE_W, R - col0);
    for (int e = lid; e < wg * w; e += wg) {
        int r = e / w, c = e - r * w;
        if (row0 + r < n) out[(size_t)(row0 + r) * R + col0 + c] = stage[r * (CS_STAGE_W + 1) + c];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The colour's part: V_RGB (the clamped channels zeroed) to the SH row, returned as the basis B
   (zero past the active bands; the row is b[k] * v_rgb[channel]) and V_RGB_OUT, and the view
   direction's gradient on the mean, returned. */
inline float3 grad_colour(int i, const proj_t *P, __global const sh_t *sh, float16 cam, int active_degree, uint cm,
                          float3 v_rgb, float b[16], float v_rgb_out[3])
{
    if (cm & 1u) v_rgb.x = 0.f;
    if (cm & 2u) v_rgb.y = 0.f;
    if (cm & 4u) v_rgb.z = 0.f;
    v_rgb_out[0] = v_rgb.x;
    v_rgb_out[1] = v_rgb.y;
    v_rgb_out[2] = v_rgb.z;
    float3 dvec = P->p - (float3)(cam.sc, cam.sd, cam.se);
    float dlen = length(dvec);
    float3 dir = dvec / dlen;
    sh_basis(dir, active_degree, b);
    int nk = (active_degree + 1) * (active_degree + 1);
    float3 v_dir = (float3)(0.f);
    for (int k = 1; k < nk; k++) {
        size_t o = ((size_t)i * SH_K + k) * 3;
        float3 c = (float3)(SH_LOAD(sh, o), SH_LOAD(sh, o + 1), SH_LOAD(sh, o + 2));
        v_dir += dot(c, v_rgb) * sh_basis_grad(dir, k);
    }
    return (v_dir - dir * dot(dir, v_dir)) / dlen;
}

/* conic = inverse(cov2d): dL/dcov = -K G K with G the symmetric conic gradient (VA, VB, VC the
   conic's a, b, c); with ANTIALIAS the opacity factor c2 = sqrt(det0 / det) adds V_C2's share.
   Returns the gradient of cov2d's (a, b, c). */
inline float3 grad_cov2d(const proj_t *P, float va, float vb, float vc, float v_c2)
{
    float ka = P->c / P->det, kb = -P->b / P->det, kc = P->a / P->det;
    float g00 = va, g01 = 0.5f * vb, g11 = vc;
    /* (K G K) entries for symmetric K = [[ka kb][kb kc]] */
    float m00 = ka * g00 + kb * g01, m01 = ka * g01 + kb * g11;
    float m10 = kb * g00 + kc * g01, m11 = kb * g01 + kc * g11;
    float3 v = (float3)(-(m00 * ka + m01 * kb), -2.f * (m00 * kb + m01 * kc), -(m10 * kb + m11 * kc));
#if ANTIALIAS == 1
    /* c2 = sqrt(det0 / det) with det0 of (a0,b0,c0), det of (a0+k, b0, c0+k) */
    float det0 = P->a0 * P->c0 - P->b0 * P->b0;
    float h = 0.5f * P->c2;
    v.x += v_c2 * h * (P->c0 / det0 - P->c / P->det);
    v.y += v_c2 * h * (-2.f * P->b0 / det0 + 2.f * P->b / P->det);
    v.z += v_c2 * h * (P->a0 / det0 - P->a / P->det);
#else
    (void)v_c2;
#endif
    return v;
}

/* cov2d = T Sigma T^T (T's rows T0, T1): from cov2d's gradient V (a, b, c) to T's rows, VT0 and
   VT1, and to Sigma, VS (symmetric 3x3, row-major). */
inline void grad_cov_T(const proj_t *P, float3 v, float3 *vT0, float3 *vT1, float VS[9])
{
    float G00 = v.x, G01 = 0.5f * v.y, G11 = v.z;
    float S[6];
    cov3d(P, S);
    float3 T0 = P->T0, T1 = P->T1;
    float3 ST0 = sym3_mul(S, T0), ST1 = sym3_mul(S, T1);
    *vT0 = 2.f * (G00 * ST0 + G01 * ST1);
    *vT1 = 2.f * (G01 * ST0 + G11 * ST1);
    /* v_Sigma = T^T G T */
    float3 GT0 = G00 * T0 + G01 * T1, GT1 = G01 * T0 + G11 * T1;
    float t0[3] = {T0.x, T0.y, T0.z}, t1[3] = {T1.x, T1.y, T1.z};
    float gt0[3] = {GT0.x, GT0.y, GT0.z}, gt1[3] = {GT1.x, GT1.y, GT1.z};
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) VS[r * 3 + c] = t0[r] * gt0[c] + t1[r] * gt1[c];
}

/* The camera-space mean's part, through T = J R_view (J's entries, clamped at limx / limy as
   the forward clamps them) and mean2d = f * t / tz + c - 0.5; returns the world-space mean's
   gradient, R_view^T v_t. */
inline float3 grad_mean(const proj_t *P, float16 cam, float4 intr, float3 vT0, float3 vT1, float2 v_xy)
{
    float3 r0 = cam_row(cam, 0), r1 = cam_row(cam, 1), r2 = cam_row(cam, 2);
    float vJ00 = dot(vT0, r0), vJ02 = dot(vT0, r2), vJ11 = dot(vT1, r1), vJ12 = dot(vT1, r2);
    float fx = intr.x, fy = intr.y, tz = P->t.z, tz2 = tz * tz, tz3 = tz2 * tz;
    float3 v_t = (float3)(0.f);
    v_t.z += -fx / tz2 * vJ00 - fy / tz2 * vJ11;
    if (P->limx != 0.f) {
        v_t.z += fx * P->limx / tz2 * vJ02;
    } else {
        v_t.x += -fx / tz2 * vJ02;
        v_t.z += 2.f * fx * P->t.x / tz3 * vJ02;
    }
    if (P->limy != 0.f) {
        v_t.z += fy * P->limy / tz2 * vJ12;
    } else {
        v_t.y += -fy / tz2 * vJ12;
        v_t.z += 2.f * fy * P->t.y / tz3 * vJ12;
    }
    v_t.x += v_xy.x * fx / tz;
    v_t.y += v_xy.y * fy / tz;
    v_t.z += -(v_xy.x * fx * P->t.x + v_xy.y * fy * P->t.y) / tz2;
    return v_t.x * r0 + v_t.y * r1 + v_t.z * r2;
}

/* Sigma = R diag(s2) R^T: from VS to the log-scales (with FILTER_3D the opacity factor c3's
   share, V_C3) and through the rotation to the normalised, then the raw quaternion; into VG. */
inline void grad_scale_rotation(const proj_t *P, const float VS[9], float v_c3, float vg[CS_GEO_W])
{
    const float *R = P->R;
    float s2v[3] = {P->s2.x, P->s2.y, P->s2.z}, s2r[3] = {P->s2raw.x, P->s2raw.y, P->s2raw.z};
    float vR[9];
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            /* (v_Sigma R)_{rc} * 2 * s2_c */
            float acc = VS[r * 3 + 0] * R[0 * 3 + c] + VS[r * 3 + 1] * R[1 * 3 + c] + VS[r * 3 + 2] * R[2 * 3 + c];
            vR[r * 3 + c] = 2.f * acc * s2v[c];
        }
    for (int c = 0; c < 3; c++) {
        /* r_c^T v_Sigma r_c */
        float rc[3] = {R[0 * 3 + c], R[1 * 3 + c], R[2 * 3 + c]};
        float vd = 0.f;
        for (int a = 0; a < 3; a++)
            for (int bb = 0; bb < 3; bb++) vd += rc[a] * VS[a * 3 + bb] * rc[bb];
#if FILTER_3D
        vd += v_c3 * P->c3 * 0.5f * (1.f / s2r[c] - 1.f / s2v[c]);
#else
        (void)v_c3;
#endif
        vg[CS_GEO_LOG_SCALE + c] = vd * 2.f * s2r[c];
    }
    float w = P->qn.x, x = P->qn.y, y = P->qn.z, z = P->qn.w;
    float4 vq;
    vq.x = 2.f * (-z * vR[1] + y * vR[2] + z * vR[3] - x * vR[5] - y * vR[6] + x * vR[7]);
    vq.y = 2.f * (y * vR[1] + z * vR[2] + y * vR[3] - 2.f * x * vR[4] - w * vR[5] + z * vR[6] + w * vR[7] - 2.f * x * vR[8]);
    vq.z = 2.f * (-2.f * y * vR[0] + x * vR[1] + w * vR[2] + x * vR[3] + z * vR[5] - w * vR[6] + z * vR[7] - 2.f * y * vR[8]);
    vq.w = 2.f * (-2.f * z * vR[0] - w * vR[1] + x * vR[2] + w * vR[3] - 2.f * z * vR[4] + y * vR[5] + x * vR[6] + y * vR[7]);
    vq = (vq - P->qn * dot(P->qn, vq)) / P->qnorm;
    vg[CS_GEO_QUAT] = vq.x;
    vg[CS_GEO_QUAT + 1] = vq.y;
    vg[CS_GEO_QUAT + 2] = vq.z;
    vg[CS_GEO_QUAT + 3] = vq.w;
}

/* The gradients of Gaussian I, visible with projection P: VG its geometry row; the SH row is
   b[k] * v_rgb[channel] (b zero past the active bands), returned as B and V_RGB. The chain runs
   backward through the forward's steps, one function each: colour, opacity (sigmoid(logit) *
   c3 * c2), conic, cov2d, the mean, Sigma. */
inline void grad_one(int i, proj_t P, __global const sh_t *sh, float16 cam, float4 intr, int active_degree,
                     __global const uint *clamped, __global const float *v_2d, float vg[CS_GEO_W], float b[16],
                     float v_rgb_out[3])
{
    __global const float *v = v_2d + (size_t)i * CS_V2D_W;
    float2 v_xy = (float2)(v[CS_V2D_MEAN], v[CS_V2D_MEAN + 1]);
    float v_op = v[CS_V2D_OPACITY];
    float3 v_rgb = (float3)(v[CS_V2D_RGB], v[CS_V2D_RGB + 1], v[CS_V2D_RGB + 2]);
    float3 v_p = grad_colour(i, &P, sh, cam, active_degree, clamped[i], v_rgb, b, v_rgb_out);

    float v_sig = v_op * P.c3 * P.c2;
    vg[CS_GEO_LOGIT_OPACITY] = v_sig * P.sig * (1.f - P.sig);
    float v_c3 = v_op * P.sig * P.c2, v_c2 = v_op * P.sig * P.c3;

    float3 v_cov = grad_cov2d(&P, v[CS_V2D_CONIC], v[CS_V2D_CONIC + 1], v[CS_V2D_CONIC + 2], v_c2);
    float3 vT0, vT1;
    float VS[9];
    grad_cov_T(&P, v_cov, &vT0, &vT1, VS);
    v_p += grad_mean(&P, cam, intr, vT0, vT1, v_xy);
    vg[CS_GEO_MEAN] = v_p.x;
    vg[CS_GEO_MEAN + 1] = v_p.y;
    vg[CS_GEO_MEAN + 2] = v_p.z;
    grad_scale_rotation(&P, VS, v_c3, vg);
}

__kernel void project_bwd(int n,
                          __global const float *geo, __global const sh_t *sh, __global const float *filter3d,
                          float16 cam, float4 intr, int W, int H, int active_degree, float kernel_size,
                          __global const int *radii,     /* (N) */
                          __global const uint *clamped,  /* (N) */
                          __global const float *v_2d,    /* (N, 9) */
                          /* outputs */
                          __global float *v_geo,         /* (N, CS_GEO_W) */
                          __global float *v_sh,          /* (N, K, 3) */
                          __local float *stage)
{
    int i = (int)get_global_id(0), lid = (int)get_local_id(0);
    int row0 = (int)(get_group_id(0) * get_local_size(0));
    float vg[CS_GEO_W], b[16], v_rgb[3] = {0.f, 0.f, 0.f};
    for (int k = 0; k < CS_GEO_W; k++) vg[k] = 0.f;
    for (int k = 0; k < 16; k++) b[k] = 0.f;
    proj_t P;
    if (i < n && radii[i] > 0 && project_gaussian(geo, filter3d, i, cam, intr, W, H, kernel_size, &P))
        grad_one(i, P, sh, cam, intr, active_degree, clamped, v_2d, vg, b, v_rgb);
    __local float *mine = stage + lid * (CS_STAGE_W + 1);
    for (int col0 = 0; col0 < SH_K * 3; col0 += CS_STAGE_W) {
        for (int c = 0; c < CS_STAGE_W; c++) {
            int col = col0 + c;
            if (col < SH_K * 3) mine[c] = b[col / 3] * v_rgb[col % 3];
        }
        stage_out(stage, v_sh, SH_K * 3, col0, row0, n);
    }
    for (int c = 0; c < CS_GEO_W; c++) mine[c] = vg[c];
    stage_out(stage, v_geo, CS_GEO_W, 0, row0, n);
}
