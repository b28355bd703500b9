/* rasterize_fwd_split.cl: the forward of crowded tiles, their units blended in parallel (#35).
 * rasterize_fwd blends a tile's whole list in one work-group, so a view whose tiles hold tens
 * of thousands of pairs (a model drawn smaller than it was trained) runs on a few groups: H100,
 * lego 7k model, 0.47 ms at 800x800, 1.9 ms at 200x200, 3.2 ms at 100x100. Tiles of SPLIT
 * units or more (bin_tile_units: CHUNK pairs a unit) are blended here instead, in three
 * launches:
 *   rasterize_fwd_unit    a group a unit: the colour and transmittance the unit alone blends
 *                         from T = 1, into its checkpoint (xyz, w), and its last contributor
 *                         (unit_last). A pixel that falls below CS_T_MIN from T = 1 is marked
 *                         (the high bit): from any lower T it stops in this unit at the latest.
 *   rasterize_fwd_replay  a group a unit: each pixel's T at the unit's start, the product of
 *                         the earlier units' own. The unit where the pixel stops (marked, or
 *                         its start T times its own falls below CS_T_MIN: unit_stops) blends
 *                         its pairs again from that T as rasterize_fwd would, into the image
 *                         (the colour alone), final_T and n_contrib.
 *   rasterize_fwd_merge   a group a tile: each pixel's colour summed over its units up to that
 *                         one, the final image, and each checkpoint's T at the unit's start
 *                         (what rasterize_bwd.cl reads; the colour stays the unit's own).
 * The replay and the merge decide where a pixel stops from the same products in the same
 * order, so they agree. The image is rasterize_fwd's to rounding: a unit's colour is summed
 * from T = 1 and scaled, where the serial loop sums from the running T. Pairs past where a
 * pixel stops are blended by rasterize_fwd_unit anyway; so only crowded tiles come here. */

/* A pixel that reaches a unit with transmittance A stops in it: the unit marked it (LF's high
   bit), or the unit's own transmittance TU takes A below CS_T_MIN. */
inline int unit_stops(float A, float Tu, uint lf) { return (lf >> 31) != 0u || A * Tu < CS_T_MIN; }

/* This work-group's unit, when its tile has SPLIT units or more: the tile, the unit's index K
   in it, the tile's first pair RS and the unit's pairs [*s, *e). 0 otherwise. */
inline int split_unit(uint tiles, uint split, uint chunk, __global const uint *unit_off,
                      __global const uint *unit_tile, __global const uint *ranges, uint *tile, uint *k, uint *rs,
                      uint *s, uint *e)
{
    uint u = get_group_id(0);
    if (u >= unit_off[tiles]) return 0;
    uint t = unit_tile[u], u0 = unit_off[t];
    if (unit_off[t + 1] - u0 < split) return 0;
    *tile = t;
    *k = u - u0;
    *rs = ranges[2 * t];
    *s = *rs + *k * chunk;
    *e = min(*s + chunk, ranges[2 * t + 1]);
    return 1;
}

/* Blends pairs [s, e) of the sorted list (tile list from RS) into the work-item's pixels whose
   RUN is set, from their T, C and LAST; a pixel that stops clears RUN and sets STOP. */
inline void blend_unit(uint rs, uint s, uint e, __global const uint *sorted_pairs, __global const uint *pair_gid,
                       __global const float2 *xy, __global const float4 *conic_opacity, __global const float *rgb,
                       const float2 pf[PIX_PER_ITEM], int run[PIX_PER_ITEM], int stop[PIX_PER_ITEM],
                       float T[PIX_PER_ITEM], float3 C[PIX_PER_ITEM], uint last[PIX_PER_ITEM],
                       __local float2 *l_xy, __local float4 *l_co, __local float *l_rgb, __local int *l_live)
{
    int lid = get_local_id(1) * TILE + get_local_id(0), live = 0, todo = (int)(e - s);
    float unused = 0.f;
    for (int q = 0; q < PIX_PER_ITEM; q++) live += run[q];
    for (uint b = s; b < e; b += BATCH, todo -= BATCH) {
        if (lid == 0) *l_live = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (live) atomic_inc(l_live);
        barrier(CLK_LOCAL_MEM_FENCE);
        if (*l_live == 0) break;
        uint idx = b + (uint)lid;
        if (idx < e) stage_gaussian(lid, PAIR_GAUSSIAN(pair_gid, sorted_pairs[idx]), xy, conic_opacity, rgb, l_xy, l_co, l_rgb);
        barrier(CLK_LOCAL_MEM_FENCE);
        int cnt = min(BATCH, todo);
        for (int q = 0; q < PIX_PER_ITEM; q++) {
            if (!run[q]) continue;
            if (blend_batch(pf[q], cnt, b - rs, l_xy, l_co, l_rgb, 0, 0, &T[q], &C[q], &last[q], &unused, &unused)) {
                run[q] = 0;
                stop[q] = 1;
                live--;
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

#define SPLIT_UNIT_ARGS                                                                                     \
    uint tiles, uint split, uint chunk, __global const uint *unit_off, __global const uint *unit_tile,      \
        __global const uint *ranges, __global const uint *sorted_pairs, __global const uint *pair_gid,      \
        __global const float2 *xy, __global const float4 *conic_opacity, __global const float *rgb, int W, \
        int H, int tiles_x, __global float4 *ckpt, __global uint *unit_last

/* The two passes over a unit, one body with REPLAY a constant (as blend_tile's WITH_DEPTH).
 * REPLAY 0 (rasterize_fwd_unit): every pixel from T = 1; the colour and T into the unit's
 * checkpoint, the last contributor and the stop mark into unit_last.
 * REPLAY 1 (rasterize_fwd_replay): each pixel's start T, the product of the earlier units' own
 * up to where unit_stops says it stopped; the pixels that stop in this unit blend from it, into
 * the image (the colour alone), final_T and n_contrib. */
static inline void unit_pass(uint tiles, uint split, uint chunk, __global const uint *unit_off,
                             __global const uint *unit_tile, __global const uint *ranges,
                             __global const uint *sorted_pairs, __global const uint *pair_gid,
                             __global const float2 *xy, __global const float4 *conic_opacity, __global const float *rgb,
                             int W, int H, int tiles_x, __global float4 *ckpt, __global uint *unit_last,
                             const int REPLAY, __global float *out_img, __global float *final_T,
                             __global uint *n_contrib, __local float2 *l_xy, __local float4 *l_co, __local float *l_rgb,
                             __local int *l_live)
{
    uint tile, k, rs, s, e;
    if (!split_unit(tiles, split, chunk, unit_off, unit_tile, ranges, &tile, &k, &rs, &s, &e)) return;
    int lx = get_local_id(0), ly = get_local_id(1), px = (int)(tile % (uint)tiles_x) * TILE + lx;
    int py0 = (int)(tile / (uint)tiles_x) * TILE + ly;
    /* the tile's units' checkpoints and last contributors, at this work-item's column */
    __global float4 *ck = ckpt + (size_t)unit_off[tile] * (TILE * TILE) + (size_t)ly * TILE + lx;
    __global uint *ul = unit_last + (size_t)unit_off[tile] * (TILE * TILE) + (size_t)ly * TILE + lx;
    float2 pf[PIX_PER_ITEM];
    float T[PIX_PER_ITEM];
    float3 C[PIX_PER_ITEM];
    uint last[PIX_PER_ITEM];
    int run[PIX_PER_ITEM], stop[PIX_PER_ITEM], here[PIX_PER_ITEM];
    for (int q = 0; q < PIX_PER_ITEM; q++) {
        int py = py0 + q * TILE_ROWS;
        size_t p = (size_t)q * TILE_ROWS * TILE;
        float A = 1.f;
        int go = px < W && py < H;
        for (uint v = 0; REPLAY && go && v < k; v++) {
            float Tv = ck[(size_t)v * (TILE * TILE) + p].w;
            if (unit_stops(A, Tv, ul[(size_t)v * (TILE * TILE) + p])) go = 0;
            A *= Tv;
        }
        size_t i = (size_t)k * (TILE * TILE) + p;
        here[q] = run[q] = REPLAY ? go && unit_stops(A, ck[i].w, ul[i]) : go;
        pf[q] = (float2)((float)px, (float)py);
        stop[q] = 0;
        T[q] = A;
        C[q] = (float3)(0.f);
        last[q] = 0u;
    }
    blend_unit(rs, s, e, sorted_pairs, pair_gid, xy, conic_opacity, rgb, pf, run, stop, T, C, last, l_xy, l_co, l_rgb,
               l_live);
    size_t hw = (size_t)W * H;
    for (int q = 0; q < PIX_PER_ITEM; q++) {
        size_t i = (size_t)k * (TILE * TILE) + (size_t)q * TILE_ROWS * TILE;
        if (!REPLAY) {
            ck[i] = (float4)(C[q], T[q]);
            ul[i] = last[q] | ((uint)stop[q] << 31);
            continue;
        }
        if (!here[q]) continue;
        size_t pix = (size_t)(py0 + q * TILE_ROWS) * W + px;
        out_img[pix] = C[q].x;
        out_img[hw + pix] = C[q].y;
        out_img[2 * hw + pix] = C[q].z;
        final_T[pix] = T[q];
        n_contrib[pix] = last[q];
    }
}

/* OpenCL C 1.2 declares __local memory at kernel scope: each kernel has its staging arrays */
__kernel void rasterize_fwd_unit(SPLIT_UNIT_ARGS)
{
    STAGE_LOCALS
    __local int l_live;
    unit_pass(tiles, split, chunk, unit_off, unit_tile, ranges, sorted_pairs, pair_gid, xy, conic_opacity, rgb, W, H,
              tiles_x, ckpt, unit_last, 0, 0, 0, 0, l_xy, l_co, l_rgb, &l_live);
}

__kernel void rasterize_fwd_replay(SPLIT_UNIT_ARGS, __global float *out_img, __global float *final_T,
                                   __global uint *n_contrib)
{
    STAGE_LOCALS
    __local int l_live;
    unit_pass(tiles, split, chunk, unit_off, unit_tile, ranges, sorted_pairs, pair_gid, xy, conic_opacity, rgb, W, H,
              tiles_x, ckpt, unit_last, 1, out_img, final_T, n_contrib, l_xy, l_co, l_rgb, &l_live);
}

__kernel void rasterize_fwd_merge(uint split, __global const uint *tile_order, __global const uint *unit_off, int W,
                                  int H, int tiles_x, float4 bg, __global float4 *ckpt,
                                  __global const uint *unit_last, __global float *out_img, __global float *final_T,
                                  __global uint *n_contrib)
{
    uint tile = tile_order[get_group_id(0)], u0 = unit_off[tile], units = unit_off[tile + 1] - u0;
    if (units < split) return;
    int lx = get_local_id(0), ly = get_local_id(1), px = (int)(tile % (uint)tiles_x) * TILE + lx;
    __global float4 *ck = ckpt + (size_t)u0 * (TILE * TILE);
    __global const uint *ul = unit_last + (size_t)u0 * (TILE * TILE);
    size_t hw = (size_t)W * H;
    for (int q = 0; q < PIX_PER_ITEM; q++) {
        int py = (int)(tile / (uint)tiles_x) * TILE + ly + q * TILE_ROWS, p = (ly + q * TILE_ROWS) * TILE + lx;
        if (px >= W || py >= H) continue;
        size_t pix = (size_t)py * W + px;
        float A = 1.f, T = -1.f;
        float3 C = (float3)(0.f);
        uint last = 0u;
        for (uint v = 0; v < units && T < 0.f; v++) {
            size_t i = (size_t)v * (TILE * TILE) + p;
            float4 c = ck[i];
            uint lf = ul[i];
            if (unit_stops(A, c.w, lf)) { /* the replay's colour, T and last contributor */
                float3 Cr = (float3)(out_img[pix], out_img[hw + pix], out_img[2 * hw + pix]);
                C += Cr;
                last = n_contrib[pix] ? n_contrib[pix] : last;
                T = final_T[pix];
                ck[i] = (float4)(Cr / A, A);
            } else {
                C += A * c.xyz;
                last = (lf & 0x7fffffffu) ? (lf & 0x7fffffffu) : last;
                ck[i] = (float4)(c.xyz, A);
                A *= c.w;
            }
        }
        T = T < 0.f ? A : T;
        out_img[pix] = C.x + T * bg.x;
        out_img[hw + pix] = C.y + T * bg.y;
        out_img[2 * hw + pix] = C.z + T * bg.z;
        final_T[pix] = T;
        n_contrib[pix] = last;
    }
}
