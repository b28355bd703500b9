/* rasterize_fwd.cl: front-to-back alpha blending per TILE x TILE tile (graphdeco renderCUDA):
 * Gaussians are staged through local memory in batches of TILE*TILE; skip power > 0, alpha =
 * min(CS_ALPHA_MAX, o * exp(power)), skip alpha < CS_ALPHA_MIN, stop before transmittance drops
 * below CS_T_MIN (layout.h says why each is what it is).
 * Saves the final transmittance and the last contributor for the backward. */

__kernel void rasterize_fwd(__global const uint *ranges,        /* (tiles, 2): start, end */
                            __global const uint *sorted_pairs,  /* (M) Gaussian or pair index */
                            __global const uint *pair_gid,      /* (M) Gaussian of a pair index */
                            __global const float2 *xy,          /* (N) */
                            __global const float4 *conic_opacity,
                            __global const float *rgb,          /* (N, 3) */
                            int W, int H, int tiles_x, float4 bg,
                            /* outputs */
                            __global float *out_img,            /* (3, H, W) */
                            __global float *final_T,            /* (H, W) */
                            __global uint *n_contrib)           /* (H, W) */
{
    __local float2 l_xy[BATCH];
    __local float4 l_co[BATCH];
    __local float l_rgb[BATCH * 3];
    __local int l_done;
    int lx = get_local_id(0), ly = get_local_id(1), lid = ly * TILE + lx;
    int tx = get_group_id(0), ty = get_group_id(1);
    int px = tx * TILE + lx, py = ty * TILE + ly;
    int inside = px < W && py < H;
    float2 pf = (float2)((float)px, (float)py);
    uint2 range = (uint2)(ranges[2 * (ty * tiles_x + tx)], ranges[2 * (ty * tiles_x + tx) + 1]);
    int todo = (int)(range.y - range.x);
    int rounds = (todo + BATCH - 1) / BATCH;
    int done = !inside;
    float T = 1.f;
    float3 C = (float3)(0.f);
    uint contributor = 0, last = 0;
    for (int r = 0; r < rounds; r++, todo -= BATCH) {
        if (lid == 0) l_done = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (!done) atomic_inc(&l_done);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l_done == 0) break;
        uint idx = range.x + (uint)(r * BATCH + lid);
        if (idx < range.y) {
            uint g = PAIR_GAUSSIAN(pair_gid, sorted_pairs[idx]);
            l_xy[lid] = xy[g];
            l_co[lid] = conic_opacity[g];
            l_rgb[lid * 3 + 0] = rgb[g * 3 + 0];
            l_rgb[lid * 3 + 1] = rgb[g * 3 + 1];
            l_rgb[lid * 3 + 2] = rgb[g * 3 + 2];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int cnt = min(BATCH, todo);
        /* two Gaussians a step: their alphas do not depend on each other, so computing both
           before blending overlaps two exp latencies (heavy tiles run alone at the end) */
        for (int j = 0; !done && j < cnt; j += 2) {
            float a[2];
            for (int u = 0; u < 2; u++) {
                int jj = min(j + u, cnt - 1);
                float2 d = l_xy[jj] - pf;
                float4 co = l_co[jj];
                float power = -0.5f * (co.x * d.x * d.x + co.z * d.y * d.y) - co.y * d.x * d.y;
                a[u] = power > 0.f ? 0.f : min(CS_ALPHA_MAX, co.w * PIX_EXP(power)); /* 0: skipped below */
            }
            for (int u = 0; u < 2 && !done && j + u < cnt; u++) {
                contributor++;
                float alpha = a[u];
                if (alpha < CS_ALPHA_MIN) continue;
                float test_T = T * (1.f - alpha);
                if (test_T < CS_T_MIN) {
                    done = 1;
                    continue;
                }
                int jj = j + u;
                C += (float3)(l_rgb[jj * 3], l_rgb[jj * 3 + 1], l_rgb[jj * 3 + 2]) * alpha * T;
                T = test_T;
                last = contributor;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (inside) {
        size_t pix = (size_t)py * W + px, hw = (size_t)W * H;
        final_T[pix] = T;
        n_contrib[pix] = last;
        out_img[pix] = C.x + T * bg.x;
        out_img[hw + pix] = C.y + T * bg.y;
        out_img[2 * hw + pix] = C.z + T * bg.z;
    }
}
