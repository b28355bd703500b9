/* rasterize_bwd.cl: back-to-front replay of the blending from the saved final transmittance
 * and last contributor (graphdeco renderCUDA backward), giving d/d(mean2d in pixels, conic,
 * opacity, rgb) per Gaussian. Each pixel's contribution is first summed in local memory per
 * staged Gaussian; then one work-item per Gaussian flushes the tile's sum, either with a
 * global float atomic (DETERMINISTIC 0) or into the pair's own row (DETERMINISTIC 1, summed
 * later in a fixed order by bin_reduce_pairs). The alpha clamp at 0.99 has zero gradient.
 * On NVIDIA (ATOMIC_PATH 2, not deterministic) the local accumulation is replaced by a warp
 * reduction (shfl.sync, only in warps where some lane contributes, found with vote.sync) and
 * one red.global.add.f32 per value from lane 0: the local compare-and-swap loop serialises 256
 * work-items on one address. Every lane runs every iteration so the warp stays converged. */
#if ATOMIC_PATH == 2 && !DETERMINISTIC
#define DIRECT_GLOBAL 1
inline float warp_sum(float v)
{
    for (int off = 16; off > 0; off >>= 1) {
        float o;
        asm volatile("shfl.sync.down.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(o) : "f"(v), "r"(off));
        v += o;
    }
    return v;
}
inline int warp_any(int flag)
{
    int r;
    asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; vote.sync.any.pred p, p, 0xffffffff; selp.s32 %0, 1, 0, p; }"
                 : "=r"(r)
                 : "r"(flag));
    return r;
}
#else
#define DIRECT_GLOBAL 0
#endif

__kernel void rasterize_bwd(__global const uint *ranges, __global const uint *sorted_pairs,
                            __global const uint *pair_gid, __global const float2 *xy,
                            __global const float4 *conic_opacity, __global const float *rgb, int W, int H,
                            int tiles_x, float4 bg,
                            __global const float *final_T,   /* (H, W) */
                            __global const uint *n_contrib,  /* (H, W) */
                            __global const float *v_img,     /* (3, H, W) */
                            /* outputs */
                            __global float *v_out)           /* (N, 9) accumulated, or (M, 9) per pair */
{
    __local float2 l_xy[BATCH];
    __local float4 l_co[BATCH];
    __local float l_rgb[BATCH * 3];
    __local uint l_pair[BATCH];
#if DIRECT_GLOBAL
    __local uint l_gid[BATCH];
#else
    __local float l_acc[BATCH * V2D_W];
#endif
    int lx = get_local_id(0), ly = get_local_id(1), lid = ly * TILE + lx;
    int tx = get_group_id(0), ty = get_group_id(1);
    int px = tx * TILE + lx, py = ty * TILE + ly;
    int inside = px < W && py < H;
    float2 pf = (float2)((float)px, (float)py);
    uint2 range = (uint2)(ranges[2 * (ty * tiles_x + tx)], ranges[2 * (ty * tiles_x + tx) + 1]);
    int total = (int)(range.y - range.x);
    int rounds = (total + BATCH - 1) / BATCH;
    size_t pix = (size_t)py * W + px, hw = (size_t)W * H;
    float T_final = inside ? final_T[pix] : 0.f;
    float T = T_final;
    uint last = inside ? n_contrib[pix] : 0u;
    float3 dpix = inside ? (float3)(v_img[pix], v_img[hw + pix], v_img[2 * hw + pix]) : (float3)(0.f);
    float bg_dot = dot(bg.xyz, dpix);
    float3 accum = (float3)(0.f), last_color = (float3)(0.f);
    float last_alpha = 0.f;
    uint contributor = (uint)total;
    int todo = total;
    for (int r = 0; r < rounds; r++, todo -= BATCH) {
        /* stage the batch, back to front */
        int progress = r * BATCH + lid;
        if (progress < total) {
            uint p = sorted_pairs[range.y - (uint)progress - 1u];
            uint g = PAIR_GAUSSIAN(pair_gid, p);
            l_pair[lid] = p;
#if DIRECT_GLOBAL
            l_gid[lid] = g;
#endif
            l_xy[lid] = xy[g];
            l_co[lid] = conic_opacity[g];
            l_rgb[lid * 3 + 0] = rgb[g * 3 + 0];
            l_rgb[lid * 3 + 1] = rgb[g * 3 + 1];
            l_rgb[lid * 3 + 2] = rgb[g * 3 + 2];
        }
#if !DIRECT_GLOBAL
        for (int k = 0; k < V2D_W; k++) l_acc[lid * V2D_W + k] = 0.f;
#endif
        barrier(CLK_LOCAL_MEM_FENCE);
        int cnt = min(BATCH, todo);
        for (int j = 0; j < cnt; j++) {
            contributor--;
            float g9[V2D_W];
            int has = 0;
            if (inside && contributor < last) {
                float2 d = l_xy[j] - pf;
                float4 co = l_co[j];
                float power = -0.5f * (co.x * d.x * d.x + co.z * d.y * d.y) - co.y * d.x * d.y;
                float G = exp(power);
                float raw = co.w * G;
                float alpha = min(0.99f, raw);
                if (power <= 0.f && alpha >= 1.f / 255.f) {
                    has = 1;
                    T = T / (1.f - alpha);
                    float3 c = (float3)(l_rgb[j * 3], l_rgb[j * 3 + 1], l_rgb[j * 3 + 2]);
                    float w = alpha * T;
                    accum = last_alpha * last_color + (1.f - last_alpha) * accum;
                    last_color = c;
                    float dL_dalpha = dot(c - accum, dpix) * T;
                    last_alpha = alpha;
                    dL_dalpha += (-T_final / (1.f - alpha)) * bg_dot;
                    float dL_dG = raw < 0.99f ? co.w * dL_dalpha : 0.f;
                    float dL_do = raw < 0.99f ? G * dL_dalpha : 0.f;
                    float gdx = G * d.x, gdy = G * d.y;
                    float dG_ddx = -gdx * co.x - gdy * co.y;
                    float dG_ddy = -gdy * co.z - gdx * co.y;
                    g9[0] = dL_dG * dG_ddx;
                    g9[1] = dL_dG * dG_ddy;
                    g9[2] = -0.5f * gdx * d.x * dL_dG;
                    g9[3] = -gdx * d.y * dL_dG;
                    g9[4] = -0.5f * gdy * d.y * dL_dG;
                    g9[5] = dL_do;
                    g9[6] = w * dpix.x;
                    g9[7] = w * dpix.y;
                    g9[8] = w * dpix.z;
                }
            }
#if DIRECT_GLOBAL
            if (warp_any(has)) {
                volatile __global float *dst = v_out + (size_t)l_gid[j] * V2D_W;
                for (int k = 0; k < V2D_W; k++) {
                    float v = warp_sum(has ? g9[k] : 0.f);
                    if ((lid & 31) == 0) atomic_add_global_f(dst + k, v);
                }
            }
#else
            if (has) {
                volatile __local float *acc = l_acc + j * V2D_W;
                for (int k = 0; k < V2D_W; k++) atomic_add_local_f(acc + k, g9[k]);
            }
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#if !DIRECT_GLOBAL
        if (lid < cnt) {
            __local const float *acc = l_acc + lid * V2D_W;
#if DETERMINISTIC
            __global float *dst = v_out + (size_t)l_pair[lid] * V2D_W;
            for (int k = 0; k < V2D_W; k++) dst[k] = acc[k];
#else
            uint g = PAIR_GAUSSIAN(pair_gid, l_pair[lid]);
            __global float *dst = v_out + (size_t)g * V2D_W;
            for (int k = 0; k < V2D_W; k++)
                if (acc[k] != 0.f) atomic_add_global_f(dst + k, acc[k]);
#endif
        }
        barrier(CLK_LOCAL_MEM_FENCE);
#endif
    }
}
