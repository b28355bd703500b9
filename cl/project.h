/* project.h: the projection of one Gaussian (graphdeco "preprocess"), shared by the forward
 * (project_fwd.cl) and the backward (project_bwd.cl), which recomputes it: camera transform,
 * near cull, 3D covariance, EWA projection (Zwicker et al. 2002, eq. 29 and 31) with the
 * clamped Jacobian, 2D low-pass (classic +0.3 or mip 2D Mip filter), conic, opacity. */
#ifndef CS_PROJECT_H
#define CS_PROJECT_H

typedef struct {
    float3 p, t;          /* world mean, camera-space mean */
    float4 qn;            /* normalised quaternion */
    float qnorm;
    float R[9];           /* rotation of qn, row-major */
    float3 s2;            /* squared scales fed to the covariance (3D filter included) */
    float3 s2raw;         /* squared scales before the 3D filter */
    float f2;             /* 3D filter variance */
    float c3;             /* 3D filter opacity factor */
    float3 T0, T1;        /* rows of J * W */
    float J00, J02, J11, J12;
    float limx, limy;     /* signed clamp limit hit on x / y, or 0 when not clamped */
    float a0, b0, c0;     /* 2D covariance before the low-pass */
    float a, b, c, det;   /* after */
    float c2;             /* 2D Mip opacity factor (1 in classic mode) */
    float sig;            /* sigmoid(logit_opacity) */
} proj_t;

/* Recomputes everything the projection derives from the parameters. Returns 0 when the
 * Gaussian is culled (behind the near plane or degenerate). */
/* Sigma = R diag(s2) R^T of a projected Gaussian, upper triangle: xx xy xz yy yz zz */
inline void cov3d(const proj_t *P, float S[6])
{
    const float *R = P->R;
    float3 d = P->s2;
    S[0] = R[0] * R[0] * d.x + R[1] * R[1] * d.y + R[2] * R[2] * d.z;
    S[1] = R[0] * R[3] * d.x + R[1] * R[4] * d.y + R[2] * R[5] * d.z;
    S[2] = R[0] * R[6] * d.x + R[1] * R[7] * d.y + R[2] * R[8] * d.z;
    S[3] = R[3] * R[3] * d.x + R[4] * R[4] * d.y + R[5] * R[5] * d.z;
    S[4] = R[3] * R[6] * d.x + R[4] * R[7] * d.y + R[5] * R[8] * d.z;
    S[5] = R[6] * R[6] * d.x + R[7] * R[7] * d.y + R[8] * R[8] * d.z;
}

/* S v for the symmetric 3x3 S held as cov3d's upper triangle (xx xy xz yy yz zz) */
inline float3 sym3_mul(const float S[6], float3 v)
{
    return (float3)(S[0] * v.x + S[1] * v.y + S[2] * v.z, S[1] * v.x + S[3] * v.y + S[4] * v.z,
                    S[2] * v.x + S[4] * v.y + S[5] * v.z);
}

inline int project_gaussian(__global const float *geo, __global const float *filter3d, int i, float16 cam, float4 intr,
                            int W, int H, float kernel_size, proj_t *P)
{
    __global const float *g = geo + (size_t)i * CS_GEO_W;
    P->p = (float3)(g[CS_GEO_MEAN], g[CS_GEO_MEAN + 1], g[CS_GEO_MEAN + 2]);
    P->t = world_to_cam(cam, P->p);
    if (P->t.z <= NEAR_PLANE) return 0;
    float3 s = exp((float3)(g[CS_GEO_LOG_SCALE], g[CS_GEO_LOG_SCALE + 1], g[CS_GEO_LOG_SCALE + 2]));
    P->s2raw = s * s;
    float4 q = (float4)(g[CS_GEO_QUAT], g[CS_GEO_QUAT + 1], g[CS_GEO_QUAT + 2], g[CS_GEO_QUAT + 3]);
    P->qnorm = max(length(q), 1e-12f);
    P->qn = q / P->qnorm;
    float Rq[9]; /* private copy: under OpenCL C 2.0+ P->R is a generic pointer */
    quat_to_rot(P->qn, Rq);
    for (int k = 0; k < 9; k++) P->R[k] = Rq[k];
    P->sig = sigmoidf(g[CS_GEO_LOGIT_OPACITY]);
#if FILTER_3D
    float f = filter3d[i];
    P->f2 = f * f;
    P->s2 = P->s2raw + P->f2;
    P->c3 = sqrt((P->s2raw.x * P->s2raw.y * P->s2raw.z) / (P->s2.x * P->s2.y * P->s2.z));
#else
    (void)filter3d;
    P->f2 = 0.f;
    P->s2 = P->s2raw;
    P->c3 = 1.f;
#endif
    float S[6]; /* Sigma: xx xy xz yy yz zz */
    cov3d(P, S);
    /* Jacobian of the perspective projection at the clamped mean (1.3 x half-FoV tangent) */
    float fx = intr.x, fy = intr.y, cx = intr.z, cy = intr.w;
    float tz = P->t.z;
    float lxp = 1.3f * (W - cx) / fx, lxn = -1.3f * cx / fx;
    float lyp = 1.3f * (H - cy) / fy, lyn = -1.3f * cy / fy;
    float ux = P->t.x / tz, uy = P->t.y / tz;
    P->limx = ux > lxp ? lxp : ux < lxn ? lxn : 0.f;
    P->limy = uy > lyp ? lyp : uy < lyn ? lyn : 0.f;
    float txc = P->limx != 0.f ? P->limx * tz : P->t.x;
    float tyc = P->limy != 0.f ? P->limy * tz : P->t.y;
    P->J00 = fx / tz;
    P->J02 = -fx * txc / (tz * tz);
    P->J11 = fy / tz;
    P->J12 = -fy * tyc / (tz * tz);
    float3 r0 = cam_row(cam, 0), r1 = cam_row(cam, 1), r2 = cam_row(cam, 2);
    P->T0 = P->J00 * r0 + P->J02 * r2;
    P->T1 = P->J11 * r1 + P->J12 * r2;
    float3 ST0 = sym3_mul(S, P->T0), ST1 = sym3_mul(S, P->T1);
    P->a0 = dot(P->T0, ST0);
    P->b0 = dot(P->T0, ST1);
    P->c0 = dot(P->T1, ST1);
#if ANTIALIAS == 1
    float det0 = P->a0 * P->c0 - P->b0 * P->b0;
    P->a = P->a0 + kernel_size;
    P->c = P->c0 + kernel_size;
    P->b = P->b0;
    P->det = P->a * P->c - P->b * P->b;
    if (det0 <= 1e-6f || P->det <= 1e-6f) return 0;
    P->c2 = sqrt(det0 / P->det);
#else
    (void)kernel_size;
    P->a = P->a0 + 0.3f;
    P->c = P->c0 + 0.3f;
    P->b = P->b0;
    P->det = P->a * P->c - P->b * P->b;
    if (P->det <= 0.f) return 0;
    P->c2 = 1.f;
#endif
    return 1;
}

#endif
