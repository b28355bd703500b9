/* rasterize_fwd.cl: front-to-back alpha blending per TILE x TILE tile (graphdeco renderCUDA):
 * Gaussians are staged through local memory in batches of TILE*TILE; skip power > 0, alpha =
 * min(CS_ALPHA_MAX, o * exp(power)), skip alpha < CS_ALPHA_MIN, stop before transmittance drops
 * below CS_T_MIN (layout.h says why each is what it is).
 * Work-group g blends tile tile_order[g]: the heaviest tiles first (bin_tile_order).
 * Saves the final transmittance and the last contributor for the backward. A work-item blends
 * PIX_PER_ITEM pixels of its tile column (common.h), one unless the device's groups are
 * smaller than a tile.
 * rasterize_fwd_depth blends the same way and also writes each pixel's depths (#23): the
 * expected depth (sum of w z over sum of w, w = alpha T) and the median depth (the depth of the
 * Gaussian at which T falls below 0.5; 0 where it never does). Both kernels inline one body with
 * WITH_DEPTH a constant, so the plain forward carries no depth work.
 * Checkpoints for the backward's units (bin_tile_units): in a tile of more than one unit, each
 * pixel leaves, for each unit of CHUNK pairs it reached, the transmittance at the unit's start
 * (w) and the colour the unit alone blends from a transmittance of 1 (xyz), at
 * ckpt[(unit_off[tile] + unit) * TILE * TILE + pixel of the tile]. The backward starts a unit
 * from the next unit's transmittance and folds the later units' colours into what lies
 * behind (rasterize_bwd.cl). The colour is summed a unit at a time (the unit's sum divided by
 * its starting T is its own colour), so the blending loop does no more work than without.
 * With SPLIT > 0 the tiles of SPLIT units or more are left to rasterize_fwd_split.cl, which
 * blends their units in parallel. */

/* Gaussians whose alphas a pixel computes before blending them: they do not depend on each
   other, so their exp latencies overlap (the blending itself is a chain through T). H100, lego
   7k model, the forward of view 0 / 40: 0.515 / 0.472 ms with 2, 0.480 / 0.403 with 4, 0.433 /
   0.354 with 8; south_building view 0: 1.198 ms with 2, 0.992 with 8, 0.960 with 16. */
#define FWD_ILP 8

/* one unit's checkpoint of this work-item's pixels from T at the unit's start and the colour
   the unit blended (its own colour times that T) */
static inline void save_ckpt(__global float4 *ckpt, uint slot, int lx, int ly, const float Tu[PIX_PER_ITEM],
                             const float3 Cu[PIX_PER_ITEM])
{
    for (int q = 0; q < PIX_PER_ITEM; q++)
        ckpt[(size_t)slot * (TILE * TILE) + (size_t)(ly + q * TILE_ROWS) * TILE + lx] = (float4)(Cu[q] / Tu[q], Tu[q]);
}

/* Stages Gaussian G's projection for work-item LID of the group: its 2D mean, conic and
   opacity, colour (rasterize_fwd.cl, rasterize_fwd_split.cl and rasterize_bwd.cl). */
static inline void stage_gaussian(int lid, uint g, __global const float2 *xy, __global const float4 *conic_opacity,
                                  __global const float *rgb, __local float2 *l_xy, __local float4 *l_co,
                                  __local float *l_rgb)
{
    l_xy[lid] = xy[g];
    l_co[lid] = conic_opacity[g];
    l_rgb[lid * 3 + 0] = rgb[g * 3 + 0];
    l_rgb[lid * 3 + 1] = rgb[g * 3 + 1];
    l_rgb[lid * 3 + 2] = rgb[g * 3 + 2];
}

/* the staging arrays stage_gaussian fills, for a kernel to declare (OpenCL C 1.2 allows __local
   variables only at kernel scope) */
#define STAGE_LOCALS                \
    __local float2 l_xy[BATCH];     \
    __local float4 l_co[BATCH];     \
    __local float l_rgb[BATCH * 3];

/* Blends the CNT staged Gaussians (positions CONTRIBUTOR + 1 ... in the tile's list) into one
 * pixel at PF: its transmittance T, colour C, last contributor LAST and (WITH_DEPTH) depth
 * sums. Returns 1 when the pixel stopped: a Gaussian would take T below CS_T_MIN. */
static inline int blend_batch(float2 pf, int cnt, uint contributor, __local const float2 *l_xy,
                              __local const float4 *l_co, __local const float *l_rgb, __local const float *l_z,
                              const int WITH_DEPTH, float *T, float3 *C, uint *last, float *Dsum, float *Dmed)
{
    float Tq = *T;
    float3 Cq = *C;
    uint lastq = *last;
    int dq = 0;
    /* FWD_ILP Gaussians a step: their alphas first, then the blending (past the end of the
       batch, the last Gaussian's alpha is computed again and not used) */
    for (int j = 0; !dq && j < cnt; j += FWD_ILP) {
        float a[FWD_ILP];
        for (int u = 0; u < FWD_ILP; u++) {
            int jj = min(j + u, cnt - 1);
            float2 d = l_xy[jj] - pf;
            float4 co = l_co[jj];
            float power = -0.5f * (co.x * d.x * d.x + co.z * d.y * d.y) - co.y * d.x * d.y;
            a[u] = power > 0.f ? 0.f : min(CS_ALPHA_MAX, co.w * PIX_EXP(power)); /* 0: skipped below */
        }
        for (int u = 0; u < FWD_ILP && !dq && j + u < cnt; u++) {
            contributor++;
            float alpha = a[u];
            if (alpha < CS_ALPHA_MIN) continue;
            float test_T = Tq * (1.f - alpha);
            if (test_T < CS_T_MIN) {
                dq = 1;
                continue;
            }
            int jj = j + u;
            Cq += (float3)(l_rgb[jj * 3], l_rgb[jj * 3 + 1], l_rgb[jj * 3 + 2]) * alpha * Tq;
            if (WITH_DEPTH) {
                *Dsum += l_z[jj] * alpha * Tq;
                if (Tq >= 0.5f && test_T < 0.5f) *Dmed = l_z[jj];
            }
            Tq = test_T;
            lastq = contributor; /* 1-based position in the tile's list */
        }
    }
    *T = Tq;
    *C = Cq;
    *last = lastq;
    return dq;
}

static inline void blend_tile(__global const uint *tile_order, /* (tiles) the tile of each work-group */
                            __global const uint *ranges,        /* (tiles, 2): start, end */
                            __global const uint *sorted_pairs,  /* (M) Gaussian or pair index */
                            __global const uint *pair_gid,      /* (M) Gaussian of a pair index */
                            __global const float2 *xy,          /* (N) */
                            __global const float4 *conic_opacity,
                            __global const float *rgb,          /* (N, 3) */
                            int W, int H, int tiles_x, float4 bg,
                            /* outputs */
                            __global float *out_img,            /* (3, H, W) */
                            __global float *final_T,            /* (H, W) */
                            __global uint *n_contrib,           /* (H, W) */
                            const int WITH_DEPTH,                /* a constant: the two kernels below */
                            __global const float *depth,        /* (N) camera z, when WITH_DEPTH */
                            __global float *out_depth,          /* (2, H, W) expected, median */
                            __global const uint *unit_off,      /* (tiles + 1) first backward unit of a tile */
                            __global float4 *ckpt,              /* (units, TILE * TILE) checkpoints */
                            uint chunk,                         /* pairs a unit, a multiple of BATCH */
                            uint split,                         /* tiles of as many units: rasterize_fwd_split.cl */
                            __local float2 *l_xy, __local float4 *l_co, __local float *l_rgb, __local float *l_z,
                            __local int *l_done_p)
{
#define l_done (*l_done_p)
    int lx = get_local_id(0), ly = get_local_id(1), lid = ly * TILE + lx;
    int tile = (int)tile_order[get_group_id(0)];
    if (split && unit_off[tile + 1] - unit_off[tile] >= split) return; /* blended unit by unit */
    int tx = tile % tiles_x, ty = tile / tiles_x;
    int px = tx * TILE + lx;
    uint2 range = (uint2)(ranges[2 * tile], ranges[2 * tile + 1]);
    int todo = (int)(range.y - range.x);
    int rounds = (todo + BATCH - 1) / BATCH;
    /* checkpoints: only tiles of several units; batches a unit */
    uint unit0 = unit_off[tile];
    int ck = unit_off[tile + 1] - unit0 > 1u, per_unit = (int)(chunk / BATCH), unit = 0;
    /* this work-item's pixels: T, colour, last contributor, done; `live` counts those not done */
    float2 pf[PIX_PER_ITEM];
    float T[PIX_PER_ITEM];
    float3 C[PIX_PER_ITEM];
    uint last[PIX_PER_ITEM];
    float Dsum[PIX_PER_ITEM], Dmed[PIX_PER_ITEM]; /* WITH_DEPTH: sum of w z, median depth */
    float Tu[PIX_PER_ITEM];   /* T at the start of the unit (C holds the unit's colour) */
    float3 Cp[PIX_PER_ITEM];  /* the colour of the units before */
    int done[PIX_PER_ITEM];
    int live = 0;
    for (int q = 0; q < PIX_PER_ITEM; q++) {
        int py = ty * TILE + ly + q * TILE_ROWS;
        done[q] = !(px < W && py < H);
        live += !done[q];
        pf[q] = (float2)((float)px, (float)py);
        T[q] = 1.f;
        C[q] = (float3)(0.f);
        last[q] = 0;
        Dsum[q] = 0.f;
        Dmed[q] = 0.f;
        Tu[q] = 1.f;
        Cp[q] = (float3)(0.f);
    }
    for (int r = 0; r < rounds; r++, todo -= BATCH) {
        if (ck && r > 0 && r % per_unit == 0) {
            save_ckpt(ckpt, unit0 + (uint)unit, lx, ly, Tu, C);
            unit = r / per_unit;
            for (int q = 0; q < PIX_PER_ITEM; q++) Tu[q] = T[q], Cp[q] += C[q], C[q] = (float3)(0.f);
        }
        if (lid == 0) l_done = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (live) atomic_inc(&l_done);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (l_done == 0) break;
        uint idx = range.x + (uint)(r * BATCH + lid);
        if (idx < range.y) {
            uint g = PAIR_GAUSSIAN(pair_gid, sorted_pairs[idx]);
            stage_gaussian(lid, g, xy, conic_opacity, rgb, l_xy, l_co, l_rgb);
            if (WITH_DEPTH) l_z[lid] = depth[g];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        int cnt = min(BATCH, todo);
        /* each pixel of the work-item through the staged batch in turn */
        for (int q = 0; q < PIX_PER_ITEM; q++) {
            if (done[q]) continue;
            done[q] = blend_batch(pf[q], cnt, (uint)(r * BATCH), l_xy, l_co, l_rgb, l_z, WITH_DEPTH, &T[q], &C[q],
                                  &last[q], &Dsum[q], &Dmed[q]);
            live -= done[q];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (ck) save_ckpt(ckpt, unit0 + (uint)unit, lx, ly, Tu, C);
    for (int q = 0; q < PIX_PER_ITEM; q++) C[q] += Cp[q];
    size_t hw = (size_t)W * H;
    for (int q = 0; q < PIX_PER_ITEM; q++) {
        int py = ty * TILE + ly + q * TILE_ROWS;
        if (px < W && py < H) {
            size_t pix = (size_t)py * W + px;
            final_T[pix] = T[q];
            n_contrib[pix] = last[q];
            out_img[pix] = C[q].x + T[q] * bg.x;
            out_img[hw + pix] = C[q].y + T[q] * bg.y;
            out_img[2 * hw + pix] = C[q].z + T[q] * bg.z;
            if (WITH_DEPTH) {
                float w = 1.f - T[q];
                out_depth[pix] = w > 0.f ? Dsum[q] / w : 0.f;
                out_depth[hw + pix] = Dmed[q];
            }
        }
    }
#undef l_done
}

#define RASTERIZE_FWD_ARGS                                                                                  \
    __global const uint *tile_order, __global const uint *ranges, __global const uint *sorted_pairs,        \
        __global const uint *pair_gid, __global const float2 *xy, __global const float4 *conic_opacity,      \
        __global const float *rgb, int W, int H, int tiles_x, float4 bg, __global float *out_img,             \
        __global float *final_T, __global uint *n_contrib, __global const uint *unit_off, __global float4 *ckpt, \
        uint chunk, uint split

__kernel void rasterize_fwd(RASTERIZE_FWD_ARGS)
{
    STAGE_LOCALS
    __local int l_done;
    blend_tile(tile_order, ranges, sorted_pairs, pair_gid, xy, conic_opacity, rgb, W, H, tiles_x, bg, out_img, final_T,
               n_contrib, 0, 0, 0, unit_off, ckpt, chunk, split, l_xy, l_co, l_rgb, 0, &l_done);
}

__kernel void rasterize_fwd_depth(RASTERIZE_FWD_ARGS, __global const float *depth, /* (N) camera z */
                                  __global float *out_depth)                     /* (2, H, W) */
{
    STAGE_LOCALS
    __local float l_z[BATCH];
    __local int l_done;
    blend_tile(tile_order, ranges, sorted_pairs, pair_gid, xy, conic_opacity, rgb, W, H, tiles_x, bg, out_img, final_T,
               n_contrib, 1, depth, out_depth, unit_off, ckpt, chunk, split, l_xy, l_co, l_rgb, l_z, &l_done);
}
