/* render: forward (project -> bin -> per-tile sort -> rasterize) and backward (rasterize bwd ->
 * [pair reduce] -> project bwd) launchers. */
#include "render.h"

#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "layout.h"
#include "util.h"

void cs_view_from_camera(const cs_camera *c, cs_view *v)
{
    memset(v, 0, sizeof *v);
    for (int i = 0; i < 9; i++) v->cam.s[i] = (float)c->R[i];
    for (int i = 0; i < 3; i++) v->cam.s[9 + i] = (float)c->t[i];
    double o[3];
    cs_camera_center(c, o);
    for (int i = 0; i < 3; i++) v->cam.s[12 + i] = (float)o[i];
    v->intr.s[0] = (float)c->fx;
    v->intr.s[1] = (float)c->fy;
    v->intr.s[2] = (float)c->cx;
    v->intr.s[3] = (float)c->cy;
    v->width = c->width;
    v->height = c->height;
}

void cs_view_scale(cs_view *v, int f)
{
    for (int i = 0; i < 4; i++) v->intr.s[i] /= (float)f;
    v->width /= f;
    v->height /= f;
}

void cs_renderer_init(cs_renderer *r, cs_cl *cl, const cs_kernels *k, float kernel_size)
{
    memset(r, 0, sizeof *r);
    r->cl = cl;
    r->k = k;
    r->kernel_size = kernel_size;
    r->fwd_split = -1;
    const char *env = getenv("CLSPLAT_FWD_SPLIT");
    if (env && *env) {
        long v = strtol(env, NULL, 10);
        r->fwd_split = v <= 0 ? 0 : v < 2 ? 2 : v > 1000000 ? 1000000 : (int)v;
    }
    r->chunk = cs_render_chunk(&k->opts);
}

unsigned cs_render_chunk(const cs_kernel_opts *o)
{
    unsigned tile = o->tile ? (unsigned)o->tile : 16u, pixels = o->pixels ? (unsigned)o->pixels : 1u;
    unsigned batch = tile * tile / pixels, chunk = o->cpu ? 1u << 30 : CS_CHUNK_TILES * tile * tile;
    const char *env = getenv("CLSPLAT_BWD_CHUNK");
    if (env && *env) {
        long v = strtol(env, NULL, 10);
        chunk = v <= 0 || v > (1l << 30) ? 1u << 30 : (unsigned)v; /* 2^30: one unit a tile */
    }
    return (chunk + batch - 1) / batch * batch;
}

/* every pool buffer, for trim and size queries */
#define POOL_LIST(r) \
    { &(r)->xy, &(r)->conic_opacity, &(r)->rgb, &(r)->depth, &(r)->radii, &(r)->touched, &(r)->bounds, &(r)->offsets, \
      &(r)->clamped, &(r)->v_2d, &(r)->keys, &(r)->pair_ids, &(r)->keys_alt, &(r)->vals_alt, &(r)->pair_gid, \
      &(r)->v_pair, &(r)->tile_count, &(r)->tile_cursor, &(r)->ranges, &(r)->img, &(r)->final_T, &(r)->n_contrib, \
      &(r)->depth_img, &(r)->unit_off, &(r)->unit_tile, &(r)->ckpt, &(r)->unit_last, &(r)->tile_order, &(r)->tile_classes, \
      &(r)->sort.tmp }

/* Waits for the pair-count read in flight, if any (it targets r->total_host). */
static int wait_total(cs_renderer *r)
{
    if (!r->total_ev) return 0;
    double t0 = cs_now();
    cl_int e = clWaitForEvents(1, &r->total_ev);
    r->cl->wait_seconds += cs_now() - t0;
    clReleaseEvent(r->total_ev);
    r->total_ev = NULL;
    if (e != CL_SUCCESS) return cs_fail("clWaitForEvents (pair count read) failed: %s", cs_cl_strerror(e));
    return 0;
}

int cs_renderer_use_kernels(cs_renderer *r, const cs_kernels *k)
{
    if (wait_total(r)) return -1; /* a count in flight belongs to the last view's kernels */
    if (k->opts.tile != r->k->opts.tile) r->pairs_seen_max = 0, r->pair_guess = 0; /* another tile's counts */
    r->k = k;
    r->chunk = cs_render_chunk(&k->opts);
    return 0;
}

static void release_pool(cs_renderer *r)
{
    wait_total(r); /* normally done by cs_render_confirm already; the pool is released either way */
    cs_buf *all[] = POOL_LIST(r);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cs_buf_free(r->cl, all[i]);
    /* the next pair buffers fit the largest view seen since the last trim */
    if (r->pairs_seen_max) r->pair_guess = r->pairs_seen_max;
    r->pairs_seen_max = 0;
    r->pair_cap = 0;
}

size_t cs_renderer_pool_bytes(const cs_renderer *rc)
{
    cs_renderer *r = (cs_renderer *)rc;
    cs_buf *all[] = POOL_LIST(r);
    size_t s = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) s += all[i]->bytes;
    return s;
}

void cs_renderer_trim(cs_renderer *r)
{
    if (r->pinned) {
        wait_total(r);
        return;
    }
    release_pool(r);
}

void cs_renderer_free(cs_renderer *r)
{
    release_pool(r);
    r->pinned = 0;
}

cs_render_footprint cs_renderer_footprint(const cs_kernel_opts *o)
{
    cs_render_footprint f;
    /* projection outputs, the 2D gradient row */
    f.per_gaussian = CS_PROJ_BYTES + CS_V2D_W * 4;
    f.per_pair = CS_PAIR_BYTES + (o->deterministic ? CS_PAIR_BYTES_DETERMINISTIC : 0);
    f.per_pixel = 3 * 4 + 4 + 4; /* image, final transmittance, last contributor */
    /* the backward's units: at most one a tile beyond one every chunk pairs, each with its tile
       id and a checkpoint of the tile's pixels; each tile's first unit and its place in the
       forward's order; its range, pair count and cursor; a unit's last contributors (the
       split forward) */
    size_t tile = o->tile > 0 ? (size_t)o->tile : 16, chunk = cs_render_chunk(o), ck = tile * tile * 20 + 4;
    f.per_pair += (ck + chunk - 1) / chunk;
    f.per_tile = ck + 4 + 4 + 8 + 4 + 4;
    return f;
}


static int reserve(cs_renderer *r, cs_buf *b, size_t bytes, const char *what)
{
    if (b->mem && b->bytes >= bytes) return 0;
    if (b->mem) cs_buf_free(r->cl, b);
    return cs_buf_alloc(r->cl, b, CS_MEM_SCRATCH, bytes, what);
}

/* the unit buffers for views of TILES tiles and CAP pairs */
static int reserve_units(cs_renderer *r, size_t tiles, size_t cap)
{
    size_t T = (size_t)r->k->opts.tile, units = cap / r->chunk + tiles;
    return reserve(r, &r->unit_off, (tiles + 1) * 4, "backward unit offsets") ||
                   reserve(r, &r->tile_order, tiles * 4, "forward tile order") ||
                   reserve(r, &r->tile_classes, 2 * CS_TILE_CLASSES * 4, "tile classes") ||
                   reserve(r, &r->unit_tile, units * 4, "backward unit tiles") ||
                   reserve(r, &r->ckpt, units * T * T * 16, "backward unit checkpoints") ||
                   reserve(r, &r->unit_last, units * T * T * 4, "units' last contributors")
               ? -1
               : 0;
}

/* the pair_gid kernel argument: the pair -> Gaussian map in deterministic mode; otherwise the
   sorted values are the Gaussians themselves and the kernels never read it (any buffer) */
static cl_mem pair_gid_arg(const cs_renderer *r)
{
    return r->k->opts.deterministic ? r->pair_gid.mem : r->pair_ids.mem;
}

/* the 2D launch of the rasterizer: GROUPS work-groups in a row (the forward's tiles in
   tile_order, the backward's units), each of a tile's width by tile / pixels rows */
static void tile_launch(const cs_renderer *r, size_t groups, size_t gt[2], size_t lt[2])
{
    size_t T = (size_t)r->k->opts.tile, rows = T / (size_t)r->k->opts.pixels;
    gt[0] = groups * T, gt[1] = rows;
    lt[0] = T, lt[1] = rows;
}

/* per-view buffers that do not depend on the pair count */
static int reserve_view(cs_renderer *r, size_t N, size_t px, size_t tiles)
{
    return reserve(r, &r->xy, N * 8, "projected means") || reserve(r, &r->conic_opacity, N * 16, "conics") ||
           reserve(r, &r->rgb, N * 12, "colours") || reserve(r, &r->depth, N * 4, "depths") ||
           reserve(r, &r->radii, N * 4, "radii") || reserve(r, &r->touched, N * 4, "tiles touched") ||
           reserve(r, &r->bounds, N * 8, "screen bounds") ||
           reserve(r, &r->offsets, N * 4, "pair offsets") || reserve(r, &r->clamped, N * 4, "colour clamp mask") ||
           reserve(r, &r->tile_count, (tiles + 1) * 4, "tile pair counts") ||
           reserve(r, &r->tile_cursor, tiles * 4, "tile cursors") || reserve(r, &r->ranges, tiles * 8, "tile ranges") ||
           reserve(r, &r->img, 3 * px * 4, "rendered image") ||
           reserve(r, &r->final_T, px * 4, "final transmittance") ||
           reserve(r, &r->n_contrib, px * 4, "last contributor");
}

/* the pair buffers for CAP pairs */
static int reserve_pairs(cs_renderer *r, size_t cap)
{
    return reserve(r, &r->keys, cap * 4, "pair depth keys") || reserve(r, &r->pair_ids, cap * 4, "pair values") ||
           reserve(r, &r->keys_alt, cap * 4, "pair keys (merges)") ||
           reserve(r, &r->vals_alt, cap * 4, "pair values (merges)") ||
           (r->k->opts.deterministic && reserve(r, &r->pair_gid, cap * 4, "pair Gaussians")) ? -1 : 0;
}

int cs_renderer_pin(cs_renderer *r, size_t N, size_t pixels, size_t tiles, size_t pairs)
{
    if (pairs > 0xfffff000u) pairs = 0xfffff000u;
    size_t scanned = N > tiles + 1 ? N : tiles + 1; /* offsets (deterministic), tile counts, units */
    int det = r->k->opts.deterministic;
    if (reserve_view(r, N, pixels, tiles) || reserve(r, &r->v_2d, N * CS_V2D_W * 4, "2D gradients") ||
        reserve_pairs(r, pairs) || reserve_units(r, tiles, pairs) ||
        (det && reserve(r, &r->v_pair, pairs * CS_V2D_W * 4, "per-pair gradients")) ||
        cs_sort_reserve(r->cl, &r->sort, (unsigned)scanned))
        return -1;
    r->pinned = 1;
    return 0;
}

/* project_fwd: 2D means, conics, colours, depths, radii and tiles touched per Gaussian */
static int project(cs_renderer *r, const cs_model *m, const cs_view *v, int active_degree)
{
    const cs_kernels *k = r->k;
    int n = m->n, W = v->width, H = v->height;
    size_t lp = k->wg[CS_WG_PROJECT], g = (size_t)n;
    cl_mem filt = m->layout.filter_3d ? m->filter3d.mem : m->geo.mem;
    return cs_cl_run(r->cl, k->project_fwd, CS_STAGE_PROJECT, 1, &g, &lp, CS_ARG(n), CS_ARG(m->geo.mem),
                     CS_ARG(m->sh.mem), CS_ARG(filt), CS_ARG(v->cam), CS_ARG(v->intr), CS_ARG(W), CS_ARG(H),
                     CS_ARG(r->tiles_x), CS_ARG(r->tiles_y), CS_ARG(active_degree), CS_ARG(r->kernel_size),
                     CS_ARG(r->xy.mem), CS_ARG(r->conic_opacity.mem), CS_ARG(r->rgb.mem), CS_ARG(r->depth.mem),
                     CS_ARG(r->radii.mem), CS_ARG(r->touched.mem), CS_ARG(r->bounds.mem), CS_ARG(r->clamped.mem));
}

/* the binning's per-tile counters in local memory (bin.cl): when the view's fit beside what a
   work-group needs otherwise */
static int bin_use_local(const cs_renderer *r, unsigned tiles)
{
    return !r->bin_global && (cl_ulong)tiles * 4 + 1024 <= r->cl->local_mem;
}

/* each tile's pair count, scanned into its first place (the total last, read back without
   waiting: cs_render_confirm); in deterministic mode each Gaussian's first slot too */
static int count_pairs(cs_renderer *r, int n, unsigned tiles)
{
    cs_cl *cl = r->cl;
    const cs_kernels *k = r->k;
    size_t l = k->wg[CS_WG_BIN], g = (size_t)n;
    cl_uint zero = 0;
    int loc = bin_use_local(r, tiles);
    if (cs_buf_fill(cl, &r->tile_count, 0, ((size_t)tiles + 1) * 4, &zero, 4) ||
        (n > 0 && cs_cl_run(cl, k->bin_count_tiles, CS_STAGE_SORT, 1, &g, &l, CS_ARG(n), CS_ARG(r->bounds.mem),
                            CS_ARG(r->xy.mem), CS_ARG(r->conic_opacity.mem), CS_ARG(r->tiles_x), CS_ARG(tiles),
                            CS_ARG(loc), CS_LOCAL(loc ? (size_t)tiles * 4 : 4), CS_ARG(r->tile_count.mem))) ||
        cs_scan(cl, k, &r->sort, &r->tile_count, tiles + 1, CS_STAGE_SORT))
        return -1;
    if (k->opts.deterministic && n > 0) {
        CS_CHECK(clEnqueueCopyBuffer(cl->queue, r->touched.mem, r->offsets.mem, 0, 0, (size_t)n * 4, 0, NULL, NULL));
        if (cs_scan(cl, k, &r->sort, &r->offsets, (unsigned)n, CS_STAGE_SORT)) return -1;
    }
    CS_CHECK(clEnqueueReadBuffer(cl->queue, r->tile_count.mem, CL_FALSE, (size_t)tiles * 4, 4, &r->total_host, 0, NULL,
                                 &r->total_ev));
    CS_CHECK(clFlush(cl->queue));
    return 0;
}

/* each tile's range from its first place and cursor (bin_tile_units), the backward's units
   from them (a scan of their counts, the total last) and each unit's tile, and the forward's
   tile order (bin_tile_order) */
static int bin_units(cs_renderer *r, unsigned tiles)
{
    cs_cl *cl = r->cl;
    const cs_kernels *k = r->k;
    size_t l = k->wg[CS_WG_BIN], g1 = (size_t)tiles + 1, g = tiles;
    cl_uint zero = 0;
    return cs_buf_fill(cl, &r->tile_classes, 0, 2 * CS_TILE_CLASSES * 4, &zero, 4) ||
                   cs_cl_run(cl, k->bin_tile_units, CS_STAGE_SORT, 1, &g1, &l, CS_ARG(tiles), CS_ARG(r->chunk),
                             CS_ARG(r->pair_cap), CS_ARG(r->tile_count.mem), CS_ARG(r->tile_cursor.mem),
                             CS_ARG(r->ranges.mem), CS_ARG(r->unit_off.mem), CS_ARG(r->tile_classes.mem)) ||
                   cs_scan(cl, k, &r->sort, &r->unit_off, tiles + 1, CS_STAGE_SORT) ||
                   cs_cl_run(cl, k->bin_unit_tiles, CS_STAGE_SORT, 1, &g, &l, CS_ARG(tiles), CS_ARG(r->unit_off.mem),
                             CS_ARG(r->unit_tile.mem)) ||
                   cs_cl_run(cl, k->bin_tile_order, CS_STAGE_SORT, 1, &g, &l, CS_ARG(tiles), CS_ARG(r->ranges.mem),
                             CS_ARG(r->tile_classes.mem), CS_ARG(r->tile_order.mem))
               ? -1
               : 0;
}

/* the pairs, each tile's at its place and sorted front to back (bin.cl), and the ranges */
static int bin_pairs(cs_renderer *r, int n)
{
    cs_cl *cl = r->cl;
    const cs_kernels *k = r->k;
    /* pair capacity: the largest count seen (or a guess from the Gaussian count before any
       view), with CS_PAIR_MARGIN (5/4); an overflow is caught by cs_render_confirm */
    if (!r->pair_cap) {
        size_t want = r->pair_guess ? (size_t)r->pair_guess + r->pair_guess / 4 : (size_t)n * 4;
        r->pair_cap = (unsigned)(want < 256 ? 256 : want > 0xfffff000u ? 0xfffff000u : want);
    }
    unsigned cap = r->pair_cap;
    unsigned tiles = (unsigned)(r->tiles_x * r->tiles_y);
    if (reserve_pairs(r, cap) || reserve_units(r, tiles, cap)) return -1;
    cl_mem pair_gid = pair_gid_arg(r);
    size_t l = k->wg[CS_WG_BIN], g = (size_t)n, ls = CS_SORT_WG, gs = (size_t)tiles * CS_SORT_WG;
    CS_CHECK(clEnqueueCopyBuffer(cl->queue, r->tile_count.mem, r->tile_cursor.mem, 0, 0, (size_t)tiles * 4, 0, NULL,
                                 NULL));
    int loc = bin_use_local(r, tiles);
    if (n > 0 && cs_cl_run(cl, k->bin_emit_pairs, CS_STAGE_SORT, 1, &g, &l, CS_ARG(n), CS_ARG(r->bounds.mem),
                           CS_ARG(r->xy.mem), CS_ARG(r->conic_opacity.mem), CS_ARG(r->depth.mem),
                           CS_ARG(r->offsets.mem), CS_ARG(r->tiles_x), CS_ARG(tiles), CS_ARG(loc),
                           CS_LOCAL(loc ? (size_t)tiles * 4 : 4), CS_ARG(cap), CS_ARG(r->tile_count.mem),
                           CS_ARG(r->tile_cursor.mem), CS_ARG(r->keys.mem), CS_ARG(r->pair_ids.mem), CS_ARG(pair_gid)))
        return -1;
    size_t gc = ((size_t)cap / r->chunk + tiles) * CS_SORT_WG; /* a group a unit, at most */
    return bin_units(r, tiles) ||
                   cs_cl_run(cl, k->bin_sort_chunks, CS_STAGE_SORT, 1, &gc, &ls, CS_ARG(tiles), CS_ARG(r->unit_off.mem),
                             CS_ARG(r->unit_tile.mem), CS_ARG(r->ranges.mem), CS_ARG(r->keys.mem),
                             CS_ARG(r->pair_ids.mem)) ||
                   cs_cl_run(cl, k->bin_sort_tiles, CS_STAGE_SORT, 1, &gs, &ls, CS_ARG(r->tile_order.mem),
                             CS_ARG(r->ranges.mem), CS_ARG(r->keys.mem), CS_ARG(r->pair_ids.mem),
                             CS_ARG(r->keys_alt.mem), CS_ARG(r->vals_alt.mem))
               ? -1
               : 0;
}

unsigned cs_render_split(const cs_renderer *r, unsigned tiles)
{
    if (r->fwd_split >= 0) return (unsigned)r->fwd_split;
    /* H100 (132 compute units), rasterize_fwd serial against split at 2 units. lego 7k model:
       800x800 (2,500 tiles) 0.43 ms against 0.54 with tiles of 8 units split; 400x400 0.87
       against 0.44, 200x200 1.97 against 0.37, 100x100 3.34 against 0.31. fast.json's model at
       iteration 500 (15,691 Gaussians): 400x400, 145 pairs a tile, 0.12 against 0.21; 200x200,
       269 a tile, 0.20 against 0.19; at iteration 2000 (92k): 400x400, 379 a tile, 0.40 against
       0.32; 200x200, 999 a tile, 0.76 against 0.26 */
    if (tiles >= CS_FWD_SPLIT_TILES_PER_CU * (unsigned)r->cl->compute_units) return 0u;
    return (size_t)r->n_pairs >= (size_t)CS_FWD_SPLIT_PAIRS_PER_TILE * tiles ? 2u : 0u;
}

/* the tiles of r->fwd_split units or more, unit by unit (rasterize_fwd_split.cl): each unit
   alone, the units where pixels stop again from their T there, then each tile's merge */
static int rasterize_split(cs_renderer *r, const cs_view *v, cl_float4 bgv, unsigned split)
{
    cs_cl *cl = r->cl;
    const cs_kernels *k = r->k;
    int W = v->width, H = v->height;
    unsigned tiles = (unsigned)(r->tiles_x * r->tiles_y);
    size_t gu[2], lu[2], gt[2], lt[2];
    tile_launch(r, (size_t)r->pair_cap / r->chunk + tiles, gu, lu);
    tile_launch(r, tiles, gt, lt);
    cl_mem pair_gid = pair_gid_arg(r);
    const cs_arg unit_args[] = {CS_ARG(tiles), CS_ARG(split), CS_ARG(r->chunk), CS_ARG(r->unit_off.mem),
                                CS_ARG(r->unit_tile.mem), CS_ARG(r->ranges.mem), CS_ARG(r->pair_ids.mem),
                                CS_ARG(pair_gid), CS_ARG(r->xy.mem), CS_ARG(r->conic_opacity.mem), CS_ARG(r->rgb.mem),
                                CS_ARG(W), CS_ARG(H), CS_ARG(r->tiles_x), CS_ARG(r->ckpt.mem), CS_ARG(r->unit_last.mem),
                                CS_ARG(r->img.mem), CS_ARG(r->final_T.mem), CS_ARG(r->n_contrib.mem)};
    int nu = (int)(sizeof unit_args / sizeof unit_args[0]);
    return cs_cl_launch(cl, k->rasterize_fwd_unit, CS_STAGE_RASTER_FWD, 2, gu, lu, unit_args, nu - 3) ||
                   cs_cl_launch(cl, k->rasterize_fwd_replay, CS_STAGE_RASTER_FWD, 2, gu, lu, unit_args, nu) ||
                   cs_cl_run(cl, k->rasterize_fwd_merge, CS_STAGE_RASTER_FWD, 2, gt, lt, CS_ARG(split),
                             CS_ARG(r->tile_order.mem), CS_ARG(r->unit_off.mem), CS_ARG(W), CS_ARG(H),
                             CS_ARG(r->tiles_x), CS_ARG(bgv), CS_ARG(r->ckpt.mem), CS_ARG(r->unit_last.mem),
                             CS_ARG(r->img.mem), CS_ARG(r->final_T.mem), CS_ARG(r->n_contrib.mem))
               ? -1
               : 0;
}

/* rasterize_fwd: front-to-back blending per tile; rasterize_fwd_depth takes two more
   arguments and writes the depths too (and blends every tile itself) */
static int rasterize(cs_renderer *r, const cs_view *v, const float bg[3])
{
    int W = v->width, H = v->height;
    size_t gt[2], lt[2];
    tile_launch(r, (size_t)r->tiles_x * r->tiles_y, gt, lt);
    cl_float4 bgv = {{bg[0], bg[1], bg[2], 0.f}};
    cl_mem pair_gid = pair_gid_arg(r);
    unsigned split = r->want_depth ? 0u : cs_render_split(r, (unsigned)(r->tiles_x * r->tiles_y));
    if (r->want_depth && reserve(r, &r->depth_img, (size_t)2 * W * H * 4, "depth images")) return -1;
    const cs_arg args[] = {CS_ARG(r->tile_order.mem), CS_ARG(r->ranges.mem), CS_ARG(r->pair_ids.mem), CS_ARG(pair_gid),
                           CS_ARG(r->xy.mem), CS_ARG(r->conic_opacity.mem), CS_ARG(r->rgb.mem), CS_ARG(W), CS_ARG(H),
                           CS_ARG(r->tiles_x), CS_ARG(bgv), CS_ARG(r->img.mem), CS_ARG(r->final_T.mem), CS_ARG(r->n_contrib.mem),
                           CS_ARG(r->unit_off.mem), CS_ARG(r->ckpt.mem), CS_ARG(r->chunk), CS_ARG(split),
                           CS_ARG(r->depth.mem), CS_ARG(r->depth_img.mem)};
    int n = (int)(sizeof args / sizeof args[0]);
    if (cs_cl_launch(r->cl, r->want_depth ? r->k->rasterize_fwd_depth : r->k->rasterize_fwd, CS_STAGE_RASTER_FWD, 2,
                     gt, lt, args, r->want_depth ? n : n - 2))
        return -1;
    return split ? rasterize_split(r, v, bgv, split) : 0;
}

int cs_render_forward(cs_renderer *r, const cs_model *m, const cs_view *v, int active_degree, const float bg[3])
{
    size_t N = (size_t)(m->capacity > 0 ? m->capacity : 1);
    int T = r->k->opts.tile;
    r->tiles_x = (v->width + T - 1) / T;
    r->tiles_y = (v->height + T - 1) / T;
    if (r->tiles_x > CS_BOUNDS_MAX_TILES || r->tiles_y > CS_BOUNDS_MAX_TILES)
        return cs_fail("a %dx%d view has more than %d tiles a side (screen bounds are 16-bit tile coordinates)",
                       v->width, v->height, CS_BOUNDS_MAX_TILES);
    size_t px = (size_t)v->width * v->height, tiles = (size_t)r->tiles_x * r->tiles_y;
    if (reserve_view(r, N, px, tiles) || project(r, m, v, active_degree) || wait_total(r)) return -1;
    r->total_host = 0;
    return count_pairs(r, m->n, (unsigned)tiles) || bin_pairs(r, m->n) || rasterize(r, v, bg) ? -1 : 0;
}

int cs_render_confirm(cs_renderer *r)
{
    if (wait_total(r)) return -1;
    unsigned total = r->total_host;
    if (total > r->pairs_seen_max) r->pairs_seen_max = total;
    if (total <= r->pair_cap) {
        r->n_pairs = total;
        return 0;
    }
    /* the pairs past the capacity were dropped: grow (at the next forward) and redo */
    r->pair_guess = total;
    r->pair_cap = 0;
    r->redone++;
    return 1;
}

int cs_render_forward_sync(cs_renderer *r, const cs_model *m, const cs_view *v, int active_degree, const float bg[3])
{
    for (;;) {
        if (cs_render_forward(r, m, v, active_degree, bg)) return -1;
        int c = cs_render_confirm(r);
        if (c <= 0) return c;
    }
}

int cs_render_backward_2d(cs_renderer *r, const cs_model *m, const cs_view *v, const float bg[3], const cs_buf *v_img)
{
    cs_cl *cl = r->cl;
    const cs_kernels *k = r->k;
    int n = m->n, W = v->width, H = v->height;
    size_t N = (size_t)(m->capacity > 0 ? m->capacity : 1);
    if (reserve(r, &r->v_2d, N * CS_V2D_W * 4, "2D gradients")) return -1;
    int det = k->opts.deterministic;
    if (det && reserve(r, &r->v_pair, (size_t)r->pair_cap * CS_V2D_W * 4, "per-pair gradients")) return -1;
    if (!det) {
        float zero = 0.f;
        if (n > 0 && cs_buf_fill(cl, &r->v_2d, 0, (size_t)n * CS_V2D_W * 4, &zero, 4)) return -1;
    }
    /* one work-group a unit: as many as the pairs' capacity allows; those past the total return */
    size_t gt[2], lt[2];
    int tiles = r->tiles_x * r->tiles_y;
    tile_launch(r, (size_t)r->pair_cap / r->chunk + (size_t)tiles, gt, lt);
    cl_float4 bgv = {{bg[0], bg[1], bg[2], 0.f}};
    cl_mem out = det ? r->v_pair.mem : r->v_2d.mem, pair_gid = pair_gid_arg(r);
    if (cs_cl_run(cl, k->rasterize_bwd, CS_STAGE_RASTER_BWD, 2, gt, lt, CS_ARG(r->ranges.mem), CS_ARG(r->pair_ids.mem),
                  CS_ARG(pair_gid), CS_ARG(r->xy.mem), CS_ARG(r->conic_opacity.mem), CS_ARG(r->rgb.mem), CS_ARG(W),
                  CS_ARG(H), CS_ARG(r->tiles_x), CS_ARG(bgv), CS_ARG(r->final_T.mem), CS_ARG(r->n_contrib.mem),
                  CS_ARG(v_img->mem), CS_ARG(tiles), CS_ARG(r->unit_off.mem), CS_ARG(r->unit_tile.mem),
                  CS_ARG(r->ckpt.mem), CS_ARG(r->chunk), CS_ARG(out)))
        return -1;
    size_t l = k->wg[CS_WG_BIN], g = (size_t)n;
    return det && cs_cl_run(cl, k->bin_reduce_pairs, CS_STAGE_RASTER_BWD, 1, &g, &l, CS_ARG(n), CS_ARG(r->pair_cap),
                            CS_ARG(r->offsets.mem), CS_ARG(r->touched.mem), CS_ARG(r->v_pair.mem),
                            CS_ARG(r->v_2d.mem))
               ? -1
               : 0;
}

int cs_render_backward(cs_renderer *r, cs_model *m, const cs_view *v, int active_degree, const float bg[3],
                       const cs_buf *v_img)
{
    if (cs_render_backward_2d(r, m, v, bg, v_img)) return -1;
    cs_cl *cl = r->cl;
    const cs_kernels *k = r->k;
    int n = m->n, W = v->width, H = v->height;
    size_t lp = k->wg[CS_WG_PROJECT_BWD], g = (size_t)n;
    cl_mem filt = m->layout.filter_3d ? m->filter3d.mem : m->geo.mem;
    return cs_cl_run(cl, k->project_bwd, CS_STAGE_PROJECT_BWD, 1, &g, &lp, CS_ARG(n), CS_ARG(m->geo.mem),
                     CS_ARG(m->sh.mem), CS_ARG(filt), CS_ARG(v->cam), CS_ARG(v->intr), CS_ARG(W), CS_ARG(H),
                     CS_ARG(active_degree), CS_ARG(r->kernel_size), CS_ARG(r->radii.mem), CS_ARG(r->clamped.mem),
                     CS_ARG(r->v_2d.mem), CS_ARG(m->v_geo.mem), CS_ARG(m->v_sh.mem),
                     CS_LOCAL(cs_stage_bytes(lp)));
}

int cs_render_read_image(cs_renderer *r, int W, int H, cs_image *img)
{
    size_t n = (size_t)W * H;
    float *f = malloc(sizeof(float) * 3 * n);
    *img = (cs_image){W, H, 3, malloc(3 * n)};
    if (!f || !img->px) {
        free(f);
        cs_image_free(img);
        return cs_fail("out of host memory (a %dx%d render)", W, H);
    }
    int rc = cs_buf_read(r->cl, &r->img, 0, sizeof(float) * 3 * n, f);
    for (size_t i = 0; i < n && !rc; i++)
        for (int c = 0; c < 3; c++) {
            float v = f[c * n + i] * 255.f + 0.5f;
            img->px[i * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    free(f);
    if (rc) cs_image_free(img);
    return rc;
}

int cs_render_read_alpha(cs_renderer *r, int W, int H, float *alpha)
{
    size_t n = (size_t)W * H;
    int rc = cs_buf_read(r->cl, &r->final_T, 0, sizeof(float) * n, alpha);
    for (size_t i = 0; i < n && !rc; i++) alpha[i] = 1.f - alpha[i];
    return rc;
}

int cs_render_read_depth(cs_renderer *r, int W, int H, float *depth)
{
    if (!r->want_depth || !r->depth_img.mem) return cs_fail("no depth rendered (cs_renderer.want_depth unset)");
    return cs_buf_read(r->cl, &r->depth_img, 0, sizeof(float) * 2 * (size_t)W * H, depth);
}

int cs_render_save_png(cs_renderer *r, int W, int H, const char *path)
{
    cs_image img;
    if (cs_render_read_image(r, W, H, &img)) return -1;
    int rc = cs_image_save_png(path, &img);
    cs_image_free(&img);
    return rc;
}
