/* bin.cl: duplicate each visible Gaussian once per touched tile with the sort key
 * | tile id (high 32 bits) | depth bits (low 32) |, and find each tile's range in the sorted
 * list (graphdeco duplicateWithKeys / identifyTileRanges). The sorted value is the pair
 * index; pair_gid maps it back to the Gaussian. */

__kernel void bin_emit_pairs(int n, __global const float2 *xy, __global const int *radii, __global const float *depth,
                             __global const uint *offsets, /* (N) exclusive scan of tiles touched */
                             int tiles_x, int tiles_y,
                             __global ulong *keys,         /* (M) */
                             __global uint *pair_ids,      /* (M) pair index = position */
                             __global uint *pair_gid)      /* (M) Gaussian of each pair */
{
    int i = get_global_id(0);
    if (i >= n || radii[i] <= 0) return;
    int2 rmin, rmax;
    tile_rect(xy[i], radii[i], tiles_x, tiles_y, &rmin, &rmax);
    uint off = offsets[i];
    ulong d = (ulong)as_uint(depth[i]);
    for (int y = rmin.y; y < rmax.y; y++)
        for (int x = rmin.x; x < rmax.x; x++) {
            keys[off] = ((ulong)(uint)(y * tiles_x + x) << 32) | d;
            pair_ids[off] = off;
            pair_gid[off] = (uint)i;
            off++;
        }
}

/* ranges must be zeroed first; tile t's pairs are [ranges[2t], ranges[2t+1]) in the sorted
 * list. Start and end of one tile are written by different work-items, so they are separate
 * uint stores: a component store into a uint2 may be a read-modify-write of both halves
 * (NVIDIA compiles it so) and would race. */
__kernel void bin_tile_ranges(uint m, __global const ulong *keys, __global uint *ranges)
{
    uint i = get_global_id(0);
    if (i >= m) return;
    uint tile = (uint)(keys[i] >> 32);
    if (i == 0 || (uint)(keys[i - 1] >> 32) != tile) ranges[2 * tile] = i;
    if (i == m - 1 || (uint)(keys[i + 1] >> 32) != tile) ranges[2 * tile + 1] = i + 1;
}

/* Deterministic mode: sum each Gaussian's per-pair gradients in a fixed order. */
__kernel void bin_reduce_pairs(int n, __global const uint *offsets, __global const uint *tiles_touched,
                               __global const float *v_pair, /* (M, 9) */
                               __global float *v_2d)         /* (N, 9) */
{
    int i = get_global_id(0);
    if (i >= n) return;
    float acc[V2D_W];
    for (int k = 0; k < V2D_W; k++) acc[k] = 0.f;
    uint s = offsets[i], e = s + tiles_touched[i];
    for (uint p = s; p < e; p++)
        for (int k = 0; k < V2D_W; k++) acc[k] += v_pair[(size_t)p * V2D_W + k];
    for (int k = 0; k < V2D_W; k++) v_2d[(size_t)i * V2D_W + k] = acc[k];
}
