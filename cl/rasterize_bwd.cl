/* rasterize_bwd.cl: back-to-front replay of the blending from the saved final transmittance
 * and last contributor (graphdeco renderCUDA backward), giving d/d(mean2d in pixels, conic,
 * opacity, rgb) per Gaussian. The alpha clamp at CS_ALPHA_MAX has zero gradient.
 * DETERMINISTIC 0: each pixel's contribution is added per staged Gaussian into local memory
 * with a float atomic, then one work-item per Gaussian adds the tile's sum to the Gaussian's
 * row with a global float atomic; the order of the additions is the device's.
 * DETERMINISTIC 1: per staged Gaussian, a fixed-order sum (each row of the tile, then the
 * rows) goes into the pair's own row, summed later in a fixed order by bin_reduce_pairs; the
 * rows of pairs past the tile's last contributor are zeroed. Same bits on every run of a
 * device, whatever order the work-items run in.
 * On NVIDIA (ATOMIC_PATH 2, not deterministic) the local accumulation is replaced by a warp
 * reduce-scatter (shfl.sync, only in warps where some lane contributes, found with vote.sync)
 * and red.global.add.f32 from the lanes holding the sums: the local compare-and-swap loop
 * serialises 256 work-items on one address. Every lane runs every iteration so the warp stays
 * converged. Assumes 32-lane warps and groups of a multiple of 32 work-items.
 * A work-item covering several pixels (PIX_PER_ITEM > 1, common.h) replays each of them and
 * adds their gradients in registers before the accumulation.
 * Load balance: a work-group replays one unit of a tile (bin_tile_units: CHUNK pairs of its
 * list), so a crowded tile's pairs are replayed by several groups at once. A unit starts each
 * pixel from the forward's checkpoint of the next unit (its transmittance) and the colour
 * behind it folded from the later units' own colours (rasterize_fwd.cl), the same recursion
 * the replay itself runs, so no difference of large sums is taken. */
#if ATOMIC_PATH == 2 && !DETERMINISTIC && TILE_ITEMS % 32 == 0
#define DIRECT_GLOBAL 1
inline float shfl_xor(float v, int mask)
{
    float o;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(o) : "f"(v), "r"(mask));
    return o;
}
inline int warp_any(int flag)
{
    int r;
    asm volatile("{ .reg .pred p; setp.ne.s32 p, %1, 0; vote.sync.any.pred p, p, 0xffffffff; selp.s32 %0, 1, 0, p; }"
                 : "=r"(r)
                 : "r"(flag));
    return r;
}
/* One exchange of a reduce-scatter: lanes with BIT clear keep the low slots, lanes with it
 * set the high ones, each adding its partner's copy of the slots it keeps. */
#define RS_STEP(in, n_in, out, n_out, bit)                                        \
    for (int s_ = 0; s_ < (n_out); s_++) {                                        \
        float lo_ = (in)[s_], hi_ = s_ + (n_out) < (n_in) ? (in)[s_ + (n_out)] : 0.f; \
        int up_ = (lane >> (bit)) & 1;                                            \
        (out)[s_] = (up_ ? hi_ : lo_) + shfl_xor(up_ ? lo_ : hi_, 1 << (bit));    \
    }
/* Sums 9 values over the warp's 32 lanes and adds them to dst[0..8] with one atomic
 * instruction: a reduce-scatter over lane bits 4..1 (9 -> 5 -> 3 -> 2 -> 1 slots, 11
 * shuffles) and a last pairwise add (1 shuffle) leaves value k on two lanes, and the even one
 * of them adds it. A plain butterfly per value would take 45 shuffles and 9 atomics in turn
 * from one lane. */
inline void warp_sum9_add(const float v[9], volatile __global float *dst, int lane)
{
    float a[5], b[3], c[2], d[1];
    RS_STEP(v, 9, a, 5, 4)
    RS_STEP(a, 5, b, 3, 3)
    RS_STEP(b, 3, c, 2, 2)
    RS_STEP(c, 2, d, 1, 1)
    float sum = d[0] + shfl_xor(d[0], 1);
    /* which value this lane ends with: undo the slot choices from the last step back */
    int u = (lane >> 1) & 1;                                      /* slot of c */
    int t = (lane >> 2) & 1 ? (u == 0 ? 2 : -1) : u;              /* slot of b */
    int sl = t < 0 ? -1 : (lane >> 3) & 1 ? (t < 2 ? 3 + t : -1) : t; /* slot of a */
    int k = sl < 0 ? -1 : (lane >> 4) & 1 ? (sl < 4 ? 5 + sl : -1) : sl;
    if (k >= 0 && !(lane & 1)) atomic_add_global_f(dst + k, sum);
}
#else
#define DIRECT_GLOBAL 0
#endif

/* ---- accumulation strategies: one definition of each step per path ---------------------
 * ACC_LOCAL declares the path's local memory in the kernel (OpenCL C 1.2 allows __local
 * variables only at kernel scope) and ACC passes it on. The kernel calls, per batch of
 * staged Gaussians: acc_stage (per work-item, with the Gaussian it staged), acc_batch_begin,
 * then per staged Gaussian J acc_add (every work-item, with HAS = its pixel's gradient G9 is
 * valid), then acc_batch_end; and once at the end acc_finish. */
#if DIRECT_GLOBAL
/* NVIDIA: warp reduce-scatter straight into the Gaussian's global row */
#define ACC_LOCAL __local uint l_gid[BATCH];
#define ACC l_gid
inline void acc_stage(__local uint *l_gid, int lid, uint g) { l_gid[lid] = g; }
inline void acc_batch_begin(__local uint *l_gid, int lid) { (void)l_gid, (void)lid; }
inline void acc_add(__local uint *l_gid, int lid, int j, int has, float g9[CS_V2D_W], __global float *v_out,
                    __local const uint *l_pair)
{
    (void)l_pair;
    if (warp_any(has)) {
        if (!has)
            for (int k = 0; k < CS_V2D_W; k++) g9[k] = 0.f;
        warp_sum9_add(g9, v_out + (size_t)l_gid[j] * CS_V2D_W, lid & 31);
    }
}
inline void acc_batch_end(__local uint *l_gid, int lid, int cnt, __local const uint *l_pair,
                          __global const uint *pair_gid, __global float *v_out)
{
    (void)l_gid, (void)lid, (void)cnt, (void)l_pair, (void)pair_gid, (void)v_out;
}
#elif DETERMINISTIC
/* fixed-order sums over the tile's pixels into the pair's own row */
#define ACC_LOCAL                                                                                  \
    __local float l_red[CS_V2D_W * TILE_ITEMS]; /* [value][work-item] of one staged Gaussian */    \
    __local float l_row[CS_V2D_W * TILE_ROWS];  /* [value][row of work-items] */
#define ACC l_red, l_row
inline void acc_stage(__local float *l_red, __local float *l_row, int lid, uint g)
{
    (void)l_red, (void)l_row, (void)lid, (void)g;
}
inline void acc_batch_begin(__local float *l_red, __local float *l_row, int lid) { (void)l_red, (void)l_row, (void)lid; }
/* barriers: l_red is read only between the two, l_row only after the second and before the
   next Gaussian's first */
inline void acc_add(__local float *l_red, __local float *l_row, int lid, int j, int has, float g9[CS_V2D_W],
                    __global float *v_out, __local const uint *l_pair)
{
    for (int k = 0; k < CS_V2D_W; k++) l_red[k * TILE_ITEMS + lid] = has ? g9[k] : 0.f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = lid; t < CS_V2D_W * TILE_ROWS; t += TILE_ITEMS) {
        __local const float *row = l_red + t * TILE; /* value t / TILE_ROWS, row t % TILE_ROWS */
        float s = 0.f;
        for (int x = 0; x < TILE; x++) s += row[x];
        l_row[t] = s;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = lid; k < CS_V2D_W; k += TILE_ITEMS) {
        float s = 0.f;
        for (int y = 0; y < TILE_ROWS; y++) s += l_row[k * TILE_ROWS + y];
        v_out[(size_t)l_pair[j] * CS_V2D_W + k] = s;
    }
}
inline void acc_batch_end(__local float *l_red, __local float *l_row, int lid, int cnt, __local const uint *l_pair,
                          __global const uint *pair_gid, __global float *v_out)
{
    (void)l_red, (void)l_row, (void)lid, (void)cnt, (void)l_pair, (void)pair_gid, (void)v_out;
}
#else
/* portable: local float atomics per staged Gaussian, one global atomic add per value */
#define ACC_LOCAL __local float l_acc[BATCH * CS_V2D_W];
#define ACC l_acc
inline void acc_stage(__local float *l_acc, int lid, uint g) { (void)l_acc, (void)lid, (void)g; }
inline void acc_batch_begin(__local float *l_acc, int lid)
{
    for (int k = 0; k < CS_V2D_W; k++) l_acc[lid * CS_V2D_W + k] = 0.f;
}
inline void acc_add(__local float *l_acc, int lid, int j, int has, float g9[CS_V2D_W], __global float *v_out,
                    __local const uint *l_pair)
{
    (void)lid, (void)v_out, (void)l_pair;
    if (has) {
        volatile __local float *acc = l_acc + j * CS_V2D_W;
        for (int k = 0; k < CS_V2D_W; k++) atomic_add_local_f(acc + k, g9[k]);
    }
}
inline void acc_batch_end(__local float *l_acc, int lid, int cnt, __local const uint *l_pair,
                          __global const uint *pair_gid, __global float *v_out)
{
    if (lid < cnt) {
        __local const float *acc = l_acc + lid * CS_V2D_W;
        uint g = PAIR_GAUSSIAN(pair_gid, l_pair[lid]);
        __global float *dst = v_out + (size_t)g * CS_V2D_W;
        for (int k = 0; k < CS_V2D_W; k++)
            if (acc[k] != 0.f) atomic_add_global_f(dst + k, acc[k]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
#endif

/* DETERMINISTIC: the rows of the unit's pairs [from, to) behind the tile's last contributor
   hold no gradient (the reduction sums every pair row) */
inline void acc_finish(int lid, uint from, uint to, uint2 range, __global const uint *sorted_pairs, __global float *v_out)
{
#if DETERMINISTIC
    for (uint q = from + (uint)lid; q < to; q += TILE_ITEMS) {
        __global float *dst = v_out + (size_t)sorted_pairs[range.x + q] * CS_V2D_W;
        for (int k = 0; k < CS_V2D_W; k++) dst[k] = 0.f;
    }
#else
    (void)lid, (void)from, (void)to, (void)range, (void)sorted_pairs, (void)v_out;
#endif
}

/* A pixel's replay state at the end of unit K of CHUNK pairs (pairs [a, b) of its tile, the
   pixel's contributors those before LAST): its transmittance there and the colour of what lies
   behind, folded from the forward's checkpoints of the units after K up to the one holding its
   last contributor. A pixel whose contributors end in this unit starts from its final T. */
inline void unit_start(__global const float4 *ck, uint chunk, uint k, uint b, uint last, float T_final, float *T,
                       float3 *accum)
{
    *accum = (float3)(0.f);
    *T = T_final;
    if (last <= b) return;
    uint jmax = (last - 1u) / chunk;
    for (uint j = jmax; j > k; j--) {
        float4 c = ck[(size_t)j * (TILE * TILE)];
        float Tend = j == jmax ? T_final : ck[(size_t)(j + 1u) * (TILE * TILE)].w;
        *accum = c.xyz + (Tend / c.w) * *accum;
    }
    *T = ck[(size_t)(k + 1u) * (TILE * TILE)].w;
}

/* The gradient of staged Gaussian J (offset d from the pixel, conic and opacity co, colour
 * from l_rgb, read only when it touches the pixel) at one pixel whose replay state is passed
 * by pointer (T, accum, last colour and alpha advance), into g9 (accumulated when ADD). 0 when
 * the Gaussian does not touch the pixel. */
inline int pixel_grad(float2 d, float4 co, __local const float *l_rgb, int j, float3 dpix, float bg_dot,
                      float T_final, float *T, float3 *accum, float3 *last_color, float *last_alpha,
                      float g9[CS_V2D_W], int add)
{
    float power = -0.5f * (co.x * d.x * d.x + co.z * d.y * d.y) - co.y * d.x * d.y;
    float G = PIX_EXP(power);
    float raw = co.w * G;
    float alpha = min(CS_ALPHA_MAX, raw);
    if (!(power <= 0.f && alpha >= CS_ALPHA_MIN)) return 0;
    *T = *T / (1.f - alpha);
    float3 c = (float3)(l_rgb[j * 3], l_rgb[j * 3 + 1], l_rgb[j * 3 + 2]);
    float w = alpha * *T;
    *accum = *last_alpha * *last_color + (1.f - *last_alpha) * *accum;
    *last_color = c;
    float dL_dalpha = dot(c - *accum, dpix) * *T;
    *last_alpha = alpha;
    dL_dalpha += (-T_final / (1.f - alpha)) * bg_dot;
    float dL_dG = raw < CS_ALPHA_MAX ? co.w * dL_dalpha : 0.f;
    float dL_do = raw < CS_ALPHA_MAX ? G * dL_dalpha : 0.f;
    float gdx = G * d.x, gdy = G * d.y;
    float dG_ddx = -gdx * co.x - gdy * co.y;
    float dG_ddy = -gdy * co.z - gdx * co.y;
    float v[CS_V2D_W];
    v[CS_V2D_MEAN] = dL_dG * dG_ddx;
    v[CS_V2D_MEAN + 1] = dL_dG * dG_ddy;
    v[CS_V2D_CONIC] = -0.5f * gdx * d.x * dL_dG;
    v[CS_V2D_CONIC + 1] = -gdx * d.y * dL_dG;
    v[CS_V2D_CONIC + 2] = -0.5f * gdy * d.y * dL_dG;
    v[CS_V2D_OPACITY] = dL_do;
    v[CS_V2D_RGB] = w * dpix.x;
    v[CS_V2D_RGB + 1] = w * dpix.y;
    v[CS_V2D_RGB + 2] = w * dpix.z;
    for (int k = 0; k < CS_V2D_W; k++) g9[k] = add ? g9[k] + v[k] : v[k];
    return 1;
}

__kernel void rasterize_bwd(__global const uint *ranges, __global const uint *sorted_pairs,
                            __global const uint *pair_gid, __global const float2 *xy,
                            __global const float4 *conic_opacity, __global const float *rgb, int W, int H,
                            int tiles_x, float4 bg,
                            __global const float *final_T,   /* (H, W) */
                            __global const uint *n_contrib,  /* (H, W) */
                            __global const float *v_img,     /* (3, H, W) */
                            int tiles,
                            __global const uint *unit_off,   /* (tiles + 1) first unit of a tile, then the total */
                            __global const uint *unit_tile,  /* (units) the tile of a unit */
                            __global const float4 *ckpt,     /* (units, TILE * TILE) rasterize_fwd.cl */
                            uint chunk,                      /* pairs a unit, a multiple of BATCH */
                            /* outputs */
                            __global float *v_out)           /* (N, CS_V2D_W) accumulated, or (M, CS_V2D_W) per pair */
{
    STAGE_LOCALS
    __local uint l_pair[BATCH];
    __local uint l_last;
    ACC_LOCAL
    uint u = get_group_id(0);
    if (u >= unit_off[tiles]) return; /* the launch covers the most units the pairs allow */
    int lx = get_local_id(0), ly = get_local_id(1), lid = ly * TILE + lx;
    uint tile = unit_tile[u], k = u - unit_off[tile];
    int tx = (int)tile % tiles_x, ty = (int)tile / tiles_x;
    int px = tx * TILE + lx;
    uint2 range = (uint2)(ranges[2 * tile], ranges[2 * tile + 1]);
    size_t hw = (size_t)W * H;
    /* this work-item's pixels: the replay state of each */
    float2 pf[PIX_PER_ITEM];
    float T_final[PIX_PER_ITEM], T[PIX_PER_ITEM], last_alpha[PIX_PER_ITEM], bg_dot[PIX_PER_ITEM];
    float3 dpix[PIX_PER_ITEM], accum[PIX_PER_ITEM], last_color[PIX_PER_ITEM];
    uint last[PIX_PER_ITEM], item_last = 0u;
    for (int q = 0; q < PIX_PER_ITEM; q++) {
        int py = ty * TILE + ly + q * TILE_ROWS;
        int inside = px < W && py < H;
        size_t pix = (size_t)py * W + px;
        pf[q] = (float2)((float)px, (float)py);
        T_final[q] = inside ? final_T[pix] : 0.f;
        last[q] = inside ? n_contrib[pix] : 0u;
        item_last = max(item_last, last[q]);
        dpix[q] = inside ? (float3)(v_img[pix], v_img[hw + pix], v_img[2 * hw + pix]) : (float3)(0.f);
        bg_dot[q] = dot(bg.xyz, dpix[q]);
        last_color[q] = (float3)(0.f);
        last_alpha[q] = 0.f;
    }
    /* pairs after the tile's last contributor touched no pixel: the replay starts there */
    if (lid == 0) l_last = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (item_last) atomic_max(&l_last, item_last);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint len = range.y - range.x, total = min(len, l_last);
    uint a = k * chunk, b = min(a + chunk, total); /* this unit's pairs to replay: [a, b) */
    acc_finish(lid, max(a, total), min(a + chunk, len), range, sorted_pairs, v_out);
    if (a >= total) return;
    __global const float4 *ck = ckpt + (size_t)unit_off[tile] * (TILE * TILE) + (size_t)ly * TILE + lx;
    for (int q = 0; q < PIX_PER_ITEM; q++)
        unit_start(ck + (size_t)q * TILE_ROWS * TILE, chunk, k, b, last[q], T_final[q], &T[q], &accum[q]);
    int n = (int)(b - a), rounds = (n + BATCH - 1) / BATCH;
    uint contributor = b;
    int todo = n;
    for (int r = 0; r < rounds; r++, todo -= BATCH) {
        /* stage the batch, back to front */
        int progress = r * BATCH + lid;
        if (progress < n) {
            uint p = sorted_pairs[range.x + b - (uint)progress - 1u];
            uint g = PAIR_GAUSSIAN(pair_gid, p);
            l_pair[lid] = p;
            acc_stage(ACC, lid, g);
            stage_gaussian(lid, g, xy, conic_opacity, rgb, l_xy, l_co, l_rgb);
        }
        acc_batch_begin(ACC, lid);
        barrier(CLK_LOCAL_MEM_FENCE);
        int cnt = min(BATCH, todo);
        for (int j = 0; j < cnt; j++) {
            contributor--;
            float g9[CS_V2D_W];
            int has = 0;
            for (int q = 0; q < PIX_PER_ITEM; q++)
                if (contributor < last[q])
                    has |= pixel_grad(l_xy[j] - pf[q], l_co[j], l_rgb, j, dpix[q], bg_dot[q], T_final[q], &T[q],
                                      &accum[q], &last_color[q], &last_alpha[q], g9, has);
            acc_add(ACC, lid, j, has, g9, v_out, l_pair);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        acc_batch_end(ACC, lid, cnt, l_pair, pair_gid, v_out);
    }
}

/* capability check for the float-atomics path: every work-item adds 1 to out[0] */
__kernel void atomics_selftest(__global float *out)
{
    atomic_add_global_f(out, 1.0f);
}
