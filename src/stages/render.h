/* render: launchers for projection, binning + sort, rasterization, forward and backward,
 * with their per-view scratch in a pool that grows to the largest view and is trimmed on
 * request (memory.flush_interval). */
#ifndef CS_RENDER_H
#define CS_RENDER_H

#include "cl_mem.h"
#include "cl_runtime.h"
#include "kernels.h"
#include "model.h"
#include "camera.h"
#include "image.h"
#include "sort.h"

typedef struct {
    cl_float16 cam;  /* R (9) | t (3) | centre (3) | 0 */
    cl_float4 intr;  /* fx fy cx cy */
    int width, height;
} cs_view;

typedef struct {
    cs_cl *cl;
    const cs_kernels *k;
    float kernel_size;
    /* per Gaussian */
    cs_buf xy, conic_opacity, rgb, depth, radii, touched, bounds, offsets, clamped, v_2d;
    /* per pair: depth key, value (bin.cl), the two again for long tiles' merges; the pair ->
       Gaussian map and per-pair gradient rows in deterministic mode */
    cs_buf keys, pair_ids, keys_alt, vals_alt, pair_gid, v_pair;
    /* per tile: pair counts, scanned into first places (tiles + 1, the total last), and the
       emission's cursors (tiles) */
    cs_buf tile_count, tile_cursor;
    /* per tile / pixel */
    cs_buf ranges, img, final_T, n_contrib;
    /* the backward's units (bin.cl bin_tile_units): each tile's first unit (tiles + 1), the
       tile of each unit, and the forward's checkpoints (units * tile pixels, 16 bytes each) */
    cs_buf unit_off, unit_tile, ckpt;
    /* a crowded tile's forward, unit by unit (rasterize_fwd_split.cl): each unit's last
       contributor a pixel (units * tile pixels, 4 bytes each); fwd_split: tiles of as many
       units or more go that way (0: none), or -1: chosen by the view (cs_render_split) */
    cs_buf unit_last;
    int fwd_split;
    /* the forward's tiles, heaviest first (bin.cl bin_tile_order): (tiles), and the count and
       places taken of each pair-count class (2, CS_TILE_CLASSES) */
    cs_buf tile_order, tile_classes;
    unsigned chunk; /* pairs a backward unit replays: a multiple of the rasterizer's batch */
    cs_buf depth_img; /* (2, H, W) expected and median depth, when want_depth */
    cs_sort_scratch sort;
    /* The pair count is read back without blocking (total_host, total_ev) while the pairs are
       built and sorted in buffers of pair_cap entries sized from earlier views: pair_guess is
       the largest count seen before the last trim, pairs_seen_max the largest since. */
    cl_uint total_host;
    cl_event total_ev;
    unsigned pair_cap, pair_guess, pairs_seen_max;
    unsigned n_pairs; /* the last confirmed view's pair count */
    int redone;       /* forward passes redone after an overflow (a statistic) */
    int tiles_x, tiles_y;
    int want_depth; /* 1: forwards also write depth_img (rasterize_fwd_depth) */
    int pinned;     /* cs_renderer_pin: the pool is allocated once and trims keep it */
    int bin_global; /* 1: the binning's counters only in global memory (tests; else local when they fit) */
} cs_renderer;

/* The kernels' view of a camera: float pose, centre and intrinsics. */
void cs_view_from_camera(const cs_camera *c, cs_view *v);
/* V at 1/F of its width and height (rounded down; the focal lengths and principal point scaled),
 * the pixels of cs_loss_gt_scaled's ground truth. */
void cs_view_scale(cs_view *v, int f);
/* An empty renderer on CL with K's kernels and the mip 2D filter variance KERNEL_SIZE; the
 * pool grows at the first view. Its backward units hold cs_render_chunk(K's options) pairs. */
void cs_renderer_init(cs_renderer *r, cs_cl *cl, const cs_kernels *k, float kernel_size);
/* Renders with K's kernels from the next view on (another tile size, say): the pool's buffers
 * grow to what they need at the next view, and the backward's units follow K's options. At
 * another tile the pair counts seen so far no longer size the pair buffers. */
int cs_renderer_use_kernels(cs_renderer *r, const cs_kernels *k);
/* Enqueues the rendering of the model's first n Gaussians (does not block); the image will be in r->img (3, H,
 * W). The pair buffers are sized before the pair count is known: cs_render_confirm must be
 * called before anything reads the result for good. */
int cs_render_forward(cs_renderer *r, const cs_model *m, const cs_view *v, int active_degree, const float bg[3]);
/* Waits for the last forward's pair count: 0 when it fit the pair buffers (r->n_pairs is set),
 * 1 when it did not (the buffers grow; the forward and anything computed from it, e.g. the
 * backward, must be run again), -1 on error. */
int cs_render_confirm(cs_renderer *r);
/* The least units of a tile that the forward of a view of TILES tiles blends unit by unit
   (0: none): two where the view has too few tiles to fill the device and the last confirmed
   view's pairs (n_pairs) would make them deep, none otherwise. */
unsigned cs_render_split(const cs_renderer *r, unsigned tiles);
/* cs_render_forward + cs_render_confirm, redone until the pairs fit (blocks for the count). */
int cs_render_forward_sync(cs_renderer *r, const cs_model *m, const cs_view *v, int active_degree, const float bg[3]);
/* Enqueues the backward from V_IMG (3, H, W), the loss's image gradient, to m->v_geo /
 * m->v_sh, with d/d(mean2d ...) per Gaussian in r->v_2d (CS_V2D_* rows); does not block. */
/* The rasterizer's part of the backward: the per-Gaussian 2D gradients of V_IMG into r->v_2d
 * (means, conics, opacity, colour), the model's gradients left alone (the error score reads
 * the colour row). Enqueued after cs_render_forward of the same view. */
int cs_render_backward_2d(cs_renderer *r, const cs_model *m, const cs_view *v, const float bg[3], const cs_buf *v_img);
int cs_render_backward(cs_renderer *r, cs_model *m, const cs_view *v, int active_degree, const float bg[3],
                       const cs_buf *v_img);
/* Reads r->img (3, H, W) back (blocks) into a new 8-bit RGB image (clamped, rounded). */
int cs_render_read_image(cs_renderer *r, int W, int H, cs_image *img);
/* Reads the last forward's depths (want_depth set) into DEPTH (2 * W * H floats): the expected
 * depth, then the median depth, camera z; 0 where no surface covers the pixel. */
int cs_render_read_depth(cs_renderer *r, int W, int H, float *depth);
/* Reads the last forward's opacity, 1 - its final transmittance, into ALPHA (W * H floats). */
int cs_render_read_alpha(cs_renderer *r, int W, int H, float *alpha);
/* cs_render_read_image, written as a PNG atomically. */
int cs_render_save_png(cs_renderer *r, int W, int H, const char *path);
/* Releases all scratch (waiting for a pair-count read in flight); the next view allocates
 * exactly what it needs. A pinned pool is kept. */
void cs_renderer_trim(cs_renderer *r);
/* Allocates the whole pool now for N Gaussians, views of at most PIXELS pixels and TILES
 * tiles, and PAIRS pairs (with the sort's scratch), and pins it: trims keep it, so the pool's
 * memory is known from the start and never changes unless a view needs more pairs (then the
 * pair buffers grow as without a pin). Launch sizes still follow the pair counts seen. */
int cs_renderer_pin(cs_renderer *r, size_t N, size_t pixels, size_t tiles, size_t pairs);
/* Bytes the pool holds now. */
size_t cs_renderer_pool_bytes(const cs_renderer *r);

/* What the renderer's pool holds for a view, per Gaussian, per pair and per pixel, for the
 * memory plan and the benchmark (the pool allocates by the same numbers). Pair buffers get a
 * CS_PAIR_MARGIN on top of the largest pair count seen. */
typedef struct {
    size_t per_gaussian, per_pair, per_pixel, per_tile;
} cs_render_footprint;
/* The footprint under the kernel options O (deterministic mode adds per-pair rows). */
cs_render_footprint cs_renderer_footprint(const cs_kernel_opts *o);
#define CS_PAIR_MARGIN 1.25
/* Pairs a backward unit replays under the kernel options O: CS_CHUNK_TILES tiles' pixels on a
 * GPU, one unit a tile on a CPU (o->cpu: there the units only add work, PoCL's test_fast_config
 * 105 -> 117 s), or CLSPLAT_BWD_CHUNK (a measurement knob: pairs, rounded up to the batch; 0 =
 * one unit a tile). */
#define CS_CHUNK_TILES 2
/* A view of fewer tiles than this many a compute unit, after a view of at least
   CS_FWD_SPLIT_PAIRS_PER_TILE pairs a tile of it, blends its tiles of two units or more unit by
   unit, in parallel (rasterize_fwd_split.cl); CLSPLAT_FWD_SPLIT=N sets the least units for
   every view (0: never). */
#define CS_FWD_SPLIT_TILES_PER_CU 8
#define CS_FWD_SPLIT_PAIRS_PER_TILE 256
unsigned cs_render_chunk(const cs_kernel_opts *o);
/* cs_renderer_trim; the renderer may be dropped afterwards. */
void cs_renderer_free(cs_renderer *r);

#endif
