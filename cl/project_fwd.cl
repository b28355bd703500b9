/* project_fwd.cl: per-Gaussian projection (project.h's project_gaussian), radius, tile
 * rectangle, SH colour and opacity of every Gaussian for one view. */

/* The tiles of the rectangle [rmin, rmax) the Gaussian's alpha >= 1/255 ellipse reaches, row
 * by row (tile_row_span); with DETERMINISTIC the whole rectangle (its per-pair gradient rows
 * are summed over every pair a Gaussian emits, so there is no room for bin_emit_pairs'
 * filler pairs). */
inline uint tiles_reached(float2 m2, float4 co, int2 rmin, int2 rmax)
{
#if DETERMINISTIC
    (void)m2, (void)co;
    return (uint)((rmax.x - rmin.x) * (rmax.y - rmin.y));
#else
    float tau = tile_tau(co);
    uint n = 0;
    for (int ty = rmin.y; ty < rmax.y; ty++) {
        int c0, c1;
        tile_row_span(m2, co, tau, ty, rmin.x, rmax.x, &c0, &c1);
        n += (uint)(c1 - c0);
    }
    return n;
#endif
}

__kernel void project_fwd(int n,
                          __global const float *geo,      /* (N, CS_GEO_W) */
                          __global const sh_t *sh,        /* (N, K, 3) */
                          __global const float *filter3d, /* (N) or unused */
                          float16 cam, float4 intr, int W, int H, int tiles_x, int tiles_y, int active_degree,
                          float kernel_size,
                          /* outputs */
                          __global float2 *xy,            /* (N) pixel-index coordinates */
                          __global float4 *conic_opacity, /* (N) a b c opacity */
                          __global float *rgb,            /* (N, 3) */
                          __global float *depth,          /* (N) */
                          __global int *radii,            /* (N) 0 = culled */
                          __global uint *tiles_touched,   /* (N) */
                          __global uint2 *bounds,         /* (N) screen bounds in tiles: CS_BOUNDS_* */
                          __global uint *clamped)         /* (N) bit c: colour channel c clamped at 0 */
{
    int i = get_global_id(0);
    if (i >= n) return;
    radii[i] = 0;
    tiles_touched[i] = 0;
    bounds[i] = (uint2)(0u, 0u);
    proj_t P;
    if (!project_gaussian(geo, filter3d, i, cam, intr, W, H, kernel_size, &P)) return;
    float mid = 0.5f * (P.a + P.c);
    float lambda1 = mid + sqrt(max(0.1f, mid * mid - P.det));
    /* a Gaussian can be huge (a foreign model's, or one the camera is inside of): its radius is
       clamped where the int tile arithmetic holds it, which changes nothing drawn (the tile
       rectangle is bounded by the image either way); only a non-finite one (an infinite or NaN
       scale) is culled */
    float rf = ceil(RADIUS_SIGMA * sqrt(lambda1));
    if (!(rf < INFINITY)) return;
    int radius = (int)min(rf, RADIUS_MAX_PX);
    float2 m2 = (float2)(intr.x * P.t.x / P.t.z + intr.z - 0.5f, intr.y * P.t.y / P.t.z + intr.w - 0.5f);
    int2 rmin, rmax;
    tile_rect(m2, radius, tiles_x, tiles_y, &rmin, &rmax);
    if ((rmax.x - rmin.x) * (rmax.y - rmin.y) == 0) return;
    /* view-dependent colour */
    float3 dir = normalize(P.p - (float3)(cam.sc, cam.sd, cam.se));
    float b[16];
    sh_basis(dir, active_degree, b);
    int nk = (active_degree + 1) * (active_degree + 1);
    float3 col = (float3)(0.5f);
    for (int k = 0; k < nk; k++) {
        size_t o = ((size_t)i * SH_K + k) * 3;
        col += b[k] * (float3)(SH_LOAD(sh, o), SH_LOAD(sh, o + 1), SH_LOAD(sh, o + 2));
    }
    clamped[i] = (col.x < 0.f ? 1u : 0u) | (col.y < 0.f ? 2u : 0u) | (col.z < 0.f ? 4u : 0u);
    col = max(col, 0.f);
    rgb[i * 3 + 0] = col.x;
    rgb[i * 3 + 1] = col.y;
    rgb[i * 3 + 2] = col.z;
    xy[i] = m2;
    float4 co = (float4)(P.c / P.det, -P.b / P.det, P.a / P.det, P.sig * P.c3 * P.c2);
    conic_opacity[i] = co;
    depth[i] = P.t.z;
    radii[i] = radius;
    tile_rect_tight(m2, radius, co, tiles_x, tiles_y, &rmin, &rmax);
    tiles_touched[i] = tiles_reached(m2, co, rmin, rmax);
    bounds[i] = CS_BOUNDS_PACK(rmin, rmax);
}
