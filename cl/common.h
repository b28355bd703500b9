/* common.h: shared definitions for every clsplat kernel file. The host prepends it to the
 * stage files and builds them as one program with these options:
 *   SH_DEGREE      allocated SH degree (0..3); K = (SH_DEGREE+1)^2 coefficients per channel
 *   SH_HALF        1: SH coefficients stored as half (vload_half / vstore_half_rte)
 *   ANTIALIAS      0: classic (+0.3 on the 2D covariance), 1: mip-splatting 2D Mip filter
 *   FILTER_3D      1: mip-splatting 3D smoothing filter (per-Gaussian filter_3d std)
 *   DETERMINISTIC  1: rasterizer backward writes per-pair gradients (no global float atomics)
 *   OPT_HALF       1: Adam moments in 16 bits (see adam.cl; layout in src/model/model.h)
 *   ATOMIC_PATH    0: compare-and-swap loop, 1: cl_ext_float_atomics, 2: NVIDIA PTX red
 *   FAST_MATH      1: fma contraction and native_exp per pixel (see below)
 *   TILE           tile side in pixels (16 or 8; src/train/tune.c measures which)
 *   PIXELS         pixels of its tile column a rasterizer work-item covers (a power of two
 *                  <= TILE), so a tile's group has TILE_ROWS = TILE / PIXELS rows of
 *                  work-items and work-item row ly covers rows ly, ly + TILE_ROWS, ...
 *                  (1: one pixel each; more fit devices whose groups are smaller than a
 *                  tile, llvmpipe's 32; src/model/kernels.c picks)
 * The host writes these once (kernels.h, CS_KERNEL_OPTIONS).
 * Row layouts (geo, v_2d) and the rasterizer thresholds are in layout.h, prepended before
 * this file; sh is (N, K, 3). */
/* FAST_MATH 0: exact IEEE arithmetic as written, no contraction into fma, so every device
 * computes what the CPU reference computes. FAST_MATH 1 (NVIDIA): fma contraction everywhere
 * and native_exp in the rasterizer's per-pixel loops (ex2.approx there), 4-5% of an
 * iteration on the H100; the forward and gradient tests pass with it against the same
 * reference tolerances, on PoCL and on NVIDIA. */
#ifndef FAST_MATH
#define FAST_MATH 0
#endif
#if FAST_MATH
#pragma OPENCL FP_CONTRACT ON
#define PIX_EXP(x) native_exp(x)
#else
#pragma OPENCL FP_CONTRACT OFF
#define PIX_EXP(x) exp(x)
#endif

#ifndef SH_DEGREE
#define SH_DEGREE 3
#endif
#ifndef SH_HALF
#define SH_HALF 0
#endif
#ifndef ANTIALIAS
#define ANTIALIAS 0
#endif
#ifndef FILTER_3D
#define FILTER_3D 0
#endif
#ifndef DETERMINISTIC
#define DETERMINISTIC 0
#endif
#ifndef ATOMIC_PATH
#define ATOMIC_PATH 0
#endif
#ifndef OPT_HALF
#define OPT_HALF 0
#endif
#ifndef TILE
#define TILE 16
#endif
#ifndef PIXELS
#define PIXELS 1
#endif
#define TILE_ROWS (TILE / PIXELS)
#define PIX_PER_ITEM PIXELS /* pixels of a tile each work-item blends */
#define TILE_ITEMS (TILE * TILE_ROWS)   /* work-items of a rasterizer group */

#ifndef RADIUS_SIGMA
#define RADIUS_SIGMA 3.f /* graphdeco's: the tile rectangle spans this many standard deviations */
#endif
/* the largest screen radius in pixels the int tile arithmetic takes: far past any image side,
   so clamping to it never changes what is drawn */
#define RADIUS_MAX_PX 1e7f
#ifndef NEAR_PLANE
#define NEAR_PLANE 0.2f /* graphdeco's: Gaussians at camera depth <= this are culled */
#endif

#define SH_K ((SH_DEGREE + 1) * (SH_DEGREE + 1))

/* the Gaussian of a sorted pair value: the value itself, or via pair_gid when the values are
 * pair indices (DETERMINISTIC, see bin.cl) */
#if DETERMINISTIC
#define PAIR_GAUSSIAN(pair_gid, v) ((pair_gid)[v])
#else
#define PAIR_GAUSSIAN(pair_gid, v) (v)
#endif
#define BATCH TILE_ITEMS /* Gaussians staged in local memory at a time: one a work-item */

#if SH_HALF
typedef half sh_t;
#define SH_LOAD(p, i) vload_half((i), (p))
#define SH_STORE(p, i, v) vstore_half_rte((v), (i), (p))
#else
typedef float sh_t;
#define SH_LOAD(p, i) ((p)[i])
#define SH_STORE(p, i, v) ((p)[i] = (v))
#endif

#if OPT_HALF
typedef half mom_m_t;    /* m / sqrt(v) */
typedef ushort mom_v_t;  /* sqrt(v), unsigned 6-bit exponent, 10-bit mantissa */
#else
typedef float mom_m_t;
typedef float mom_v_t;
#endif

/* ---- float atomics ------------------------------------------------------------------- */
#if ATOMIC_PATH == 1 && defined(__opencl_c_ext_fp32_global_atomic_add)
#pragma OPENCL EXTENSION cl_ext_float_atomics : enable
inline void atomic_add_global_f(volatile __global float *p, float v)
{
    atomic_fetch_add_explicit((volatile __global atomic_float *)p, v, memory_order_relaxed, memory_scope_device);
}
#elif ATOMIC_PATH == 2
inline void atomic_add_global_f(volatile __global float *p, float v)
{
    asm volatile("red.global.add.f32 [%0], %1;" ::"l"(p), "f"(v) : "memory");
}
#else
/* The compare-and-swap float adds touch *p only atomically (a plain read would race with the
 * other work-items' exchanges, which oclgrind --data-races reports): the first exchange guesses
 * 0 (accumulators start there), each failed one returns the value to retry from. */
inline void atomic_add_global_f(volatile __global float *p, float v)
{
    union { uint u; float f; } o, n;
    uint seen = 0u;
    do {
        o.u = seen;
        n.f = o.f + v;
        seen = atomic_cmpxchg((volatile __global uint *)p, o.u, n.u);
    } while (seen != o.u);
}
#endif

inline void atomic_add_local_f(volatile __local float *p, float v)
{
    union { uint u; float f; } o, n;
    uint seen = 0u;
    do {
        o.u = seen;
        n.f = o.f + v;
        seen = atomic_cmpxchg((volatile __local uint *)p, o.u, n.u);
    } while (seen != o.u);
}

/* ---- camera -------------------------------------------------------------------------- */
/* cam: s0..s8 world-to-camera rotation (row-major), s9..sb translation, sc..se centre.
 * intr: fx, fy, cx, cy (continuous pixel coordinates; pixel i's centre is at i + 0.5). */
inline float3 cam_row(float16 c, int r)
{
    return r == 0 ? (float3)(c.s0, c.s1, c.s2) : r == 1 ? (float3)(c.s3, c.s4, c.s5) : (float3)(c.s6, c.s7, c.s8);
}
inline float3 world_to_cam(float16 c, float3 p)
{
    return (float3)(dot(cam_row(c, 0), p) + c.s9, dot(cam_row(c, 1), p) + c.sa, dot(cam_row(c, 2), p) + c.sb);
}

/* quaternion (w, x, y, z), normalised, to a row-major rotation */
inline void quat_to_rot(float4 q, float R[9])
{
    float w = q.x, x = q.y, y = q.z, z = q.w;
    R[0] = 1.f - 2.f * (y * y + z * z); R[1] = 2.f * (x * y - w * z);       R[2] = 2.f * (x * z + w * y);
    R[3] = 2.f * (x * y + w * z);       R[4] = 1.f - 2.f * (x * x + z * z); R[5] = 2.f * (y * z - w * x);
    R[6] = 2.f * (x * z - w * y);       R[7] = 2.f * (y * z + w * x);       R[8] = 1.f - 2.f * (x * x + y * y);
}

inline float sigmoidf(float x) { return 1.f / (1.f + exp(-x)); }

/* Touched tile rectangle [rmin, rmax) (graphdeco getRect). */
inline void tile_rect(float2 xy, int radius, int tiles_x, int tiles_y, int2 *rmin, int2 *rmax)
{
    rmin->x = min(tiles_x, max(0, (int)((xy.x - radius) / TILE)));
    rmin->y = min(tiles_y, max(0, (int)((xy.y - radius) / TILE)));
    rmax->x = min(tiles_x, max(0, (int)((xy.x + radius + TILE - 1) / TILE)));
    rmax->y = min(tiles_y, max(0, (int)((xy.y + radius + TILE - 1) / TILE)));
}

/* d^T conic d <= tile_tau(co) where a Gaussian reaches alpha >= 1/255 (tau = 2 ln(255 opacity);
 * the margin covers rounding). Not positive: it reaches no pixel. */
inline float tile_tau(float4 co) { return 2.f * log(CS_ALPHA_MIN_INV * co.w) * 1.001f + 1e-3f; }

/* The tiles of tile_rect that hold a pixel where the Gaussian reaches alpha >= 1/255 (the
 * rasterizer skips every other pixel, so the image is the same with fewer pairs): there
 * d^T conic d <= tau, an ellipse with half-widths sqrt(tau Sigma_xx) and sqrt(tau Sigma_yy),
 * Sigma = conic^-1. */
inline void tile_rect_tight(float2 xy, int radius, float4 co, int tiles_x, int tiles_y, int2 *rmin, int2 *rmax)
{
    tile_rect(xy, radius, tiles_x, tiles_y, rmin, rmax);
    float tau = tile_tau(co);
    float det = co.x * co.z - co.y * co.y;
    if (!(tau > 0.f)) {
        *rmax = *rmin;
        return;
    }
    if (!(det > 0.f)) return;
    float ex = sqrt(tau * co.z / det), ey = sqrt(tau * co.x / det);
    float fx0 = clamp((xy.x - ex) / TILE, -1.f, (float)tiles_x + 1.f), fx1 = clamp((xy.x + ex) / TILE, -1.f, (float)tiles_x + 1.f);
    float fy0 = clamp((xy.y - ey) / TILE, -1.f, (float)tiles_y + 1.f), fy1 = clamp((xy.y + ey) / TILE, -1.f, (float)tiles_y + 1.f);
    rmin->x = max(rmin->x, (int)floor(fx0));
    rmin->y = max(rmin->y, (int)floor(fy0));
    rmax->x = max(rmin->x, min(rmax->x, (int)floor(fx1) + 1));
    rmax->y = max(rmin->y, min(rmax->y, (int)floor(fy1) + 1));
}

/* The tiles [*c0, *c1) of tile row TY, within the rectangle's columns [x0, x1), that hold a
 * pixel of the ellipse d^T conic d <= tau: a thin slanted Gaussian reaches a band of its
 * rectangle's tiles, not all of them. The row's pixel centres span dy in [y0, y1]; over that
 * strip the ellipse's right edge x(dy) = (-b dy + sqrt(a tau - det dy^2)) / a is concave, so
 * its largest x is at the rightmost point's dy = -b sqrt(tau / (c det)) clamped into the strip
 * (the left edge mirrors it); (a, b, c) = conic. Half a hundredth of a pixel of margin covers rounding; a caller
 * that counts with this and one that emits with it may still round apart, so the emitter
 * keeps to the count. */
inline void tile_row_span(float2 xy, float4 co, float tau, int ty, int x0, int x1, int *c0, int *c1)
{
    float a = co.x, b = co.y, c = co.z, det = a * c - b * b;
    *c0 = *c1 = x0;
    if (!(tau > 0.f) || !(det > 0.f) || !(a > 0.f) || !(c > 0.f)) {
        *c1 = tau > 0.f ? x1 : x0; /* degenerate: the rectangle, as before */
        return;
    }
    float ey = sqrt(tau * a / det);
    float y0 = max((float)(ty * TILE) - xy.y, -ey), y1 = min((float)(ty * TILE + TILE - 1) - xy.y, ey);
    if (y0 > y1 + 0.01f) return;
    float dyr = clamp(-b * sqrt(tau / (c * det)), y0, y1), dyl = clamp(b * sqrt(tau / (c * det)), y0, y1);
    float xr = (-b * dyr + sqrt(max(0.f, a * tau - det * dyr * dyr))) / a;
    float xl = (-b * dyl - sqrt(max(0.f, a * tau - det * dyl * dyl))) / a;
    int t0 = (int)floor((xy.x + xl - 0.01f) / TILE), t1 = (int)floor((xy.x + xr + 0.01f) / TILE) + 1;
    *c0 = clamp(t0, x0, x1);
    *c1 = clamp(t1, *c0, x1);
}

/* ---- spherical harmonics (graphdeco constants and sign conventions) ------------------- */
#define SH_C0 0.28209479177387814f
#define SH_C1 0.4886025119029199f
__constant float SH_C2[5] = {1.0925484305920792f, -1.0925484305920792f, 0.31539156525252005f,
                             -1.0925484305920792f, 0.5462742152960396f};
__constant float SH_C3[7] = {-0.5900435899266435f, 2.890611442640554f, -0.4570457994644658f, 0.3731763325901154f,
                             -0.4570457994644658f, 1.445305721320277f, -0.5900435899266435f};

/* Basis values b[0..15] for unit direction d; entries above the active degree are 0. */
inline void sh_basis(float3 d, int degree, float b[16])
{
    float x = d.x, y = d.y, z = d.z;
    for (int k = 0; k < 16; k++) b[k] = 0.f;
    b[0] = SH_C0;
    if (degree < 1) return;
    b[1] = -SH_C1 * y; b[2] = SH_C1 * z; b[3] = -SH_C1 * x;
    if (degree < 2) return;
    float xx = x * x, yy = y * y, zz = z * z;
    b[4] = SH_C2[0] * x * y; b[5] = SH_C2[1] * y * z; b[6] = SH_C2[2] * (2.f * zz - xx - yy);
    b[7] = SH_C2[3] * x * z; b[8] = SH_C2[4] * (xx - yy);
    if (degree < 3) return;
    b[9] = SH_C3[0] * y * (3.f * xx - yy); b[10] = SH_C3[1] * x * y * z;
    b[11] = SH_C3[2] * y * (4.f * zz - xx - yy); b[12] = SH_C3[3] * z * (2.f * zz - 3.f * xx - 3.f * yy);
    b[13] = SH_C3[4] * x * (4.f * zz - xx - yy); b[14] = SH_C3[5] * z * (xx - yy);
    b[15] = SH_C3[6] * x * (xx - 3.f * yy);
}

/* d basis_k / d (x, y, z) for k = 1..15 (treating x, y, z as independent). */
inline float3 sh_basis_grad(float3 d, int k)
{
    float x = d.x, y = d.y, z = d.z;
    switch (k) {
    case 1: return (float3)(0.f, -SH_C1, 0.f);
    case 2: return (float3)(0.f, 0.f, SH_C1);
    case 3: return (float3)(-SH_C1, 0.f, 0.f);
    case 4: return SH_C2[0] * (float3)(y, x, 0.f);
    case 5: return SH_C2[1] * (float3)(0.f, z, y);
    case 6: return SH_C2[2] * (float3)(-2.f * x, -2.f * y, 4.f * z);
    case 7: return SH_C2[3] * (float3)(z, 0.f, x);
    case 8: return SH_C2[4] * (float3)(2.f * x, -2.f * y, 0.f);
    case 9: return SH_C3[0] * (float3)(6.f * x * y, 3.f * x * x - 3.f * y * y, 0.f);
    case 10: return SH_C3[1] * (float3)(y * z, x * z, x * y);
    case 11: return SH_C3[2] * (float3)(-2.f * x * y, 4.f * z * z - x * x - 3.f * y * y, 8.f * y * z);
    case 12: return SH_C3[3] * (float3)(-6.f * x * z, -6.f * y * z, 6.f * z * z - 3.f * x * x - 3.f * y * y);
    case 13: return SH_C3[4] * (float3)(4.f * z * z - 3.f * x * x - y * y, -2.f * x * y, 8.f * x * z);
    case 14: return SH_C3[5] * (float3)(2.f * x * z, -2.f * y * z, x * x - y * y);
    case 15: return SH_C3[6] * (float3)(3.f * x * x - 3.f * y * y, -6.f * x * y, 0.f);
    default: return (float3)(0.f);
    }
}

/* ---- counter-based random numbers (matches src/base/util.c cs_hash_u32) --------------------- */
inline uint hash_u32(uint x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
inline float rand_uniform(uint seed, uint a, uint b)
{
    uint h = hash_u32(seed ^ hash_u32(a + 0x9e3779b9u));
    h = hash_u32(h ^ b);
    return ((h >> 8) + 0.5f) * (1.0f / 16777216.0f); /* (0, 1) */
}
inline float rand_normal(uint seed, uint a, uint b)
{
    float u1 = rand_uniform(seed, a, 2u * b), u2 = rand_uniform(seed, a, 2u * b + 1u);
    return sqrt(-2.f * log(u1)) * cos(6.283185307179586f * u2);
}
