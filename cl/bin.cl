/* bin.cl: pairs (Gaussian, tile) in depth order. The Gaussians are first sorted by depth
 * (bin_depth_keys + radix sort over N), then each one, in that order, emits one pair per
 * touched tile with the tile id as key; a stable sort by the tile bits alone then leaves each
 * tile's pairs front to back, the same order as graphdeco's sort of (tile | depth) keys, ties
 * included (both break them by Gaussian index), at 8 passes over N + tile bits / 4 passes
 * over the pairs instead of (32 + tile bits) / 4 passes over the pairs. The sorted value is
 * the Gaussian itself, or with DETERMINISTIC the pair index (pair_gid maps it back), whose
 * per-pair gradient row bin_reduce_pairs sums in a fixed order. */

/* culled Gaussians sort last (0xffffffff is above every positive float's bits) */
__kernel void bin_depth_keys(int n, __global const int *radii, __global const float *depth, __global uint *keys,
                             __global uint *order)
{
    int i = get_global_id(0);
    if (i >= n) return;
    keys[i] = radii[i] > 0 ? as_uint(depth[i]) : 0xffffffffu;
    order[i] = (uint)i;
}

/* counts[j] = tiles touched by the j-th Gaussian in depth order */
__kernel void bin_gather_counts(int n, __global const uint *order, __global const uint *touched, __global uint *counts)
{
    int j = get_global_id(0);
    if (j < n) counts[j] = touched[order[j]];
}

/* total pairs = exclusive scan at n-1 + the last Gaussian's count */
__kernel void bin_pair_total(int n, __global const uint *offsets, __global const uint *order,
                             __global const uint *touched, __global uint *total)
{
    if (get_global_id(0) == 0) total[0] = n > 0 ? offsets[n - 1] + touched[order[n - 1]] : 0u;
}

/* Every Gaussian's pairs: one for each tile of its screen bounds (the tile rectangle its
 * conic reaches at CS_ALPHA_MIN) that its ellipse reaches, row by row as project_fwd counted
 * them (tile_row_span; with DETERMINISTIC every tile of the rectangle). The emission keeps to
 * the count: should it find fewer tiles than project_fwd counted (the two may round apart),
 * the rest of its slots get the filler tile id TILES (sorted after every tile, in no range). */
__kernel void bin_emit_pairs(int n, __global const uint *order,
                             __global const uint2 *bounds, /* (N) CS_BOUNDS_* of each Gaussian, empty when culled */
                             __global const float2 *xy, __global const float4 *conic_opacity,
                             __global const uint *touched, /* (N) the pairs counted for each */
                             __global const uint *offsets, /* (N) exclusive scan of counts in depth order */
                             int tiles_x, int tiles_y,
                             uint cap,                     /* pair buffers' capacity: pairs past it are dropped */
                             __global uint *keys,          /* (M) tile id */
                             __global uint *pair_vals,     /* (M) Gaussian, or pair index (DETERMINISTIC) */
                             __global uint *pair_gid)      /* (M) Gaussian of each pair (DETERMINISTIC) */
{
    int j = get_global_id(0);
    if (j >= n) return;
    uint i = order[j];
    int2 rmin, rmax;
    CS_BOUNDS_UNPACK(bounds[i], rmin, rmax);
    uint off = offsets[j], end = min(off + touched[i], cap);
#if DETERMINISTIC
    (void)xy, (void)conic_opacity, (void)tiles_y;
    for (int y = rmin.y; y < rmax.y; y++)
        for (int x = rmin.x; x < rmax.x && off < end; x++) {
            keys[off] = (uint)(y * tiles_x + x);
            pair_vals[off] = off;
            pair_gid[off] = i;
            off++;
        }
#else
    (void)pair_gid;
    float2 m2 = xy[i];
    float4 co = conic_opacity[i];
    float tau = tile_tau(co);
    for (int y = rmin.y; y < rmax.y && off < end; y++) {
        int c0, c1;
        tile_row_span(m2, co, tau, y, rmin.x, rmax.x, &c0, &c1);
        for (int x = c0; x < c1 && off < end; x++) {
            keys[off] = (uint)(y * tiles_x + x);
            pair_vals[off] = i;
            off++;
        }
    }
    for (; off < end; off++) { /* filler: the emission found fewer tiles than counted */
        keys[off] = (uint)(tiles_x * tiles_y);
        pair_vals[off] = i;
    }
#endif
}

/* ranges must be zeroed first; count[0] (capped at cap) pairs are sorted; tile t's pairs are
 * [ranges[2t], ranges[2t+1]) in the sorted list; filler pairs (tile id TILES, sorted last) are
 * in no range. Start and end of one tile are written by different work-items, so they are
 * separate uint stores: a component store into a uint2 may be a read-modify-write of both
 * halves (NVIDIA compiles it so) and would race. */
__kernel void bin_tile_ranges(uint cap, uint tiles, __global const uint *count, __global const uint *keys,
                              __global uint *ranges)
{
    uint i = get_global_id(0), m = min(count[0], cap);
    if (i >= m) return;
    uint tile = keys[i];
    if (tile >= tiles) return;
    if (i == 0 || keys[i - 1] != tile) ranges[2 * tile] = i;
    if (i == m - 1 || keys[i + 1] != tile) ranges[2 * tile + 1] = i + 1;
}

/* The forward's tile order (#35): heaviest first. A GPU starts work-groups roughly in launch
 * order, so a crowded tile launched late runs alone after the others have finished; launched
 * first, it runs beside them. Tiles are bucketed by pair count (two classes an octave,
 * CS_TILE_CLASSES, empty tiles last): bin_tile_units counts each class, bin_tile_order places
 * every tile after the heavier classes. Within a class the order is whatever the atomics give:
 * every tile is blended on its own, so the order changes no result, only when each tile runs. */
inline uint tile_class(uint len)
{
    if (len == 0u) return CS_TILE_CLASSES - 1u;
    uint lg = 31u - clz(len), upper = lg > 0u ? (len >> (lg - 1u)) & 1u : 0u;
    return (CS_TILE_CLASSES - 2u) - min(CS_TILE_CLASSES - 2u, 2u * lg + upper);
}

/* the group's tiles counted by class into COUNT (local), then added to CLASS_COUNT */
inline void tile_class_count(int is_tile, uint len, __local uint *count, __global uint *class_count)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    for (uint c = lid; c < CS_TILE_CLASSES; c += ls) count[c] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (is_tile) atomic_inc(&count[tile_class(len)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint c = lid; c < CS_TILE_CLASSES; c += ls)
        if (count[c]) atomic_add(&class_count[c], count[c]);
}

/* Backward work units (load balance, #35): the backward replays a tile's pairs in units of
 * CHUNK pairs (a multiple of BATCH), one work-group each, so a crowded tile is spread over
 * several groups instead of running alone at the end. units[t] = tile t's unit count for
 * t < tiles and units[tiles] = 0: their exclusive scan is each tile's first unit and, last,
 * the total. The forward leaves a checkpoint a unit (rasterize_fwd.cl). */
__kernel void bin_tile_units(uint tiles, uint chunk, __global const uint *ranges, __global uint *units,
                             __global uint *class_count) /* (CS_TILE_CLASSES) tiles a class, zeroed first */
{
    __local uint count[CS_TILE_CLASSES];
    uint t = get_global_id(0);
    uint len = t < tiles ? ranges[2 * t + 1] - ranges[2 * t] : 0u;
    if (t <= tiles) units[t] = len ? (len - 1u) / chunk + 1u : 0u;
    tile_class_count(t < tiles, len, count, class_count);
}

/* unit_tile[u] = the tile of unit u, from the scanned unit offsets */
__kernel void bin_unit_tiles(uint tiles, __global const uint *unit_off, __global uint *unit_tile)
{
    uint t = get_global_id(0);
    if (t >= tiles) return;
    for (uint u = unit_off[t]; u < unit_off[t + 1]; u++) unit_tile[u] = t;
}

/* tile_order: each tile at its class's start + the places other groups took in the class
   before + its rank in the group (see the tile order above) */
__kernel void bin_tile_order(uint tiles, __global const uint *ranges, /* (tiles, 2) */
                             __global uint *classes,  /* (2, CS_TILE_CLASSES) tiles a class; places taken, zeroed */
                             __global uint *tile_order)             /* (tiles) */
{
    __global const uint *class_count = classes;
    __global uint *class_next = classes + CS_TILE_CLASSES;
    __local uint next[CS_TILE_CLASSES];
    uint t = get_global_id(0), lid = get_local_id(0), ls = get_local_size(0);
    uint c = t < tiles ? tile_class(ranges[2 * t + 1] - ranges[2 * t]) : 0u;
    for (uint k = lid; k < CS_TILE_CLASSES; k += ls) next[k] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint rank = t < tiles ? atomic_inc(&next[c]) : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* the group's first place in each class: the heavier classes, then the places other groups took */
    for (uint k = lid; k < CS_TILE_CLASSES; k += ls) {
        uint before = 0u;
        for (uint j = 0; j < k; j++) before += class_count[j];
        next[k] = next[k] ? before + atomic_add(&class_next[k], next[k]) : 0u;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < tiles) tile_order[next[c] + rank] = t;
}

/* Deterministic mode: sum each Gaussian's per-pair gradients in a fixed order. */
__kernel void bin_reduce_pairs(int n, uint cap, __global const uint *order, __global const uint *offsets,
                               __global const uint *tiles_touched,
                               __global const float *v_pair, /* (M, 9) */
                               __global float *v_2d)         /* (N, 9) */
{
    int j = get_global_id(0);
    if (j >= n) return;
    uint i = order[j];
    float acc[CS_V2D_W];
    for (int k = 0; k < CS_V2D_W; k++) acc[k] = 0.f;
    uint s = offsets[j], e = min(s + tiles_touched[i], cap); /* past cap: an overflowed pass, redone */
    for (uint p = s; p < e; p++)
        for (int k = 0; k < CS_V2D_W; k++) acc[k] += v_pair[(size_t)p * CS_V2D_W + k];
    for (int k = 0; k < CS_V2D_W; k++) v_2d[(size_t)i * CS_V2D_W + k] = acc[k];
}
