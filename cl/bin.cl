/* bin.cl: pairs (Gaussian, tile), each tile's front to back. Each tile's pairs are counted
 * (bin_count_tiles), the counts scanned into the tiles' first places, and every Gaussian then
 * puts its pairs in its tiles' next free places (bin_emit_pairs, atomic cursors): unordered
 * within a tile. bin_sort_tiles then sorts each tile's pairs by (depth, value) in local memory,
 * one work-group a tile. The value is the Gaussian, or with DETERMINISTIC the pair's slot
 * (pair_gid maps it back; slots follow the Gaussians' order), so ties in depth go by Gaussian
 * index: the order of graphdeco's sort of (tile | depth) keys, ties included. That replaces a
 * depth sort of every Gaussian and a stable sort of the pairs by tile (11 radix passes and ~35
 * launches a view, #35) with a handful of launches. With DETERMINISTIC each pair's per-pair
 * gradient row is its slot, and bin_reduce_pairs sums a Gaussian's slots in a fixed order. */

/* places taken a batch at a time in bin_emit_pairs (lego, H100: 0.119 -> 0.104 ms at 8) */
#define BIN_EMIT_BATCH 8

/* the tiles of row Y a Gaussian's pairs go to: the span its alpha >= 1/255 ellipse reaches
 * (tile_row_span), or with DETERMINISTIC the whole rectangle's row (project_fwd counts the same) */
inline void pair_row(float2 m2, float4 co, float tau, int y, int2 rmin, int2 rmax, int *c0, int *c1)
{
#if DETERMINISTIC
    (void)m2, (void)co, (void)tau, (void)y;
    *c0 = rmin.x, *c1 = rmax.x;
#else
    tile_row_span(m2, co, tau, y, rmin.x, rmax.x, c0, c1);
#endif
}

/* Tile counters in local memory (USE_LOCAL, when the view's TILES counters fit, LOCAL
 * holding them): a work-group first counts its Gaussians' pairs there, then adds each
 * non-zero count to the global counter once. A crowded tile takes thousands of pairs, and
 * global atomics on one address queue up (lego, H100: bin_count_tiles 0.08 ms with one
 * global atomic a pair). */
inline void local_zero(__local uint *lc, uint tiles)
{
    for (uint t = get_local_id(0); t < tiles; t += get_local_size(0)) lc[t] = 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* adds the Gaussian's pairs to the work-group's tile counters LC (both kernels count the same way) */
inline void count_local(__local uint *lc, int2 rmin, int2 rmax, float2 m2, float4 co, int tiles_x)
{
    float tau = tile_tau(co);
    for (int y = rmin.y; y < rmax.y; y++) {
        int c0, c1;
        pair_row(m2, co, tau, y, rmin, rmax, &c0, &c1);
        for (int x = c0; x < c1; x++) atomic_add(&lc[y * tiles_x + x], 1u);
    }
}

/* the Gaussian's tiles (its bounds unpacked; empty when culled or past N) */
inline void gaussian_tiles(int i, int n, __global const uint2 *bounds, __global const float2 *xy,
                           __global const float4 *conic_opacity, int2 *rmin, int2 *rmax, float2 *m2, float4 *co)
{
    *rmin = *rmax = (int2)(0, 0);
    if (i >= n) return;
    CS_BOUNDS_UNPACK(bounds[i], *rmin, *rmax);
    if (rmax->x <= rmin->x || rmax->y <= rmin->y) {
        *rmin = *rmax = (int2)(0, 0);
        return;
    }
    *m2 = xy[i];
    *co = conic_opacity[i];
}

/* counts[t] += the pairs tile t gets (counts zeroed first; (tiles + 1), the last stays 0) */
__kernel void bin_count_tiles(int n, __global const uint2 *bounds, __global const float2 *xy,
                              __global const float4 *conic_opacity, int tiles_x, uint tiles, int use_local,
                              __local uint *lc, __global uint *counts)
{
    int2 rmin, rmax;
    float2 m2 = (float2)(0.f);
    float4 co = (float4)(0.f);
    gaussian_tiles(get_global_id(0), n, bounds, xy, conic_opacity, &rmin, &rmax, &m2, &co);
    if (!use_local) {
        float tau = tile_tau(co);
        for (int y = rmin.y; y < rmax.y; y++) {
            int c0, c1;
            pair_row(m2, co, tau, y, rmin, rmax, &c0, &c1);
            for (int x = c0; x < c1; x++) atomic_add(&counts[y * tiles_x + x], 1u);
        }
        return;
    }
    local_zero(lc, tiles);
    count_local(lc, rmin, rmax, m2, co, tiles_x);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint t = get_local_id(0); t < tiles; t += get_local_size(0))
        if (lc[t]) atomic_add(&counts[t], lc[t]);
}

/* Every Gaussian's pairs, at its tiles' cursors (a copy of STARTS, the scanned counts, whose
 * last entry is the total): key its depth's bits, value the Gaussian (or its slot). With
 * USE_LOCAL the work-group counts its pairs a tile, takes that many places from the global
 * cursor at once, and hands them out from local memory. A place at or past the tile's end or
 * CAP is not written; bin_tile_units makes the ranges from the cursors, empty when the total
 * is over CAP (the pass is redone, cs_render_confirm). */
__kernel void bin_emit_pairs(int n, __global const uint2 *bounds, __global const float2 *xy,
                             __global const float4 *conic_opacity, __global const float *depth,
                             __global const uint *offsets, /* (N) each Gaussian's first slot (DETERMINISTIC) */
                             int tiles_x, uint tiles, int use_local, __local uint *lc, uint cap,
                             __global const uint *starts,  /* (tiles + 1) */
                             __global uint *cursor,        /* (tiles) */
                             __global uint *keys,          /* (cap) depth bits */
                             __global uint *pair_vals,     /* (cap) Gaussian, or slot (DETERMINISTIC) */
                             __global uint *pair_gid)      /* (cap) Gaussian of each slot (DETERMINISTIC) */
{
    int i = get_global_id(0);
    int2 rmin, rmax;
    float2 m2 = (float2)(0.f);
    float4 co = (float4)(0.f);
    gaussian_tiles(i, n, bounds, xy, conic_opacity, &rmin, &rmax, &m2, &co);
    float tau = tile_tau(co);
    if (use_local) {
        local_zero(lc, tiles);
        count_local(lc, rmin, rmax, m2, co, tiles_x);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint t = get_local_id(0); t < tiles; t += get_local_size(0))
            if (lc[t]) lc[t] = atomic_add(&cursor[t], lc[t]); /* the group's first place in tile t */
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (rmax.x <= rmin.x) return;
    uint key = as_uint(depth[i]);
#if DETERMINISTIC
    uint slot = offsets[i];
#else
    (void)offsets, (void)pair_gid;
#endif
    for (int y = rmin.y; y < rmax.y; y++) {
        int c0, c1;
        pair_row(m2, co, tau, y, rmin, rmax, &c0, &c1);
        for (int x0 = c0; x0 < c1; x0 += BIN_EMIT_BATCH) {
            /* the batch's places first: the atomics are in flight together, not one by one */
            uint pos[BIN_EMIT_BATCH];
            for (int q = 0; q < BIN_EMIT_BATCH; q++) {
                int t = y * tiles_x + x0 + q;
                if (x0 + q < c1) pos[q] = use_local ? atomic_add(&lc[t], 1u) : atomic_add(&cursor[t], 1u);
            }
            for (int q = 0; q < BIN_EMIT_BATCH && x0 + q < c1; q++) {
                uint t = (uint)(y * tiles_x + x0 + q);
                if (pos[q] < min(starts[t + 1], cap)) {
                    keys[pos[q]] = key;
#if DETERMINISTIC
                    pair_vals[pos[q]] = slot;
                    if (slot < cap) pair_gid[slot] = (uint)i;
#else
                    pair_vals[pos[q]] = (uint)i;
#endif
                }
#if DETERMINISTIC
                slot++;
#endif
            }
        }
    }
}

/* ---- each tile's pairs sorted by (depth bits, value) ---------------------------------------
 * A tile of up to CS_TILE_SORT_CAP pairs is sorted in local memory (bitonic, padded to a
 * power of two with pairs above every real one). A longer tile is sorted in chunks of that
 * size (bin_sort_chunks, a work-group a chunk), then one work-group merges the chunks pairwise
 * in global memory (bin_sort_tiles: each item finds its part of the output by a binary search
 * along the merge path, then merges it alone), through
 * KEYS_ALT / VALS_ALT and back. Keys are unique within a tile (a value appears once), so the
 * order is total. */
inline int pair_less(uint ka, uint va, uint kb, uint vb) { return ka < kb || (ka == kb && va < vb); }

/* sorts the first P (a power of two) pairs of SK / SV in place */
inline void local_bitonic(__local uint *sk, __local uint *sv, uint P)
{
    uint lid = get_local_id(0), ls = get_local_size(0);
    for (uint k = 2; k <= P; k <<= 1)
        for (uint j = k >> 1; j > 0; j >>= 1) {
            for (uint t = lid; t < P / 2; t += ls) {
                uint a = ((t & ~(j - 1u)) << 1) | (t & (j - 1u)), b = a + j;
                uint ka = sk[a], kb = sk[b], va = sv[a], vb = sv[b];
                int up = (a & k) == 0u;
                if (up ? pair_less(kb, vb, ka, va) : pair_less(ka, va, kb, vb)) {
                    sk[a] = kb, sk[b] = ka, sv[a] = vb, sv[b] = va;
                }
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
}

/* sorts the LEN <= CS_TILE_SORT_CAP pairs at KEYS / VALS + S; writes the keys back too with KEEP_KEYS */
inline void sort_chunk(__global uint *keys, __global uint *vals, uint s, uint len, int keep_keys, __local uint *sk,
                       __local uint *sv)
{
    uint lid = get_local_id(0), ls = get_local_size(0), P = 2;
    while (P < len) P <<= 1;
    for (uint q = lid; q < P; q += ls) {
        sk[q] = q < len ? keys[s + q] : 0xffffffffu;
        sv[q] = q < len ? vals[s + q] : 0xffffffffu;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    local_bitonic(sk, sv, P);
    for (uint q = lid; q < len; q += ls) {
        vals[s + q] = sv[q];
        if (keep_keys) keys[s + q] = sk[q];
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* the next chunk's loads overwrite sk / sv */
}

/* merges the sorted runs A = [0, LA) and B = [LA, LA + LB) at SK / SV + S into DK / DV + S */
inline void merge_runs(__global const uint *sk, __global const uint *sv, __global uint *dk, __global uint *dv, uint s,
                       uint la, uint lb)
{
    uint lid = get_local_id(0), ls = get_local_size(0), total = la + lb, per = (total + ls - 1) / ls;
    uint d0 = min(lid * per, total), d1 = min(d0 + per, total);
    if (d0 >= d1) return;
    __global const uint *ak = sk + s, *av = sv + s, *bk = sk + s + la, *bv = sv + s + la;
    /* i = how many of the first d0 outputs come from A */
    /* signed: LLVM turns the unsigned form into llvm.usub.sat, which oclgrind cannot run */
    uint lo = (uint)max((int)d0 - (int)lb, 0), hi = min(d0, la);
    while (lo < hi) {
        uint mid = (lo + hi) / 2u, o = d0 - 1u - mid;
        if (pair_less(ak[mid], av[mid], bk[o], bv[o])) lo = mid + 1u;
        else hi = mid;
    }
    uint i = lo, j = d0 - lo;
    for (uint d = d0; d < d1; d++) {
        int from_a = j >= lb || (i < la && pair_less(ak[i], av[i], bk[j], bv[j]));
        dk[s + d] = from_a ? ak[i] : bk[j];
        dv[s + d] = from_a ? av[i] : bv[j];
        if (from_a) i++;
        else j++;
    }
}

/* Work-groups by unit (bin_tile_units): unit K of a tile of U units sorts the tile's chunks K,
 * K + U, ... of CS_TILE_SORT_CAP pairs (a unit usually holds fewer pairs than a chunk, so each
 * chunk has its own group and a crowded tile's chunks are sorted side by side); the keys are
 * written back for the tiles that bin_sort_tiles merges. */
__kernel void bin_sort_chunks(uint tiles, __global const uint *unit_off, __global const uint *unit_tile,
                              __global const uint *ranges, __global uint *keys, __global uint *vals)
{
    __local uint sk[CS_TILE_SORT_CAP], sv[CS_TILE_SORT_CAP];
    uint u = get_group_id(0);
    if (u >= unit_off[tiles]) return;
    uint t = unit_tile[u], u0 = unit_off[t], units = unit_off[t + 1] - u0;
    uint s = ranges[2 * t], len = ranges[2 * t + 1] - s;
    if (len < 2u) return;
    for (uint c = (u - u0) * CS_TILE_SORT_CAP; c < len; c += units * CS_TILE_SORT_CAP)
        sort_chunk(keys, vals, s + c, min((uint)CS_TILE_SORT_CAP, len - c), len > CS_TILE_SORT_CAP, sk, sv);
}

/* one work-group a tile of more than one chunk, in tile_order (heaviest first, so the long
   merges start first): the sorted chunks merged */
__kernel void bin_sort_tiles(__global const uint *tile_order, __global const uint *ranges, __global uint *keys,
                             __global uint *vals, __global uint *keys_alt, __global uint *vals_alt)
{
    uint t = tile_order[get_group_id(0)], s = ranges[2 * t], len = ranges[2 * t + 1] - s;
    if (len <= CS_TILE_SORT_CAP) return;
    __global uint *ak = keys, *av = vals, *bk = keys_alt, *bv = vals_alt;
    for (uint w = CS_TILE_SORT_CAP; w < len; w <<= 1) {
        barrier(CLK_GLOBAL_MEM_FENCE); /* the last round's (or the chunks') writes */
        for (uint b = 0; b < len; b += 2u * w) {
            uint la = min(w, len - b);
            merge_runs(ak, av, bk, bv, s + b, la, min(w, len - b - la));
        }
        __global uint *tk = ak, *tv = av;
        ak = bk, av = bv, bk = tk, bv = tv;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (av != vals)
        for (uint q = get_local_id(0); q < len; q += get_local_size(0)) vals[s + q] = av[s + q];
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

/* Each tile's range of pairs, [ranges[2t], ranges[2t+1]): from its first place to its cursor
 * (the places the emission filled), empty for every tile when the total is over CAP (the pass
 * is redone, cs_render_confirm). Start and end are separate uint stores (a component store
 * into a uint2 may be a read-modify-write of both halves).
 * Backward work units (load balance, #35): the backward replays a tile's pairs in units of
 * CHUNK pairs (a multiple of BATCH), one work-group each, so a crowded tile is spread over
 * several groups instead of running alone at the end. units[t] = tile t's unit count for
 * t < tiles and units[tiles] = 0: their exclusive scan is each tile's first unit and, last,
 * the total. The forward leaves a checkpoint a unit (rasterize_fwd.cl). */
__kernel void bin_tile_units(uint tiles, uint chunk, uint cap, __global const uint *starts, /* (tiles + 1) */
                             __global const uint *cursor, __global uint *ranges, __global uint *units,
                             __global uint *class_count) /* (CS_TILE_CLASSES) tiles a class, zeroed first */
{
    __local uint count[CS_TILE_CLASSES];
    uint t = get_global_id(0), len = 0u;
    if (t < tiles) {
        uint s = starts[t], e = min(cursor[t], starts[t + 1]);
        if (starts[tiles] > cap) s = e = 0u;
        ranges[2 * t] = s;
        ranges[2 * t + 1] = e;
        len = e - s;
    }
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

/* Deterministic mode: sum each Gaussian's per-pair gradients (its slots, from its first) in a
 * fixed order. */
__kernel void bin_reduce_pairs(int n, uint cap, __global const uint *offsets, __global const uint *tiles_touched,
                               __global const float *v_pair, /* (M, 9) */
                               __global float *v_2d)         /* (N, 9) */
{
    int i = get_global_id(0);
    if (i >= n) return;
    float acc[CS_V2D_W];
    for (int k = 0; k < CS_V2D_W; k++) acc[k] = 0.f;
    uint s = offsets[i], e = min(s + tiles_touched[i], cap); /* past cap: an overflowed pass, redone */
    for (uint p = s; p < e; p++)
        for (int k = 0; k < CS_V2D_W; k++) acc[k] += v_pair[(size_t)p * CS_V2D_W + k];
    for (int k = 0; k < CS_V2D_W; k++) v_2d[(size_t)i * CS_V2D_W + k] = acc[k];
}
