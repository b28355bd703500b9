/* test_raster: OpenCL projection + rasterizer against the double reference (forward),
 * gradients against central finite differences of the reference, scan and sort. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "densify.h"
#include "ref_raster.h"
#include "render.h"
#include "layout.h"
#include "loss.h"
#include "pass.h"
#include "tile_choice.h"
#include "test.h"
#include "util.h"

/* ---- scene and camera generation --------------------------------------------------- */

static void look_at(const double eye[3], const double at[3], double R[9], double t[3])
{
    double f[3] = {at[0] - eye[0], at[1] - eye[1], at[2] - eye[2]};
    double n = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
    for (int k = 0; k < 3; k++) f[k] /= n;
    double up[3] = {0, 0, 1};
    double r[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2], f[0] * up[1] - f[1] * up[0]};
    n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    for (int k = 0; k < 3; k++) r[k] /= n;
    double d[3] = {f[1] * r[2] - f[2] * r[1], f[2] * r[0] - f[0] * r[2], f[0] * r[1] - f[1] * r[0]};
    for (int k = 0; k < 3; k++) R[k] = r[k], R[3 + k] = d[k], R[6 + k] = f[k];
    for (int k = 0; k < 3; k++) t[k] = -(R[k * 3] * eye[0] + R[k * 3 + 1] * eye[1] + R[k * 3 + 2] * eye[2]);
}

static void random_camera(uint64_t *rs, int W, int H, int centred, cs_camera *c)
{
    memset(c, 0, sizeof *c);
    double th = test_rand(rs) * 6.283, ph = 0.3 + test_rand(rs) * 0.8, rad = 3.5 + test_rand(rs);
    double eye[3] = {rad * cos(th) * cos(ph), rad * sin(th) * cos(ph), rad * sin(ph)}, at[3] = {0, 0, 0};
    look_at(eye, at, c->R, c->t);
    c->width = c->file_width = W;
    c->height = c->file_height = H;
    c->fx = W * (0.9 + 0.4 * test_rand(rs));
    c->fy = c->fx * (0.9 + 0.2 * test_rand(rs));
    c->cx = centred ? W / 2.0 : W * (0.3 + 0.4 * test_rand(rs));
    c->cy = centred ? H / 2.0 : H * (0.3 + 0.4 * test_rand(rs));
}

/* kinds: a mix of ordinary, behind-camera, near-plane, off-frustum, huge, tiny, degenerate */
static void random_splats(uint64_t *rs, int n, int deg, int with_filter, const cs_camera *cam, int overlap, cs_splats *s)
{
    cs_splats_alloc(s, n, deg, with_filter);
    int K = CS_SH_COEFFS(deg);
    double cc[3];
    cs_camera_center(cam, cc);
    for (int i = 0; i < n; i++) {
        int kind = overlap ? 0 : (int)(test_rand(rs) * 10);
        double p[3];
        for (int k = 0; k < 3; k++) p[k] = (test_rand(rs) * 2 - 1) * 0.9;
        double ls = -3.5 + 2.0 * test_rand(rs);
        if (kind == 1) { /* behind the camera */
            for (int k = 0; k < 3; k++) p[k] = cc[k] + (cc[k] - 0) * 0.3 + 0.1 * test_randn(rs);
        } else if (kind == 2) { /* straddling the near plane */
            double f[3] = {cam->R[6], cam->R[7], cam->R[8]}, d = 0.15 + 0.15 * test_rand(rs);
            for (int k = 0; k < 3; k++) p[k] = cc[k] + f[k] * d + 0.05 * test_randn(rs);
        } else if (kind == 3) { /* outside the frustum */
            p[0] += 6 * (test_rand(rs) < 0.5 ? -1 : 1);
        } else if (kind == 4) { /* huge */
            ls = 0.0 + test_rand(rs);
        } else if (kind == 5) { /* tiny */
            ls = -9;
        }
        if (overlap) {
            p[0] = 0.01 * test_randn(rs), p[1] = 0.01 * test_randn(rs), p[2] = 0.01 * test_randn(rs);
            ls = -4.0;
        }
        for (int k = 0; k < 3; k++) {
            s->means[i * 3 + k] = (float)p[k];
            s->log_scales[i * 3 + k] = (float)(ls + 0.5 * test_randn(rs));
        }
        if (kind == 6) s->log_scales[i * 3 + 2] = -20.f; /* degenerate: flat */
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)test_randn(rs);
        s->logit_opacity[i] = (float)(-1.0 + 4.0 * test_rand(rs));
        for (int k = 0; k < K * 3; k++) s->sh[(size_t)i * K * 3 + k] = (float)(k < 3 ? 0.8 * test_randn(rs) : 0.3 * test_randn(rs));
        if (with_filter) s->filter_3d[i] = (float)(0.005 + 0.02 * test_rand(rs));
    }
}

/* ---- device helpers ------------------------------------------------------------------ */

typedef struct {
    cs_cl cl;
    cs_kernels k;
    int open;
} dev_ctx;

static int g_fast_math; /* 1: build with FAST_MATH whatever the device */
static int g_tile;      /* rasterizer tile side (0 = 16) */
static int g_pixels;    /* pixels a rasterizer work-item (0 = auto) */
static size_t g_wg;     /* work-group size of every per-Gaussian kernel group (0 = default) */

static int dev_open(dev_ctx *d, int deg, int sh_half, int aa, int filter, int det, int atomics)
{
    memset(d, 0, sizeof *d);
    if (test_open_cl(&d->cl)) return -1;
    if (atomics >= 0) d->cl.atomics = (cs_atomic_path)atomics;
    if (g_fast_math) d->cl.fast_math = 1;
    /* CLSPLAT_TEST_PIXELS=P: the rasterizer tests run with P pixels a work-item wherever a test
       does not set its own (every path on any device: make check-rusticl runs auto's 8) */
    const char *ep = getenv("CLSPLAT_TEST_PIXELS");
    int px = g_pixels ? g_pixels : ep ? atoi(ep) : 0;
    cs_kernel_opts o = {{deg, sh_half, filter, 0}, aa, det, g_tile, px, 0, 0};
    size_t wg[CS_WG_COUNT];
    int e = cs_kernels_build(&d->cl, &o, &d->k);
    for (int g = 0; g < CS_WG_COUNT; g++) wg[g] = g_wg && g_wg <= d->k.wg_max[g] ? g_wg : d->k.wg_max[g];
    if (e || (g_wg && cs_kernels_set_wg(&d->k, wg))) {
        cs_kernels_release(&d->k);
        cs_cl_close(&d->cl);
        return -1;
    }
    d->open = 1;
    return 0;
}

static void dev_close(dev_ctx *d)
{
    if (!d->open) return;
    cs_kernels_release(&d->k);
    cs_cl_close(&d->cl);
    d->open = 0;
}

/* with g_small_pairs, renders start from the smallest pair buffers, so the pair count
   overflows them and the forward is redone (counted in g_pairs_redone) */
static int g_small_pairs, g_pairs_redone;
static int g_bin_global; /* render_cl's renderers count pairs in global memory only */

static int render_cl(dev_ctx *d, const cs_splats *s, const cs_view *v, int active, const float bg[3], float ks,
                     float *img, cs_model *keep_model, cs_renderer *keep_r)
{
    cs_model m;
    cs_renderer r;
    if (cs_model_create(&d->cl, &m, s, &d->k.opts.layout, s->n)) return -1;
    cs_renderer_init(&r, &d->cl, &d->k, ks);
    if (g_small_pairs) r.pair_guess = 1;
    r.bin_global = g_bin_global;
    int rc = cs_render_forward_sync(&r, &m, v, active, bg);
    g_pairs_redone += r.redone;
    if (!rc && img) rc = cs_buf_read(&d->cl, &r.img, 0, (size_t)3 * v->width * v->height * 4, img);
    if (keep_model && !rc) {
        *keep_model = m;
        *keep_r = r;
        return 0;
    }
    cs_renderer_free(&r);
    cs_model_free(&d->cl, &m);
    return rc;
}

static int compare_forward_ks(dev_ctx *d, const cs_splats *s, const cs_camera *cam, int active, int aa, int filter,
                              int sh_half, double ks, const char *what)
{
    cs_view v;
    cs_view_from_camera(cam, &v);
    int W = v.width, H = v.height;
    float bg[3] = {0.2f, 0.5f, 1.0f};
    ref_opts o = {active, aa, ks, filter, sh_half, {bg[0], bg[1], bg[2]}, g_tile};
    float *img = malloc(sizeof(float) * 3 * W * H);
    double *ref = malloc(sizeof(double) * 3 * W * H);
    unsigned char *amb = malloc((size_t)W * H);
    for (int i = 0; i < 3 * W * H; i++) img[i] = NAN; /* poison */
    int rc = render_cl(d, s, &v, active, bg, (float)ks, img, NULL, NULL);
    if (rc) {
        fprintf(stderr, "  %s: %s\n", what, cs_last_error());
        free(img), free(ref), free(amb);
        return 1;
    }
    ref_render(s, &v, &o, ref, amb);
    /* float32 compositing rounds once per blended Gaussian: up to n * 2^-24 on top of 1e-4
     * (3000 overlapping Gaussians reached 1.22e-4 under oclgrind) */
    double maxerr = 0, tol = 1e-4 + s->n * 0x1p-24;
    int bad = 0, namb = 0, worst = -1;
    for (int p = 0; p < W * H; p++) {
        if (amb[p]) {
            namb++;
            continue;
        }
        for (int c = 0; c < 3; c++) {
            double e = fabs(img[c * W * H + p] - ref[c * W * H + p]);
            if (!(e <= tol)) bad++;
            if (!(e <= maxerr)) maxerr = e, worst = p;
        }
    }
    if (!bad && namb > W * H / 2) {
        free(img), free(ref), free(amb);
        return 2; /* inconclusive: most pixels sit on a rounding edge; the caller draws again */
    }
    if (bad)
        fprintf(stderr, "  %s (%dx%d, %d Gaussians): max abs err %.3g at pixel (%d,%d): cl %.6f ref %.6f; %d bad, %d ambiguous px\n",
                what, W, H, s->n, maxerr, worst % W, worst / W, worst >= 0 ? img[worst] : 0, worst >= 0 ? ref[worst] : 0, bad,
                namb);
    free(img), free(ref), free(amb);
    return bad ? 1 : 0;
}

static int compare_forward(dev_ctx *d, const cs_splats *s, const cs_camera *cam, int active, int aa, int filter,
                           int sh_half, const char *what)
{
    return compare_forward_ks(d, s, cam, active, aa, filter, sh_half, 0.1, what);
}

/* ---- forward ------------------------------------------------------------------------ */

/* a few small Gaussians whose look depends strongly on the mip kernel size */
int test_mip_kernel_size(void)
{
    uint64_t rs = test_seed() ^ 0x3141;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 1, 0, 0, -1));
    cs_camera cam;
    random_camera(&rs, 48, 32, 1, &cam);
    cs_splats s;
    cs_splats_alloc(&s, 6, 1, 0);
    for (int i = 0; i < 6; i++) {
        for (int k = 0; k < 3; k++) s.means[i * 3 + k] = (float)(0.3 * test_randn(&rs)), s.log_scales[i * 3 + k] = -4.5f;
        s.quats[i * 4] = 1.f;
        s.logit_opacity[i] = 2.f;
        s.sh[i * 12] = 1.f;
    }
    int fails = 0;
    fails += compare_forward_ks(&d, &s, &cam, 1, 1, 0, 0, 0.1, "mip kernel 0.1") == 1;
    fails += compare_forward_ks(&d, &s, &cam, 1, 1, 0, 0, 0.3, "mip kernel 0.3") == 1;
    cs_splats_free(&s);
    dev_close(&d);
    CHECK(fails == 0, "%d comparisons failed (seed %llu)", fails, (unsigned long long)test_seed());
    return 0;
}

int test_raster_forward_random(void)
{
    uint64_t rs = test_seed() ^ 0x1234;
    int fails = 0;
    for (int aa = 0; aa < 2; aa++) {
        dev_ctx d;
        CHECK_OK(dev_open(&d, 3, 0, aa, aa, 0, -1));
        g_small_pairs = aa; /* the mip scenes start with pair buffers too small */
        g_pairs_redone = 0;
        int sizes[][2] = {{37, 29}, {64, 48}, {100, 75}};
        for (int t = 0; t < 3; t++) {
            int r = 2;
            for (int attempt = 0; attempt < 5 && r == 2; attempt++) {
                cs_camera cam;
                random_camera(&rs, sizes[t][0], sizes[t][1], t == 0, &cam);
                cs_splats s;
                random_splats(&rs, 300, 3, aa, &cam, 0, &s);
                char what[64];
                snprintf(what, sizeof what, "%s scene %d", aa ? "mip" : "classic", t);
                r = compare_forward(&d, &s, &cam, t % 4 == 0 ? 3 : t, aa, aa, 0, what);
                cs_splats_free(&s);
            }
            fails += r != 0;
        }
        dev_close(&d);
        g_small_pairs = 0;
        CHECK(!aa || g_pairs_redone > 0, "no render overflowed its pair buffers: the redo path went untested");
    }
    CHECK(fails == 0, "%d forward comparisons failed (seed %llu)", fails, (unsigned long long)test_seed());
    return 0;
}

/* One random scene of test_raster_depth: 0 when the depths match, 1 when they do not (or the
 * depth kernel's image differs), 2 when too few pixels have a depth to say (drawn again). */
static int depth_scene(dev_ctx *d, uint64_t *rs)
{
    cs_camera cam;
    random_camera(rs, 61, 47, 0, &cam);
    cs_splats s;
    random_splats(rs, 300, 1, 0, &cam, 0, &s);
    cs_view v;
    cs_view_from_camera(&cam, &v);
    int W = v.width, H = v.height, n = W * H;
    float bg[3] = {0.1f, 0.2f, 0.3f};
    ref_opts o = {1, 0, 0.1, 0, 0, {bg[0], bg[1], bg[2]}, g_tile};
    float *plain = malloc(sizeof(float) * 3 * n), *img = malloc(sizeof(float) * 3 * n), *dep = malloc(sizeof(float) * 2 * n);
    double *rimg = malloc(sizeof(double) * 3 * n), *rdep = malloc(sizeof(double) * 2 * n);
    unsigned char *amb = malloc((size_t)n);
    for (int i = 0; i < 2 * n; i++) dep[i] = NAN; /* poison */
    cs_model m;
    cs_renderer r;
    int rc = render_cl(d, &s, &v, 1, bg, 0.1f, plain, NULL, NULL) || cs_model_create(&d->cl, &m, &s, &d->k.opts.layout, s.n);
    if (!rc) {
        cs_renderer_init(&r, &d->cl, &d->k, 0.1f);
        r.want_depth = 1;
        rc = cs_render_forward_sync(&r, &m, &v, 1, bg) || cs_buf_read(&d->cl, &r.img, 0, sizeof(float) * 3 * n, img) ||
             cs_render_read_depth(&r, W, H, dep);
        cs_renderer_free(&r);
        cs_model_free(&d->cl, &m);
    }
    if (rc) fprintf(stderr, "  %s\n", cs_last_error());
    int bad = 0, namb = 0, covered = 0, medians = 0, differ = 0;
    double worst = 0;
    if (!rc) ref_render_depth(&s, &v, &o, rimg, rdep, amb);
    for (int p = 0; p < n && !rc; p++) {
        differ += memcmp(&img[p], &plain[p], 4) || memcmp(&img[n + p], &plain[n + p], 4) ||
                  memcmp(&img[2 * n + p], &plain[2 * n + p], 4);
        if (amb[p]) {
            namb++;
            continue;
        }
        covered += rdep[p] > 0, medians += rdep[n + p] > 0;
        for (int k = 0; k < 2; k++) {
            double e = fabs(dep[k * n + p] - rdep[k * n + p]) / fmax(1.0, fabs(rdep[k * n + p]));
            bad += !(e <= 1e-4);
            worst = fmax(worst, e);
        }
    }
    printf("  %dx%d, %d Gaussians: %d pixels with depth, %d with a median, %d ambiguous; worst relative error %.2g\n", W, H,
           s.n, covered, medians, namb, worst);
    if (differ) fprintf(stderr, "  %d pixels: the depth kernel's image differs from rasterize_fwd's\n", differ);
    if (bad) fprintf(stderr, "  %d depths differ from the reference (worst %.3g)\n", bad, worst);
    int result = rc || differ || bad ? 1 : covered > n / 4 && medians > n / 8 && namb < n / 4 ? 0 : 2;
    free(plain), free(img), free(dep), free(rimg), free(rdep), free(amb);
    cs_splats_free(&s);
    return result;
}

/* rasterize_fwd_depth (#23) against the CPU reference: expected and median depth per pixel,
 * and the same image as rasterize_fwd, bit for bit (one body, WITH_DEPTH a constant). A
 * scene with too few pixels to say (most of it outside the view) is drawn again. */
int test_raster_depth(void)
{
    uint64_t rs = test_seed() ^ 0xde97;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 0, 0, 0, -1));
    int r = 2;
    for (int attempt = 0; attempt < 5 && r == 2; attempt++) r = depth_scene(&d, &rs);
    dev_close(&d);
    CHECK(r != 2, "five scenes in a row had too few pixels with a depth (seed %llu)", (unsigned long long)test_seed());
    CHECK(r == 0, "the depths differ from the reference (seed %llu)", (unsigned long long)test_seed());
    return 0;
}

/* Large Gaussians of every opacity: pairs go only to tiles the alpha >= 1/255 ellipse
 * reaches (fewer than the 3-sigma squares give), and the image must not change. */
int test_raster_tight_tiles(void)
{
    uint64_t rs = test_seed() ^ 0x7177;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 0, 0, 0, -1));
    cs_camera cam;
    random_camera(&rs, 160, 120, 0, &cam);
    cs_splats s;
    random_splats(&rs, 60, 1, 0, &cam, 0, &s);
    for (int i = 0; i < s.n; i++) {
        for (int k = 0; k < 3; k++) s.log_scales[i * 3 + k] = (float)(-2.2 + 0.6 * test_rand(&rs));
        s.logit_opacity[i] = (float)(-5.5 + 11.0 * test_rand(&rs));
    }
    int fails = compare_forward(&d, &s, &cam, 1, 0, 0, 0, "large Gaussians") == 1;
    cs_view v;
    cs_view_from_camera(&cam, &v);
    float bg[3] = {0, 0, 0};
    cs_model m;
    cs_renderer r;
    CHECK_OK(render_cl(&d, &s, &v, 1, bg, 0.1f, NULL, &m, &r));
    int *radii = malloc(sizeof(int) * s.n);
    float *xy = malloc(sizeof(float) * 2 * s.n);
    CHECK_OK(cs_buf_read(&d.cl, &r.radii, 0, sizeof(int) * s.n, radii));
    CHECK_OK(cs_buf_read(&d.cl, &r.xy, 0, sizeof(float) * 2 * s.n, xy));
    long square = 0;
    for (int i = 0; i < s.n; i++) {
        if (radii[i] <= 0) continue;
        int x0 = (int)((xy[2 * i] - radii[i]) / 16), y0 = (int)((xy[2 * i + 1] - radii[i]) / 16);
        int x1 = (int)((xy[2 * i] + radii[i] + 15) / 16), y1 = (int)((xy[2 * i + 1] + radii[i] + 15) / 16);
        x0 = x0 < 0 ? 0 : x0 > r.tiles_x ? r.tiles_x : x0, x1 = x1 < 0 ? 0 : x1 > r.tiles_x ? r.tiles_x : x1;
        y0 = y0 < 0 ? 0 : y0 > r.tiles_y ? r.tiles_y : y0, y1 = y1 < 0 ? 0 : y1 > r.tiles_y ? r.tiles_y : y1;
        square += (long)(x1 - x0) * (y1 - y0);
    }
    printf("  pairs: %u with the alpha ellipse, %ld with 3-sigma squares\n", r.n_pairs, square);
    free(radii), free(xy);
    cs_renderer_free(&r);
    cs_model_free(&d.cl, &m);
    cs_splats_free(&s);
    dev_close(&d);
    CHECK(fails == 0, "image differs from the reference with tight tile rectangles (seed %llu)", (unsigned long long)test_seed());
    CHECK(square > 0 && r.n_pairs < square, "tight rectangles gave %u pairs, 3-sigma squares %ld", r.n_pairs, square);
    return 0;
}

/* Thin slanted Gaussians: the pair emission keeps only the tiles of each rectangle that the
 * alpha >= 1/255 ellipse reaches (tile_row_span). Every (Gaussian, tile) pair a pixel needs
 * (found here by testing every pixel of every tile of the rectangle, as the rasterizer would)
 * is emitted, the image equals the CPU reference, there are fewer pairs than rectangle tiles,
 * and the tiles' ranges hold as many pairs as project_fwd counted; in deterministic mode (and on a
 * device that runs only it) the rectangles stay and every needed pair is there too. */
static int tile_spans(int want_det)
{
    uint64_t rs = test_seed() ^ 0x5ba7;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 0, 0, want_det, -1));
    cs_camera cam;
    random_camera(&rs, 160, 120, 1, &cam);
    cs_splats s;
    random_splats(&rs, 90, 1, 0, &cam, 0, &s);
    for (int i = 0; i < s.n; i++) {
        int thin = (int)(test_rand(&rs) * 3);
        for (int k = 0; k < 3; k++) s.log_scales[i * 3 + k] = (float)(k == thin ? -0.9 + 0.4 * test_rand(&rs) : -4.5);
        s.logit_opacity[i] = (float)(-4.0 + 9.0 * test_rand(&rs));
    }
    int fails = compare_forward(&d, &s, &cam, 1, 0, 0, 0, "thin slanted Gaussians") == 1;
    cs_view v;
    cs_view_from_camera(&cam, &v);
    float bg[3] = {0, 0, 0};
    cs_model m;
    cs_renderer r;
    CHECK_OK(render_cl(&d, &s, &v, 1, bg, 0.1f, NULL, &m, &r));
    int n = s.n, tiles = r.tiles_x * r.tiles_y, T = d.k.opts.tile;
    float *xy = malloc(sizeof(float) * 2 * n), *co = malloc(sizeof(float) * 4 * n);
    cl_uint *bounds = malloc(8 * (size_t)n), *ranges = malloc(8 * (size_t)tiles);
    cl_uint *vals = malloc(4 * (size_t)r.n_pairs + 4);
    CHECK_OK(cs_buf_read(&d.cl, &r.xy, 0, sizeof(float) * 2 * n, xy));
    CHECK_OK(cs_buf_read(&d.cl, &r.conic_opacity, 0, sizeof(float) * 4 * n, co));
    CHECK_OK(cs_buf_read(&d.cl, &r.bounds, 0, 8 * (size_t)n, bounds));
    CHECK_OK(cs_buf_read(&d.cl, &r.ranges, 0, 8 * (size_t)tiles, ranges));
    CHECK_OK(cs_buf_read(&d.cl, &r.pair_ids, 0, 4 * (size_t)r.n_pairs, vals));
    int det = d.k.opts.deterministic; /* the sorted values are pair indices; pair_gid maps them */
    if (det) {
        cl_uint *gid = malloc(4 * (size_t)r.n_pairs + 4);
        CHECK_OK(cs_buf_read(&d.cl, &r.pair_gid, 0, 4 * (size_t)r.n_pairs, gid));
        for (unsigned q = 0; q < r.n_pairs; q++) vals[q] = vals[q] < r.n_pairs ? gid[vals[q]] : 0xffffffffu;
        free(gid);
    }
    long rect = 0, needed = 0, missing = 0, filler = 0;
    cl_uint *touched = malloc(4 * (size_t)n);
    CHECK_OK(cs_buf_read(&d.cl, &r.touched, 0, 4 * (size_t)n, touched));
    for (int i = 0; i < n; i++) filler += touched[i]; /* counted by project_fwd but not in a tile's range */
    free(touched);
    for (int t = 0; t < tiles; t++) filler -= ranges[2 * t + 1] - ranges[2 * t];
    for (int i = 0; i < n; i++) {
        int x0 = (int)(bounds[2 * i] & 0xffff), y0 = (int)(bounds[2 * i] >> 16);
        int x1 = (int)(bounds[2 * i + 1] & 0xffff), y1 = (int)(bounds[2 * i + 1] >> 16);
        rect += (long)(x1 - x0) * (y1 - y0);
        for (int ty = y0; ty < y1; ty++)
            for (int tx = x0; tx < x1; tx++) {
                int need = 0;
                for (int py = ty * T; py < ty * T + T && py < v.height && !need; py++)
                    for (int px = tx * T; px < tx * T + T && px < v.width && !need; px++) {
                        double dx = xy[2 * i] - px, dy = xy[2 * i + 1] - py;
                        double power = -0.5 * (co[4 * i] * dx * dx + co[4 * i + 2] * dy * dy) - co[4 * i + 1] * dx * dy;
                        need = power <= 0 && fmin(0.99, co[4 * i + 3] * exp(power)) >= 1.0 / 255 * 0.999;
                    }
                if (!need) continue;
                needed++;
                int t = ty * r.tiles_x + tx, found = 0;
                for (cl_uint p = ranges[2 * t]; p < ranges[2 * t + 1] && !found; p++) found = vals[p] == (cl_uint)i;
                missing += !found;
            }
    }
    printf("  pairs: %u emitted, %ld rectangle tiles, %ld needed by a pixel, %ld missing, %ld counted and not placed\n", r.n_pairs, rect,
           needed, missing, filler);
    free(xy), free(co), free(bounds), free(ranges), free(vals);
    cs_renderer_free(&r);
    cs_model_free(&d.cl, &m);
    cs_splats_free(&s);
    dev_close(&d);
    CHECK(fails == 0, "image differs from the reference with tile spans (seed %llu)", (unsigned long long)test_seed());
    CHECK(missing == 0, "%ld needed (Gaussian, tile) pairs were not emitted (seed %llu)", missing,
          (unsigned long long)test_seed());
    CHECK(filler == 0, "project_fwd counted %ld pairs more than the tiles hold", filler);
    /* deterministic mode (a device whose loops are limited runs it) keeps the rectangles */
    CHECK(needed > 0 && (det ? (long)r.n_pairs == rect : (long)r.n_pairs < rect),
          "%u pairs against %ld rectangle tiles (deterministic %d)", r.n_pairs, rect, det);
    return 0;
}

int test_raster_tile_spans(void) { return tile_spans(0) || tile_spans(1); }

int test_raster_forward_edge_cases(void)
{
    uint64_t rs = test_seed() ^ 0x777;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 3, 1, 0, 0, 0, -1));
    cs_camera cam;
    random_camera(&rs, 50, 34, 0, &cam);
    cs_splats s;
    int fails = 0;
    /* zero Gaussians: background everywhere */
    cs_splats_alloc(&s, 0, 3, 0);
    fails += compare_forward(&d, &s, &cam, 3, 0, 0, 1, "zero Gaussians") != 0;
    cs_splats_free(&s);
    /* thousands overlapping one pixel (fp16 SH) */
    random_splats(&rs, 3000, 3, 0, &cam, 1, &s);
    fails += compare_forward(&d, &s, &cam, 3, 0, 0, 1, "3000 overlapping") == 1;
    cs_splats_free(&s);
    dev_close(&d);
    CHECK(fails == 0, "%d edge-case comparisons failed (seed %llu)", fails, (unsigned long long)test_seed());
    return 0;
}

/* ---- gradients ------------------------------------------------------------------------ */

static double ref_loss(const cs_splats *s, const cs_view *v, const ref_opts *o, const double *w, double *img)
{
    ref_render(s, v, o, img, NULL);
    double L = 0;
    for (int i = 0; i < 3 * v->width * v->height; i++) L += w[i] * img[i];
    return L;
}

static float *param_ptr(cs_splats *s, int group, int i, int k)
{
    int K = CS_SH_COEFFS(s->sh_degree);
    switch (group) {
    case 0: return &s->means[i * 3 + k];
    case 1: return &s->log_scales[i * 3 + k];
    case 2: return &s->quats[i * 4 + k];
    case 3: return &s->logit_opacity[i];
    default: return &s->sh[(size_t)i * K * 3 + k];
    }
}

/* Relative error of sums between a gradient and its reference, with the worst element. */
typedef struct {
    double sum_err, sum_ref, worst, wa, wb;
    int n, wi, wk;
} grad_cmp;

static void grad_cmp_add(grad_cmp *c, double a, double ref, int i, int k)
{
    double e = fabs(a - ref);
    if (!(e <= c->worst)) c->worst = e, c->wa = a, c->wb = ref, c->wi = i, c->wk = k;
    c->sum_err += isnan(e) ? 1e30 : e;
    c->sum_ref += fabs(ref);
    c->n++;
}

static int grad_cmp_report(const grad_cmp *c, const char *what, double bound)
{
    double rel = c->sum_err / (c->sum_ref + 1e-12);
    if (rel < bound && c->n > 0) return 0;
    fprintf(stderr, "  %s: relative error of sums %.3g (bound %.0e) over %d elements; "
            "worst at Gaussian %d element %d: %.6g vs %.6g (seed %llu)\n",
            what, rel, bound, c->n, c->wi, c->wk, c->wa, c->wb, (unsigned long long)test_seed());
    return 1;
}

/* the pixels of S's drawing at V that ref_render flags as within rounding of a discrete decision
   (a new W x H mask; NULL when out of memory), and how many */
static unsigned char *edge_pixels(const cs_splats *s, const cs_view *v, const ref_opts *o, size_t *count)
{
    size_t px = (size_t)v->width * v->height;
    unsigned char *amb = malloc(px);
    *count = px;
    if (!amb) return NULL;
    ref_render(s, v, o, NULL, amb);
    *count = 0;
    for (size_t p = 0; p < px; p++) *count += amb[p] != 0;
    return amb;
}

static size_t edge_pixel_count(const cs_splats *s, const cs_view *v, const ref_opts *o)
{
    size_t n;
    free(edge_pixels(s, v, o, &n));
    return n;
}

/* Zero the loss weights W and WF (3, H, W) of the pixels ref_render flags as sitting within
   rounding of a discrete decision (ref_raster.h lists them): float may decide such a pixel
   either way, and the decision moves the gradient of every Gaussian blended there, not only the
   one on the edge (seed 4767153234010764501 of the CAS-loop check: a Gaussian behind at alpha 1/255 moved
   a front one's gradient by 5e-4). Fails when more than a quarter of the pixels are zeroed: the
   check would say little. */
static int drop_edge_pixels(const cs_splats *s, const cs_view *v, const ref_opts *o, double *w, float *wf,
                            const char *what)
{
    size_t px = (size_t)v->width * v->height, dropped;
    unsigned char *amb = edge_pixels(s, v, o, &dropped);
    CHECK(amb, "out of memory");
    for (size_t p = 0; p < px; p++)
        if (amb[p])
            for (int c = 0; c < 3; c++) w[c * px + p] = 0, wf[c * px + p] = 0;
    free(amb);
    CHECK(4 * dropped <= px, "%s: %zu of %zu pixels on a rounding edge: the gradient check would say little (seed %llu)",
          what, dropped, px, (unsigned long long)test_seed());
    return 0;
}

/* Central difference of ref_loss for one parameter at three steps; 0 when they disagree (a
   discrete event inside a step: alpha threshold, tile edge, two Gaussians swapping depth
   order). Two steps were not enough: in dense scenes, events at both steps can cancel to
   agreeing but wrong values (seed 4765596890544212095 of the many-batch test). */
static int fd_smooth(cs_splats *s, const cs_view *v, const ref_opts *o, const double *w, double *img, int group, int i,
                     int k, int relative_step, double *out)
{
    float *pp = param_ptr(s, group, i, k);
    float p0 = *pp;
    double fd[3];
    for (int h = 0; h < 3; h++) {
        double step = 1e-3 / (1 << (2 * h)) * (relative_step ? fmax(1.0, fabs(p0)) : 1.0);
        float hi = (float)(p0 + step), lo = (float)(p0 - step);
        *pp = hi;
        double Lh = ref_loss(s, v, o, w, img);
        *pp = lo;
        double Ll = ref_loss(s, v, o, w, img);
        *pp = p0;
        fd[h] = (Lh - Ll) / ((double)hi - (double)lo);
    }
    *out = fd[2];
    double tol = 2e-3 * (fabs(fd[2]) + 1e-2);
    return fabs(fd[0] - fd[2]) <= tol && fabs(fd[1] - fd[2]) <= tol;
}

/* 12 Gaussians of SH degree 3 around the origin, a few tenths across, every one in view of a
   40x30 random camera at fx 30 (the gradient checks' scene). Gaussian c < 3 has colour channel
   c clamped at 0 from every direction (its DC at -5: 0.5 - 1.41 and the higher bands' ~0.2
   spread), so the clamp's zero gradient is checked on each channel. */
static void smooth_splats(uint64_t *rs, int filter, cs_splats *s)
{
    cs_splats_alloc(s, 12, 3, filter);
    for (int i = 0; i < s->n; i++) {
        for (int k = 0; k < 3; k++) {
            s->means[i * 3 + k] = (float)(0.5 * test_randn(rs));
            s->log_scales[i * 3 + k] = (float)(-1.6 + 0.3 * test_randn(rs));
        }
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)test_randn(rs);
        s->logit_opacity[i] = (float)(0.5 * test_randn(rs));
        for (int k = 0; k < 48; k++) s->sh[i * 48 + k] = (float)(k < 3 ? 0.5 * test_randn(rs) : 0.2 * test_randn(rs));
        if (i < 3) s->sh[i * 48 + i] = -5.f;
        if (filter) s->filter_3d[i] = (float)(0.02 + 0.03 * test_rand(rs));
    }
}

static int grad_check(int aa, int filter, int sh_half, int det, int atomics, const char *what)
{
    uint64_t rs = test_seed() ^ (0xabc + aa * 7 + sh_half * 13 + det * 17 + (unsigned)atomics * 19);
    dev_ctx d;
    if (dev_open(&d, 3, sh_half, aa, filter, det, atomics)) {
        fprintf(stderr, "  %s: %s\n", what, cs_last_error());
        return 1;
    }
    cs_camera cam;
    random_camera(&rs, 40, 30, 0, &cam);
    cam.fx = cam.fy = 30;
    cs_view v;
    cs_view_from_camera(&cam, &v);
    int W = v.width, H = v.height, active = 3;
    cs_splats s;
    smooth_splats(&rs, filter, &s);
    if (sh_half)
        for (int k = 0; k < s.n * 48; k++) s.sh[k] = cs_half_to_float(cs_float_to_half(s.sh[k]));
    float bg[3] = {0.3f, 0.6f, 0.9f};
    ref_opts o = {active, aa, 0.1, filter, sh_half, {bg[0], bg[1], bg[2]}, g_tile};
    size_t npx = (size_t)3 * W * H;
    double *w = malloc(sizeof(double) * npx), *img = malloc(sizeof(double) * npx);
    float *wf = malloc(sizeof(float) * npx);
    for (size_t i = 0; i < npx; i++) w[i] = test_randn(&rs), wf[i] = (float)w[i];
    int fails = drop_edge_pixels(&s, &v, &o, w, wf, what);
    /* device gradients */
    cs_model m;
    cs_renderer r;
    float *vgeo = malloc(sizeof(float) * s.n * CS_GEO_W), *vsh = malloc(sizeof(float) * s.n * 48);
    int rc = render_cl(&d, &s, &v, active, bg, 0.1f, NULL, &m, &r);
    cs_buf v_img = {0};
    if (!rc) rc = cs_buf_alloc(&d.cl, &v_img, CS_MEM_SCRATCH, npx * 4, "v_img");
    if (!rc) rc = cs_buf_write(&d.cl, &v_img, 0, npx * 4, wf);
    float nanv = NAN;
    if (!rc) rc = cs_buf_fill(&d.cl, &m.v_geo, 0, m.v_geo.bytes, &nanv, 4) || cs_buf_fill(&d.cl, &m.v_sh, 0, m.v_sh.bytes, &nanv, 4);
    if (!rc) rc = cs_render_backward(&r, &m, &v, active, bg, &v_img);
    if (!rc) rc = cs_buf_read(&d.cl, &m.v_geo, 0, sizeof(float) * s.n * CS_GEO_W, vgeo);
    if (!rc) rc = cs_buf_read(&d.cl, &m.v_sh, 0, sizeof(float) * s.n * 48, vsh);
    if (rc) fprintf(stderr, "  %s: %s\n", what, cs_last_error());
    cs_buf_free(&d.cl, &v_img);
    if (!rc) {
        cs_renderer_free(&r);
        cs_model_free(&d.cl, &m);
    }
    const char *gname[5] = {"means", "log_scales", "quats", "logit_opacity", "sh"};
    int gw[5] = {3, 3, 4, 1, 48}, goff[5] = {CS_GEO_MEAN, CS_GEO_LOG_SCALE, CS_GEO_QUAT, CS_GEO_LOGIT_OPACITY, 0};
    double *rgeo = malloc(sizeof(double) * s.n * CS_GEO_W), *rsh = malloc(sizeof(double) * s.n * 48);
    ref_backward(&s, &v, &o, w, rgeo, rsh, NULL);
    fails += rc;
    for (int gidx = 0; gidx < 5 && !rc; gidx++) {
        grad_cmp fdc = {0}, clc = {0};
        int skipped = 0;
        for (int i = 0; i < s.n; i++)
            for (int k = 0; k < gw[gidx]; k++) {
                double ref = gidx == 4 ? rsh[i * 48 + k] : rgeo[i * CS_GEO_W + goff[gidx] + k];
                double cl = gidx == 4 ? vsh[i * 48 + k] : vgeo[i * CS_GEO_W + goff[gidx] + k];
                grad_cmp_add(&clc, cl, ref, i, k);
                if (gidx == 4 && sh_half) continue; /* perturbations are below half precision */
                double fd;
                if (fd_smooth(&s, &v, &o, w, img, gidx, i, k, gidx == 2, &fd)) grad_cmp_add(&fdc, ref, fd, i, k);
                else skipped++;
            }
        char tag[160];
        snprintf(tag, sizeof tag, "%s: d/d%s, OpenCL vs reference backward", what, gname[gidx]);
        fails += grad_cmp_report(&clc, tag, 1e-4);
        if (gidx == 4 && sh_half) continue;
        snprintf(tag, sizeof tag, "%s: d/d%s, reference backward vs finite differences (%d non-smooth skipped)", what,
                 gname[gidx], skipped);
        fails += grad_cmp_report(&fdc, tag, 1e-3);
    }
    free(rgeo), free(rsh);
    free(w), free(img), free(wf), free(vgeo), free(vsh);
    cs_splats_free(&s);
    dev_close(&d);
    return fails;
}

/* N degree-1 Gaussians crowded around the origin (log-scales about LOG_SCALE), so the tiles of
 * a small view hold several batches of pairs */
static void crowded_splats(uint64_t *rs, int n, double log_scale, cs_splats *s)
{
    cs_splats_alloc(s, n, 1, 0);
    for (int i = 0; i < s->n; i++) {
        for (int k = 0; k < 3; k++) {
            s->means[i * 3 + k] = (float)(0.35 * test_randn(rs));
            s->log_scales[i * 3 + k] = (float)(log_scale + 0.3 * test_randn(rs));
        }
        for (int k = 0; k < 4; k++) s->quats[i * 4 + k] = (float)test_randn(rs);
        s->logit_opacity[i] = (float)(-1.5 + 0.5 * test_randn(rs));
        for (int k = 0; k < 12; k++) s->sh[i * 12 + k] = (float)(0.3 * test_randn(rs));
    }
}

/* The device backward of a rendered view R (its forward redone with R->chunk pairs a backward
 * unit) into VGEO / VSH (DEG 1 rows); DET: every per-pair row poisoned by an earlier pass. The
 * most units a tile got go to *MAX_UNITS. */
static int backward_with_chunk(dev_ctx *d, cs_renderer *r, cs_model *m, const cs_view *v, const float bg[3],
                               const cs_buf *v_img, int det, float *vgeo, float *vsh, unsigned *max_units, float *fwd)
{
    size_t px = (size_t)v->width * v->height;
    if (cs_render_forward_sync(r, m, v, 1, bg) || cs_buf_read(&d->cl, &r->img, 0, px * 12, fwd) ||
        cs_buf_read(&d->cl, &r->final_T, 0, px * 4, fwd + 3 * px) || cs_buf_read(&d->cl, &r->n_contrib, 0, px * 4, fwd + 4 * px))
        return -1;
    int tiles = r->tiles_x * r->tiles_y;
    cl_uint *off = malloc(sizeof(cl_uint) * (size_t)(tiles + 1));
    if (!off || cs_buf_read(&d->cl, &r->unit_off, 0, sizeof(cl_uint) * (size_t)(tiles + 1), off)) {
        free(off);
        return -1;
    }
    *max_units = 0;
    for (int t = 0; t < tiles; t++) *max_units = off[t + 1] - off[t] > *max_units ? off[t + 1] - off[t] : *max_units;
    free(off);
    float nanv = NAN;
    if (det) { /* a first pass allocates the per-pair rows; then every row holds NaN */
        if (cs_render_backward(r, m, v, 1, bg, v_img) || cs_buf_fill(&d->cl, &r->v_pair, 0, r->v_pair.bytes, &nanv, 4))
            return -1;
    }
    if (cs_buf_fill(&d->cl, &m->v_geo, 0, m->v_geo.bytes, &nanv, 4) || cs_render_backward(r, m, v, 1, bg, v_img) ||
        cs_buf_read(&d->cl, &m->v_geo, 0, sizeof(float) * m->n * CS_GEO_W, vgeo) ||
        cs_buf_read(&d->cl, &m->v_sh, 0, sizeof(float) * m->n * 12, vsh))
        return -1;
    return 0;
}

/* A forward (image, T, last contributors: backward_with_chunk's FWD) against the one-unit
 * forward ONE: the same image to 1e-5. Without the split forward T and the last contributors
 * agree bit for bit (the serial loop sums a unit's colour apart but runs the same chain
 * through T); with it (rasterize_fwd_split.cl: each unit from T = 1, then scaled) T agrees to
 * 1e-5 and a last contributor may differ only where rounding moves a pixel's stop, at most
 * one pixel in 500. Such a pixel's T and colour differ by the Gaussian one of them took and the
 * other did not (up to its alpha times T, past 1e-5), so there the check is the stop itself:
 * the lower T is the one that took it, CS_T_MIN within rounding (1e-3 of it), the other above.
 * Returns 0 or fails with WHAT. */
static int forward_agrees(const float *fwd, const float *one, size_t px, int split, const char *what)
{
    double dimg = 0, dT = 0, stop_off = 0;
    size_t lasts = 0;
    for (size_t i = 0; i < px; i++) {
        float ta = fwd[3 * px + i], tb = one[3 * px + i];
        if (memcmp(fwd + 4 * px + i, one + 4 * px + i, 4) != 0) { /* the stop moved */
            lasts++;
            double lo = fmin(ta, tb);
            stop_off = fmax(stop_off, fabs(lo - CS_T_MIN) / CS_T_MIN);
            continue;
        }
        dT = fmax(dT, fabs(ta - tb));
        for (int c = 0; c < 3; c++) dimg = fmax(dimg, fabs(fwd[c * px + i] - one[c * px + i]));
    }
    if (!split)
        CHECK(dimg < 1e-5 && !memcmp(fwd + 3 * px, one + 3 * px, 8 * px),
              "%s: the image differs by %.3g from one unit a tile's, or T / last contributors differ", what, dimg);
    CHECK(dimg < 1e-5 && dT < 1e-5 && lasts <= px / 500 && stop_off < 1e-3,
          "%s: image off by %.3g, T by %.3g, %zu last contributors differ from one unit a tile's (the lower T "
          "there off CS_T_MIN by %.3g of it)",
          what, dimg, dT, lasts, stop_off);
    return 0;
}

/* The 80x60 view R rendered (5x4 tiles of 16): the most pairs a tile holds to *FULLEST, and the
   count of tiles whose pixels all stop before the tile's last pair (-1 on an OpenCL error). */
static int tiles_with_tails(dev_ctx *d, cs_renderer *r, unsigned *fullest)
{
    cl_uint rg[2 * 20], *nc = malloc(sizeof(cl_uint) * 80 * 60);
    if (!nc || cs_buf_read(&d->cl, &r->ranges, 0, sizeof rg, rg) ||
        cs_buf_read(&d->cl, &r->n_contrib, 0, sizeof(cl_uint) * 80 * 60, nc)) {
        free(nc);
        return -1;
    }
    int tails = 0;
    *fullest = 0;
    for (int t = 0; t < 20; t++) {
        unsigned last = 0, pairs = rg[2 * t + 1] - rg[2 * t];
        *fullest = pairs > *fullest ? pairs : *fullest;
        for (int y = (t / 5) * 16; y < (t / 5) * 16 + 16 && y < 60; y++)
            for (int x = (t % 5) * 16; x < (t % 5) * 16 + 16; x++) last = nc[y * 80 + x] > last ? nc[y * 80 + x] : last;
        tails += last < pairs;
    }
    free(nc);
    return tails;
}

/* 80x60 (5x4 tiles), 3000 Gaussians so tiles hold several batches and some tiles end in pairs
 * behind their last contributor; FD on a random subset (DET 0). DET 1: the deterministic
 * backward, with the per-pair rows poisoned by an earlier pass, against the reference only.
 * The backward runs with units (rasterize_bwd.cl) of one batch, two batches, the default and
 * one unit a tile, the forward of one batch and of the default with its split (tiles of two
 * units or more unit by unit, rasterize_fwd_split.cl) and without: each against the same
 * reference, and each forward against the one-unit forward. */
static int many_batches(int det)
{
    uint64_t rs = test_seed() ^ 0xbeef ^ (uint64_t)det;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 0, 0, det, -1));
    cs_camera cam;
    cs_view v;
    cs_splats s;
    cs_model m;
    cs_renderer r;
    float bg[3] = {0.1f, 0.2f, 0.3f};
    ref_opts o = {1, 0, 0.1, 0, 0, {bg[0], bg[1], bg[2]}, g_tile};
    /* a scene with a tile whose pixels all stop before its last pair; drawn again when it has
       none (one run of 31 under make check-seeds had none), or when over a quarter of its pixels
       sit on a rounding edge, which the check leaves out (seed 4767236299269005283: 1291 of 4800) */
    for (int draw = 0;; draw++) {
        random_camera(&rs, 80, 60, 0, &cam);
        cs_view_from_camera(&cam, &v);
        crowded_splats(&rs, 3000, -2.4, &s);
        CHECK_OK(render_cl(&d, &s, &v, 1, bg, 0.1f, NULL, &m, &r));
        unsigned fullest;
        int tails = tiles_with_tails(&d, &r, &fullest);
        CHECK(tails >= 0, "reading the tiles: %s", cs_last_error());
        CHECK(fullest > 2 * 256, "scene too sparse: the fullest tile holds %u pairs, fewer than 2 batches", fullest);
        if (tails > 0 && 4 * edge_pixel_count(&s, &v, &o) <= (size_t)80 * 60) break;
        CHECK(draw < 4, "five scenes in a row had no tile with pairs behind its last contributor, or a quarter of "
                        "their pixels on a rounding edge");
        cs_renderer_free(&r);
        cs_model_free(&d.cl, &m);
        cs_splats_free(&s);
    }
    size_t npx = (size_t)3 * 80 * 60;
    double *w = malloc(sizeof(double) * npx), *img = malloc(sizeof(double) * npx);
    float *wf = malloc(sizeof(float) * npx), *vgeo = malloc(sizeof(float) * s.n * CS_GEO_W), *vsh = malloc(sizeof(float) * s.n * 12);
    for (size_t i = 0; i < npx; i++) w[i] = test_randn(&rs), wf[i] = (float)w[i];
    double *rgeo = malloc(sizeof(double) * s.n * CS_GEO_W), *rsh = malloc(sizeof(double) * s.n * 12);
    if (drop_edge_pixels(&s, &v, &o, w, wf, "many batches")) return 1;
    ref_backward(&s, &v, &o, w, rgeo, rsh, NULL);
    cs_buf v_img = {0};
    CHECK_OK(cs_buf_alloc(&d.cl, &v_img, CS_MEM_SCRATCH, npx * 4, "v_img"));
    CHECK_OK(cs_buf_write(&d.cl, &v_img, 0, npx * 4, wf));
    unsigned batch = (unsigned)(d.k.opts.tile * d.k.opts.tile / d.k.opts.pixels);
    const unsigned chunks[5] = {batch, batch, 2 * batch, r.chunk, 1u << 30}, splits[5] = {0, 2, 0, 2, 0};
    const char *gname[5] = {"means", "log_scales", "quats", "logit_opacity", "sh"};
    int goff[4] = {0, 3, 6, 10}, gw[5] = {3, 3, 4, 1, 12}, fails = 0;
    grad_cmp fdc = {0};
    size_t px = 80 * 60;
    float *fwd = malloc(sizeof(float) * 5 * px), *fwd1 = malloc(sizeof(float) * 5 * px);
    for (int c = 4; c >= 0; c--) {
        unsigned units = 0;
        r.chunk = chunks[c];
        r.fwd_split = splits[c];
        CHECK_OK(backward_with_chunk(&d, &r, &m, &v, bg, &v_img, det, vgeo, vsh, &units, c == 4 ? fwd1 : fwd));
        if (c <= 1) CHECK(units >= 3, "units of one batch: the fullest tile has only %u", units);
        if (c == 4) CHECK(units == 1, "one unit a tile asked for, %u given", units);
        char what[96];
        snprintf(what, sizeof what, "units of %u pairs, %s", chunks[c], splits[c] ? "split forward" : "serial forward");
        if (c < 4 && forward_agrees(fwd, fwd1, px, (int)splits[c], what)) return 1;
        /* every parameter against the reference backward */
        grad_cmp clc[5] = {{0}};
        for (int i = 0; i < s.n; i++)
            for (int g = 0; g < 5; g++)
                for (int k = 0; k < gw[g]; k++)
                    grad_cmp_add(&clc[g], g == 4 ? vsh[i * 12 + k] : vgeo[i * CS_GEO_W + goff[g] + k],
                                 g == 4 ? rsh[i * 12 + k] : rgeo[i * CS_GEO_W + goff[g] + k], i, k);
        for (int g = 0; g < 5; g++) {
            char tag[128];
            snprintf(tag, sizeof tag, "d/d%s, OpenCL (units of %u pairs, at most %u a tile, %s) vs reference backward",
                     gname[g], chunks[c], units, splits[c] ? "split forward" : "serial forward");
            fails += grad_cmp_report(&clc[g], tag, 1e-4);
        }
    }
    free(fwd), free(fwd1);
    cs_buf_free(&d.cl, &v_img);
    cs_renderer_free(&r);
    cs_model_free(&d.cl, &m);
    /* a random subset of the reference against FD */
    for (int t = 0; t < 400 && fdc.n < 40 && !det; t++) {
        int i = (int)(test_rand(&rs) * s.n), g = (int)(test_rand(&rs) * 5);
        int k = (int)(test_rand(&rs) * gw[g]);
        double fd, ref = g == 4 ? rsh[i * 12 + k] : rgeo[i * CS_GEO_W + goff[g] + k];
        if (fd_smooth(&s, &v, &o, w, img, g, i, k, 0, &fd) && fd != 0) grad_cmp_add(&fdc, ref, fd, i, k);
    }
    free(w), free(img), free(wf), free(vgeo), free(vsh), free(rgeo), free(rsh);
    cs_splats_free(&s);
    dev_close(&d);
    if (det) return fails;
    CHECK(fdc.n >= 15, "only %d smooth parameters found", fdc.n);
    fails += grad_cmp_report(&fdc, "reference backward vs finite differences", 1e-3);
    return fails;
}

/* the forward's tile class of a tile of LEN pairs, written apart from bin.cl's: half octaves,
   heaviest (2^15 pairs and more) 0, one pair CS_TILE_CLASSES - 2, empty tiles last */
static unsigned ref_tile_class(unsigned len)
{
    if (len == 0) return CS_TILE_CLASSES - 1;
    int lg = 0;
    while ((2u << lg) <= len && lg < 31) lg++;
    unsigned c = 2u * (unsigned)lg + (len >= 3u << lg >> 1 && lg > 0); /* past 1.5 x 2^lg */
    return (CS_TILE_CLASSES - 2) - (c < CS_TILE_CLASSES - 2 ? c : CS_TILE_CLASSES - 2);
}

/* bin_tile_order (#35): at 320x240 (300 tiles, more than a work-group) over a crowded centre,
 * the forward's tile order is a permutation of the tiles whose pair-count classes never get
 * heavier along it, and the scene spans several classes with empty tiles among them. The
 * forward's image through that order is what the other raster tests check. */
int test_raster_tile_order(void)
{
    uint64_t rs = test_seed() ^ 0x7113;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 0, 0, 0, -1));
    cs_camera cam;
    random_camera(&rs, 320, 240, 1, &cam);
    cs_view v;
    cs_view_from_camera(&cam, &v);
    cs_splats s;
    crowded_splats(&rs, 4000, -2.6, &s);
    float bg[3] = {0, 0, 0};
    cs_model m;
    cs_renderer r;
    CHECK_OK(render_cl(&d, &s, &v, 1, bg, 0.1f, NULL, &m, &r));
    unsigned tiles = (unsigned)(r.tiles_x * r.tiles_y);
    cl_uint *ranges = malloc(8 * (size_t)tiles), *order = malloc(4 * (size_t)tiles);
    unsigned char *seen = calloc(tiles, 1);
    int rc = !ranges || !order || !seen || cs_buf_read(&d.cl, &r.ranges, 0, 8 * (size_t)tiles, ranges) ||
             cs_buf_read(&d.cl, &r.tile_order, 0, 4 * (size_t)tiles, order);
    unsigned bad = 0, classes = 0, prev = 0, dup = 0, first = CS_TILE_CLASSES;
    for (unsigned i = 0; !rc && i < tiles; i++) {
        unsigned t = order[i];
        if (t >= tiles || seen[t]) {
            dup++;
            continue;
        }
        seen[t] = 1;
        unsigned c = ref_tile_class(ranges[2 * t + 1] - ranges[2 * t]);
        bad += i > 0 && c < prev;
        classes += i == 0 || c != prev;
        first = i == 0 ? c : first;
        prev = c;
    }
    unsigned heaviest = CS_TILE_CLASSES;
    for (unsigned t = 0; !rc && t < tiles; t++) {
        unsigned c = ref_tile_class(ranges[2 * t + 1] - ranges[2 * t]);
        heaviest = c < heaviest ? c : heaviest;
    }
    free(ranges), free(order), free(seen);
    cs_renderer_free(&r);
    cs_model_free(&d.cl, &m);
    cs_splats_free(&s);
    dev_close(&d);
    CHECK_OK(rc);
    CHECK(dup == 0, "%u entries of the tile order repeat a tile or are no tile", dup);
    CHECK(bad == 0 && first == heaviest, "%u tiles follow a lighter class; the first is of class %u, the heaviest %u",
          bad, first, heaviest);
    CHECK(classes >= 4 && prev == CS_TILE_CLASSES - 1, "the scene spans %u classes, the last %u (want empty tiles)",
          classes, prev);
    return 0;
}

/* one training pass of V (SH degree 1) with R's kernels now; the model's gradients into GEO, SH */
static int pass_grads(dev_ctx *d, cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v, cs_buf *gt, float *geo,
                      float *sh)
{
    const float bg[3] = {0.2f, 0.4f, 0.6f};
    float nanv = NAN;
    return cs_buf_fill(&d->cl, &m->v_geo, 0, m->v_geo.bytes, &nanv, 4) ||
           cs_buf_fill(&d->cl, &m->v_sh, 0, m->v_sh.bytes, &nanv, 4) ||
           cs_train_pass(r, l, m, v, 1, bg, gt, 0, 0.2f, false) ||
           cs_buf_read(&d->cl, &m->v_geo, 0, sizeof(float) * m->n * CS_GEO_W, geo) ||
           cs_buf_read(&d->cl, &m->v_sh, 0, sizeof(float) * m->n * CS_SH_COEFFS(1) * 3, sh);
}

static int grads_agree(const float *a, const float *b, size_t n, const char *what)
{
    grad_cmp c = {0};
    for (size_t i = 0; i < n; i++) grad_cmp_add(&c, a[i], b[i], (int)(i / CS_GEO_W), (int)(i % CS_GEO_W));
    return grad_cmp_report(&c, what, 1e-4);
}

/* dev_open with TILE x TILE rasterizer kernels */
static int dev_open_tile(dev_ctx *d, int tile)
{
    g_tile = tile;
    int rc = dev_open(d, 1, 0, 0, 0, 0, -1);
    g_tile = 0;
    return rc;
}

/* A training view for the tile tests: a random W x H camera, N random splats made into a model
 * (and the renderer that drew them once), a loss and random 8-bit ground truth. */
typedef struct {
    cs_view v;
    cs_splats s;
    cs_model m;
    cs_renderer r;
    cs_loss l;
    cs_buf gt;
    int have_model;
} tile_scene;

static int tile_scene_open(dev_ctx *d, uint64_t *rs, int W, int H, int n, const float bg[3], tile_scene *t)
{
    memset(t, 0, sizeof *t);
    cs_camera cam;
    random_camera(rs, W, H, 0, &cam);
    cs_view_from_camera(&cam, &t->v);
    random_splats(rs, n, 1, 0, &cam, 0, &t->s);
    /* opacities 0.27-0.33, under e^4.5 / 255 (0.353): a Gaussian then reaches alpha >= 1/255 only
       within 3 sigma, inside its radius, so the pixels it draws do not depend on the tile size.
       Past 3 sigma graphdeco's rule (and the reference's) draws it at the pixels of the tiles its
       radius's rectangle touches, which differ between 8x8 and 16x16: with opacities up to 0.95
       the two tiles' gradient sums differed by up to 7e-4 (seed 4767847990100212404). */
    for (int i = 0; i < n; i++) t->s.logit_opacity[i] = -1.f + 0.3f * (float)test_rand(rs); /* logits -1 to -0.7 */
    cs_loss_init(&t->l, &d->cl, &d->k);
    size_t np = (size_t)W * H;
    unsigned char *px = malloc(np * 3);
    if (!px) return cs_fail("out of host memory (ground truth)");
    for (size_t i = 0; i < np * 3; i++) px[i] = (unsigned char)(test_rand(rs) * 256);
    int rc = render_cl(d, &t->s, &t->v, 1, bg, 0.1f, NULL, &t->m, &t->r);
    t->have_model = !rc;
    if (!rc) rc = cs_buf_alloc(&d->cl, &t->gt, CS_MEM_IMAGES, np * 3, "gt") || cs_buf_write(&d->cl, &t->gt, 0, np * 3, px);
    free(px);
    return rc;
}

static void tile_scene_close(dev_ctx *d, tile_scene *t)
{
    cs_buf_free(&d->cl, &t->gt);
    cs_loss_free(&t->l);
    if (t->have_model) {
        cs_renderer_free(&t->r);
        cs_model_free(&d->cl, &t->m);
    }
    cs_splats_free(&t->s);
}

/* device.tile_choice: the other tile's kernels built beside the run's, a renderer moved between
 * them over one pool (its buffers grow, its units follow), the same gradients either way, when a
 * measurement is due, and the other tile dropped when the run holds more than half its budget */
int test_raster_tile_switch(void)
{
    uint64_t rs = test_seed() ^ 0x711e;
    dev_ctx d;
    CHECK_OK(dev_open_tile(&d, 8));
    cs_tile_choice tc;
    CHECK_OK(cs_tile_choice_open(&tc, &d.cl, &d.k, CS_TILES_TUNED, false));
    CHECK(!tc.on && !cs_tile_choice_due(&tc, 1, 1), "device.tile_choice tuned measures");
    cs_tile_choice_close(&tc);
    CHECK_OK(cs_tile_choice_open(&tc, &d.cl, &d.k, CS_TILES_AUTO, false));
    CHECK(tc.on == !d.cl.is_cpu, "auto: %s on a %s", tc.on ? "measures" : "does not measure", d.cl.is_cpu ? "CPU" : "GPU");
    cs_tile_choice_close(&tc);
    CHECK_OK(cs_tile_choice_open(&tc, &d.cl, &d.k, CS_TILES_MEASURE, true));
    CHECK(!tc.on, "optim.deterministic: the tile chosen by timing");
    cs_tile_choice_close(&tc);
    CHECK_OK(cs_tile_choice_open(&tc, &d.cl, &d.k, CS_TILES_MEASURE, false));
    CHECK(tc.on && tc.alt.opts.tile == 16 && tc.cur == &d.k, "measure: the other tile %d", tc.alt.opts.tile);
    CHECK(cs_tile_choice_due(&tc, 1, 4), "the first iteration is not due");
    const float bg[3] = {0.2f, 0.4f, 0.6f};
    tile_scene ts;
    int rc = tile_scene_open(&d, &rs, 72, 56, 300, bg, &ts);
    size_t ng = (size_t)ts.s.n * CS_GEO_W, nsh = (size_t)ts.s.n * CS_SH_COEFFS(1) * 3;
    float *g8 = malloc(sizeof(float) * ng), *g16 = malloc(sizeof(float) * ng), *g8b = malloc(sizeof(float) * ng);
    float *h8 = malloc(sizeof(float) * nsh), *h16 = malloc(sizeof(float) * nsh), *h8b = malloc(sizeof(float) * nsh);
    if (!rc) rc = pass_grads(&d, &ts.r, &ts.l, &ts.m, &ts.v, &ts.gt, g8, h8);
    if (!rc) rc = cs_renderer_use_kernels(&ts.r, &tc.alt) || pass_grads(&d, &ts.r, &ts.l, &ts.m, &ts.v, &ts.gt, g16, h16);
    int chunk16 = (int)ts.r.chunk, tiles16 = ts.r.tiles_x * ts.r.tiles_y;
    if (!rc) rc = cs_renderer_use_kernels(&ts.r, &d.k) || pass_grads(&d, &ts.r, &ts.l, &ts.m, &ts.v, &ts.gt, g8b, h8b);
    int fails = rc ? 1 : 0;
    if (rc) fprintf(stderr, "  %s\n", cs_last_error());
    if (!rc) {
        fails += grads_agree(g16, g8, ng, "16x16 against 8x8: position, scale, rotation, opacity gradients");
        fails += grads_agree(h16, h8, nsh, "16x16 against 8x8: SH gradients");
        fails += grads_agree(g8b, g8, ng, "8x8 again after 16x16: position, scale, rotation, opacity gradients");
        CHECK(chunk16 == (int)cs_render_chunk(&tc.alt.opts) && tiles16 * 4 >= ts.r.tiles_x * ts.r.tiles_y &&
                  tiles16 < ts.r.tiles_x * ts.r.tiles_y && (int)ts.r.chunk == (int)cs_render_chunk(&d.k.opts),
              "the renderer's units and tiles did not follow the kernels: chunk %d, tiles %d then %d", chunk16, tiles16,
              ts.r.tiles_x * ts.r.tiles_y);
        /* a measurement: the renderer is left on the choice, which is due again only at a new
           divisor or CS_TILE_CHOICE_EVERY iterations later */
        rc = cs_tile_choice_measure(&tc, &ts.r, &ts.l, &ts.m, &ts.v, 1, bg, &ts.gt, 0, 0.2f, 1, 4);
        fails += rc;
        CHECK(!rc && ts.r.k == tc.cur && (tc.cur == &d.k || tc.cur == &tc.alt), "measure: the renderer on other kernels");
        CHECK(!cs_tile_choice_due(&tc, 2, 4) && cs_tile_choice_due(&tc, 2, 3) &&
                  cs_tile_choice_due(&tc, 1 + CS_TILE_CHOICE_EVERY, 4) && !cs_tile_choice_due(&tc, CS_TILE_CHOICE_EVERY, 4),
              "due at the wrong iterations");
        /* the run at more than half its budget: back to the run's own tile for good */
        size_t budget = d.cl.mem.budget;
        d.cl.mem.budget = d.cl.mem.cur_total;
        rc = cs_tile_choice_measure(&tc, &ts.r, &ts.l, &ts.m, &ts.v, 1, bg, &ts.gt, 0, 0.2f, 2, 3);
        d.cl.mem.budget = budget;
        fails += rc;
        CHECK(!rc && !tc.on && tc.cur == &d.k && ts.r.k == &d.k && !cs_tile_choice_due(&tc, 5000, 1),
              "the other tile was kept past half the budget");
    }
    free(g8), free(g16), free(g8b), free(h8), free(h16), free(h8b);
    tile_scene_close(&d, &ts);
    cs_tile_choice_close(&tc);
    dev_close(&d);
    return fails;
}

/* cs_tile_choice_pass: on the other tile's kernels, a run past half its memory budget goes
 * back to its own tile before the pass, and a pass that fails (an allocation over the device's
 * limit) drops the other tile and is run again with the run's own kernels */
int test_raster_tile_fallback(void)
{
    uint64_t rs = test_seed() ^ 0xfa11;
    dev_ctx d;
    CHECK_OK(dev_open_tile(&d, 16));
    const float bg[3] = {0.1f, 0.1f, 0.1f};
    tile_scene ts;
    cs_tile_choice tc;
    int fails = 0, rc = tile_scene_open(&d, &rs, 64, 48, 200, bg, &ts);
    for (int round = 0; round < 2 && !rc; round++) {
        rc = cs_tile_choice_open(&tc, &d.cl, &d.k, CS_TILES_MEASURE, false);
        if (rc) break;
        /* the renderer on the other tile (8x8), as after a measurement that chose it */
        tc.cur = &tc.alt;
        rc = cs_renderer_use_kernels(&ts.r, &tc.alt) || cs_train_pass(&ts.r, &ts.l, &ts.m, &ts.v, 1, bg, &ts.gt, 0, 0.2f, false);
        if (rc) {
            cs_tile_choice_close(&tc);
            break;
        }
        size_t budget = d.cl.mem.budget;
        cl_ulong max_alloc = d.cl.max_alloc;
        int prc;
        if (round == 0) { /* past half the budget, the pass itself would fit */
            d.cl.mem.budget = 2 * d.cl.mem.cur_total - 16;
            prc = cs_tile_choice_pass(&tc, &ts.r, &ts.l, &ts.m, &ts.v, 1, bg, &ts.gt, 0, 0.2f, false);
            d.cl.mem.budget = budget;
            CHECK(!prc && !tc.on && tc.cur == &d.k && ts.r.k == &d.k,
                  "past half the budget: pass %d, the other tile %s, renderer on %dx%d", prc, tc.on ? "kept" : "dropped",
                  ts.r.k->opts.tile, ts.r.k->opts.tile);
        } else { /* every allocation fails: the other tile dropped, the pass tried on the run's own */
            cs_renderer_trim(&ts.r);
            d.cl.max_alloc = 64;
            prc = cs_tile_choice_pass(&tc, &ts.r, &ts.l, &ts.m, &ts.v, 1, bg, &ts.gt, 0, 0.2f, false);
            d.cl.max_alloc = max_alloc;
            CHECK(prc && !tc.on && tc.cur == &d.k && ts.r.k == &d.k && strstr(cs_last_error(), "out of device memory"),
                  "a failed pass: rc %d, the other tile %s, renderer on %dx%d (%s)", prc, tc.on ? "kept" : "dropped",
                  ts.r.k->opts.tile, ts.r.k->opts.tile, cs_last_error());
            prc = cs_tile_choice_pass(&tc, &ts.r, &ts.l, &ts.m, &ts.v, 1, bg, &ts.gt, 0, 0.2f, false);
            CHECK(!prc && ts.r.k == &d.k, "the pass after the fallback: %s", prc ? cs_last_error() : "");
        }
        cs_tile_choice_close(&tc);
    }
    if (rc) {
        fprintf(stderr, "  %s\n", cs_last_error());
        fails++;
    }
    tile_scene_close(&d, &ts);
    dev_close(&d);
    return fails;
}

/* The backward's units at a size oclgrind can run: 40x30 (3x2 tiles), 300 Gaussians, 8 pixels a
 * work-item (32-item groups, so a batch is 32 pairs); units of one batch (the forward serial,
 * then split: rasterize_fwd_split.cl) and one unit a tile, each against the reference backward,
 * and the same forward. */
int test_raster_bwd_units(void)
{
    uint64_t rs = test_seed() ^ 0x0b175;
    dev_ctx d;
    g_pixels = 8;
    int e = dev_open(&d, 1, 0, 0, 0, 0, -1);
    g_pixels = 0;
    CHECK_OK(e);
    cs_camera cam;
    random_camera(&rs, 40, 30, 0, &cam);
    cs_view v;
    cs_view_from_camera(&cam, &v);
    cs_splats s;
    crowded_splats(&rs, 300, -2.2, &s);
    float bg[3] = {0.1f, 0.2f, 0.3f};
    ref_opts o = {1, 0, 0.1, 0, 0, {bg[0], bg[1], bg[2]}, g_tile};
    size_t px = 40 * 30, npx = 3 * px;
    double *w = malloc(sizeof(double) * npx), *rgeo = malloc(sizeof(double) * s.n * CS_GEO_W),
           *rsh = malloc(sizeof(double) * s.n * 12);
    float *wf = malloc(sizeof(float) * npx), *vgeo = malloc(sizeof(float) * s.n * CS_GEO_W),
          *vsh = malloc(sizeof(float) * s.n * 12),
          *fwd[3] = {malloc(sizeof(float) * 5 * px), malloc(sizeof(float) * 5 * px), malloc(sizeof(float) * 5 * px)};
    for (size_t i = 0; i < npx; i++) w[i] = test_randn(&rs), wf[i] = (float)w[i];
    if (drop_edge_pixels(&s, &v, &o, w, wf, "backward units")) return 1;
    ref_backward(&s, &v, &o, w, rgeo, rsh, NULL);
    cs_model m;
    cs_renderer r;
    CHECK_OK(render_cl(&d, &s, &v, 1, bg, 0.1f, NULL, &m, &r));
    cs_buf v_img = {0};
    CHECK_OK(cs_buf_alloc(&d.cl, &v_img, CS_MEM_SCRATCH, npx * 4, "v_img"));
    CHECK_OK(cs_buf_write(&d.cl, &v_img, 0, npx * 4, wf));
    unsigned batch = (unsigned)(d.k.opts.tile * d.k.opts.tile / d.k.opts.pixels), chunks[3] = {1u << 30, batch, batch},
             splits[3] = {0, 0, 2};
    int goff[5] = {CS_GEO_MEAN, CS_GEO_LOG_SCALE, CS_GEO_QUAT, CS_GEO_LOGIT_OPACITY, 0}, gw[5] = {3, 3, 4, 1, 12},
        fails = 0;
    for (int c = 0; c < 3; c++) {
        unsigned units = 0;
        r.chunk = chunks[c];
        r.fwd_split = splits[c];
        CHECK_OK(backward_with_chunk(&d, &r, &m, &v, bg, &v_img, 0, vgeo, vsh, &units, fwd[c]));
        CHECK(c == 0 ? units == 1 : units >= 3, "units of %u pairs: at most %u a tile", chunks[c], units);
        grad_cmp clc = {0};
        for (int i = 0; i < s.n; i++)
            for (int g = 0; g < 5; g++)
                for (int k = 0; k < gw[g]; k++)
                    grad_cmp_add(&clc, g == 4 ? vsh[i * 12 + k] : vgeo[i * CS_GEO_W + goff[g] + k],
                                 g == 4 ? rsh[i * 12 + k] : rgeo[i * CS_GEO_W + goff[g] + k], i, k);
        char tag[128];
        snprintf(tag, sizeof tag, "every gradient, units of %u pairs (at most %u a tile, %s forward) vs reference",
                 chunks[c], units, splits[c] ? "split" : "serial");
        fails += grad_cmp_report(&clc, tag, 1e-4);
    }
    if (forward_agrees(fwd[1], fwd[0], px, 0, "the forward with units") ||
        forward_agrees(fwd[2], fwd[0], px, 1, "the split forward"))
        return 1;
    cs_buf_free(&d.cl, &v_img);
    cs_renderer_free(&r);
    cs_model_free(&d.cl, &m);
    free(w), free(rgeo), free(rsh), free(wf), free(vgeo), free(vsh), free(fwd[0]), free(fwd[1]), free(fwd[2]);
    cs_splats_free(&s);
    dev_close(&d);
    return fails;
}

/* cs_render_split: the split forward only for views of fewer tiles than 8 a compute unit
 * after a view of 256 pairs a tile or more; CLSPLAT_FWD_SPLIT's value (fwd_split >= 0) on
 * every view. */
int test_render_split_rule(void)
{
    cs_cl cl;
    cs_renderer r;
    memset(&cl, 0, sizeof cl);
    memset(&r, 0, sizeof r);
    cl.compute_units = 132;
    r.cl = &cl;
    r.fwd_split = -1;
    r.n_pairs = 0;
    CHECK(cs_render_split(&r, 169) == 0, "split before any view's pairs are known");
    r.n_pairs = 169 * 256;
    CHECK(cs_render_split(&r, 169) == 2, "no split for 169 tiles of 256 pairs each on 132 compute units");
    r.n_pairs = 169 * 256 - 1;
    CHECK(cs_render_split(&r, 169) == 0, "split for tiles of fewer than 256 pairs each");
    r.n_pairs = 4000000;
    CHECK(cs_render_split(&r, 8 * 132 - 1) == 2 && cs_render_split(&r, 8 * 132) == 0,
          "the tile limit is not 8 a compute unit");
    r.fwd_split = 0;
    CHECK(cs_render_split(&r, 10) == 0, "CLSPLAT_FWD_SPLIT=0 split a view");
    r.fwd_split = 5;
    CHECK(cs_render_split(&r, 100000) == 5, "CLSPLAT_FWD_SPLIT=5 not applied to a large view");
    return 0;
}

int test_grad_many_batches(void) { return many_batches(0); }
int test_grad_many_batches_det(void) { return many_batches(1); }

int test_grad_classic(void) { return grad_check(0, 0, 0, 0, -1, "classic"); }
int test_grad_mip(void) { return grad_check(1, 1, 0, 0, -1, "mip + 3D filter"); }
int test_grad_fp16_sh(void) { return grad_check(0, 0, 1, 0, -1, "fp16 SH"); }
int test_grad_deterministic(void) { return grad_check(1, 0, 0, 1, -1, "deterministic (per-pair) backward"); }
int test_grad_cas_atomics(void) { return grad_check(0, 0, 0, 0, CS_ATOMIC_CAS, "CAS-loop atomics"); }

/* Two random scenes of 300 Gaussians (SH degree 3, all bands active) at W0 and W0 + DW by H
 * compared with the reference, each drawn again (up to 5 times) while inconclusive; MIP: mip
 * filter and 3D filter; FIRST_FLAG: random_camera's flag for the first scene. Returns the
 * number of failed scenes. */
static int forward_scenes(dev_ctx *d, uint64_t *rs, int w0, int dw, int h, int first_flag, int mip, const char *what)
{
    int fails = 0;
    for (int t = 0; t < 2; t++) {
        int r = 2;
        for (int attempt = 0; attempt < 5 && r == 2; attempt++) {
            cs_camera cam;
            random_camera(rs, w0 + dw * t, h, first_flag && t == 0, &cam);
            cs_splats s;
            random_splats(rs, 300, 3, mip, &cam, 0, &s);
            r = compare_forward(d, &s, &cam, 3, mip, mip, 0, what);
            cs_splats_free(&s);
        }
        fails += r != 0;
    }
    return fails;
}

/* FAST_MATH (fma contraction, native_exp per pixel; NVIDIA's default) on any device: the
 * forward against the reference at the usual tolerance, and the gradients */
int test_raster_fast_math(void)
{
    uint64_t rs = test_seed() ^ 0xfa57;
    g_fast_math = 1;
    dev_ctx d;
    int fails = 0;
    if (dev_open(&d, 3, 0, 0, 0, 0, -1) == 0) {
        fails += forward_scenes(&d, &rs, 64, 29, 48, 0, 0, "fast-math forward");
        dev_close(&d);
    } else {
        fails++;
    }
    fails += grad_check(0, 0, 0, 0, -1, "fast-math gradients") != 0;
    fails += grad_check(1, 1, 1, 0, -1, "fast-math gradients, mip + fp16 SH") != 0;
    g_fast_math = 0;
    CHECK(fails == 0, "%d fast-math checks failed (seed %llu)", fails, (unsigned long long)test_seed());
    return 0;
}

/* The other tile size tune.c may choose (8x8, 64-item groups) with 64-item groups for every
 * per-Gaussian kernel: the forward against the reference (whose tile rectangles follow the
 * tile size) and the gradients, also through the deterministic per-pair backward */
int test_raster_tile8_groups64(void)
{
    uint64_t rs = test_seed() ^ 0x7e8;
    g_tile = 8;
    g_wg = 64;
    dev_ctx d;
    int fails = 0;
    if (dev_open(&d, 3, 0, 1, 1, 0, -1) == 0) {
        /* 64 where the device allows it (llvmpipe: 32, its limit) */
        size_t wp = d.k.wg_max[CS_WG_PROJECT] < 64 ? d.k.wg_max[CS_WG_PROJECT] : 64,
               wa = d.k.wg_max[CS_WG_ADAM] < 64 ? d.k.wg_max[CS_WG_ADAM] : 64;
        CHECK(d.k.opts.tile == 8 && d.k.wg[CS_WG_PROJECT] == wp && d.k.wg[CS_WG_ADAM] == wa,
              "sizes not applied: tile %d, project %zu, adam %zu", d.k.opts.tile, d.k.wg[CS_WG_PROJECT],
              d.k.wg[CS_WG_ADAM]);
        fails += forward_scenes(&d, &rs, 61, 40, 45, 1, 1, "8x8-tile forward");
        dev_close(&d);
    } else {
        fprintf(stderr, "  %s\n", cs_last_error());
        fails++;
    }
    fails += grad_check(0, 0, 0, 0, -1, "8x8 tiles, classic") != 0;
    fails += grad_check(1, 1, 0, 1, -1, "8x8 tiles, mip + 3D filter, deterministic") != 0;
    g_tile = 0;
    g_wg = 0;
    CHECK(fails == 0, "%d 8x8-tile checks failed (seed %llu)", fails, (unsigned long long)test_seed());
    return 0;
}

/* The pixels a work-item covers that auto picks for TILE: 0 on failure. */
static int auto_pixels(int tile)
{
    g_tile = tile;
    g_pixels = 0;
    dev_ctx d;
    int p = dev_open(&d, 3, 0, 1, 1, 0, -1) == 0 ? d.k.opts.pixels : 0;
    if (p) dev_close(&d);
    return p;
}

/* Rasterizer groups smaller than a tile (device.pixels_per_item): work-items covering 2, 8 and
 * 16 pixels of a 16x16 tile and 8 of an 8x8 one (8 work-items, fewer than the 9 gradient
 * values a staged Gaussian sums), each through the forward against the reference and the
 * backward against the reference and finite differences, in the device's, the CAS-loop and
 * the deterministic accumulation paths; the pixels asked for must be the pixels built. Auto picks
 * the fewest pixels whose group the device runs: a case below that must be refused, naming
 * the device's limit (PoCL runs them all; llvmpipe's 32-item groups need 8 of a 16x16 tile). */
int test_raster_pixels_per_item(void)
{
    /* tile, pixels, atomics (-1: the device's), deterministic; on NVIDIA the first runs the warp
       path (128 items), the third the local CAS path (16 items, not a whole warp) */
    static const int CASES[][4] = {{16, 2, -1, 0}, {16, 8, CS_ATOMIC_CAS, 0}, {16, 16, -1, 0}, {8, 8, -1, 1}};
    uint64_t rs = test_seed() ^ 0x9e1;
    int fails = 0, ran = 0, fit[17] = {0};
    fit[16] = auto_pixels(16), fit[8] = auto_pixels(8);
    CHECK(fit[16] >= 1 && fit[8] >= 1, "no pixels per work-item fit: %s", cs_last_error());
    printf("  auto: %d pixels a work-item with 16x16 tiles, %d with 8x8\n", fit[16], fit[8]);
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        g_tile = CASES[c][0];
        g_pixels = CASES[c][1];
        char what[96];
        snprintf(what, sizeof what, "%dx%d tiles, %d pixels a work-item", g_tile, g_tile, g_pixels);
        dev_ctx d;
        int rc = dev_open(&d, 3, 0, 1, 1, 0, -1);
        if (g_pixels < fit[g_tile]) {
            if (rc == 0) dev_close(&d);
            CHECK(rc != 0 && strstr(cs_last_error(), "allows"), "%s: below auto's %d but not refused with the limit (%s)",
                  what, fit[g_tile], rc ? cs_last_error() : "built");
            continue;
        }
        ran++;
        if (rc == 0) {
            CHECK(d.k.opts.tile == g_tile && d.k.opts.pixels == g_pixels, "%s: built %dx%d, %d", what, d.k.opts.tile,
                  d.k.opts.tile, d.k.opts.pixels);
            fails += forward_scenes(&d, &rs, 37, 30, 45, 1, 1, what);
            dev_close(&d);
        } else {
            fprintf(stderr, "  %s: %s\n", what, cs_last_error());
            fails++;
        }
        fails += grad_check(0, 0, 0, CASES[c][3], CASES[c][2], what) != 0;
    }
    g_tile = g_pixels = 0;
    CHECK(ran >= 3, "only %d of the cases run on this device", ran);
    CHECK(fails == 0, "%d checks with several pixels a work-item failed (seed %llu)", fails,
          (unsigned long long)test_seed());
    return 0;
}

/* pixels asked for that are not a power of two up to the tile side are refused by name */
int test_raster_pixels_refused(void)
{
    static const int BAD[][2] = {{16, 3}, {8, 16}, {16, -1}, {16, 32}};
    for (size_t c = 0; c < sizeof BAD / sizeof BAD[0]; c++) {
        g_tile = BAD[c][0];
        g_pixels = BAD[c][1];
        dev_ctx d;
        int rc = dev_open(&d, 1, 0, 0, 0, 0, -1);
        if (rc == 0) dev_close(&d);
        g_tile = g_pixels = 0;
        CHECK(rc != 0, "tile %d with %d pixels a work-item was accepted", BAD[c][0], BAD[c][1]);
        CHECK(strstr(cs_last_error(), "pixels_per_item") != NULL, "message does not name the key: %s", cs_last_error());
    }
    return 0;
}

/* ---- scan and the per-tile sort ------------------------------------------------------ */

/* The device exclusive scan against the host's, at sizes around one work-group's block, one
 * launch's limit (CS_SCAN_SINGLE_MAX) and several levels of block sums. */
int test_scan(void)
{
    uint64_t rs = test_seed() ^ 0x5157;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 0, 0, 0, 0, 0, -1));
    unsigned sizes[] = {0, 1, 7, 1023, 1024, 1025, 4097, 32768, 32769, 300001}; /* one work-group scans <= 32768 */
    if (test_small()) sizes[9] = 50001; /* oclgrind: still past two work-groups' scans */
    cs_sort_scratch sc = {0};
    for (size_t t = 0; t < sizeof sizes / sizeof sizes[0]; t++) {
        unsigned n = sizes[t];
        uint32_t *u = malloc(sizeof(uint32_t) * (n + 1)), *gu = malloc(sizeof(uint32_t) * (n + 1));
        for (unsigned i = 0; i < n; i++) u[i] = (uint32_t)(test_rand(&rs) * 100);
        cs_buf ub;
        CHECK_OK(cs_buf_alloc(&d.cl, &ub, CS_MEM_SCRATCH, (size_t)(n + 1) * 4, "scan"));
        CHECK_OK(cs_buf_write(&d.cl, &ub, 0, (size_t)n * 4, u));
        CHECK_OK(cs_scan(&d.cl, &d.k, &sc, &ub, n, -1));
        CHECK_OK(cs_buf_read(&d.cl, &ub, 0, (size_t)n * 4, gu));
        uint32_t run = 0;
        for (unsigned i = 0; i < n; i++) {
            CHECK(gu[i] == run, "scan n=%u: element %u is %u, expected %u", n, i, gu[i], run);
            run += u[i];
        }
        cs_buf_free(&d.cl, &ub);
        free(u), free(gu);
    }
    cs_sort_scratch_free(&d.cl, &sc);
    dev_close(&d);
    return 0;
}

/* The pairs of R's last view, read back and checked against the projection (bin.cl): the tiles'
 * ranges follow one another without gaps and hold every pair; each tile's values are strictly
 * ordered by (depth bits, value) and each Gaussian is in a tile at most once and only in tiles
 * of its bounds; each Gaussian is in as many tiles as project_fwd counted. The longest tile's
 * length goes to *LONGEST. */
static int check_tile_pairs(dev_ctx *d, cs_renderer *r, int n, unsigned *longest)
{
    unsigned tiles = (unsigned)(r->tiles_x * r->tiles_y), M = r->n_pairs;
    int det = d->k.opts.deterministic;
    cl_uint *ranges = malloc(8 * (size_t)tiles), *vals = malloc(4 * (size_t)M + 4), *gid = malloc(4 * (size_t)M + 4);
    cl_uint *touched = malloc(4 * (size_t)n), *bounds = malloc(8 * (size_t)n), *depth = malloc(4 * (size_t)n);
    unsigned *seen = calloc((size_t)n, sizeof(unsigned)), *last_tile = malloc(sizeof(unsigned) * (size_t)n);
    CHECK(ranges && vals && gid && touched && bounds && depth && seen && last_tile, "out of memory");
    CHECK_OK(cs_buf_read(&d->cl, &r->ranges, 0, 8 * (size_t)tiles, ranges));
    CHECK_OK(cs_buf_read(&d->cl, &r->pair_ids, 0, 4 * (size_t)M, vals));
    CHECK_OK(cs_buf_read(&d->cl, &r->touched, 0, 4 * (size_t)n, touched));
    CHECK_OK(cs_buf_read(&d->cl, &r->bounds, 0, 8 * (size_t)n, bounds));
    CHECK_OK(cs_buf_read(&d->cl, &r->depth, 0, 4 * (size_t)n, depth)); /* the float's bits are the key */
    if (det) CHECK_OK(cs_buf_read(&d->cl, &r->pair_gid, 0, 4 * (size_t)M, gid));
    unsigned at = 0, bad_order = 0, repeats = 0, outside = 0;
    *longest = 0;
    for (int i = 0; i < n; i++) last_tile[i] = 0xffffffffu;
    for (unsigned t = 0; t < tiles; t++) {
        unsigned s = ranges[2 * t], e = ranges[2 * t + 1];
        CHECK(s == at && e >= s && e <= M, "tile %u's range [%u, %u) does not follow the last one's end %u (%u pairs)", t,
              s, e, at, M);
        at = e;
        *longest = e - s > *longest ? e - s : *longest;
        for (unsigned p = s; p < e; p++) {
            CHECK(!det || vals[p] < M, "pair %u holds slot %u of %u", p, vals[p], M);
            unsigned g = det ? gid[vals[p]] : vals[p];
            CHECK(g < (unsigned)n, "pair %u holds Gaussian %u of %d", p, g, n);
            if (p > s) {
                unsigned h = det ? gid[vals[p - 1]] : vals[p - 1];
                bad_order += !(depth[h] < depth[g] || (depth[h] == depth[g] && vals[p - 1] < vals[p]));
            }
            repeats += last_tile[g] == t;
            last_tile[g] = t;
            seen[g]++;
            unsigned tx = t % (unsigned)r->tiles_x, ty = t / (unsigned)r->tiles_x;
            outside += tx < (bounds[2 * g] & 0xffff) || tx >= (bounds[2 * g + 1] & 0xffff) || ty < bounds[2 * g] >> 16 ||
                       ty >= bounds[2 * g + 1] >> 16;
        }
    }
    unsigned miscount = 0;
    for (int i = 0; i < n; i++) miscount += seen[i] != touched[i];
    free(ranges), free(vals), free(gid), free(touched), free(bounds), free(depth), free(seen), free(last_tile);
    CHECK(at == M, "the tiles' ranges hold %u pairs of %u", at, M);
    CHECK(bad_order == 0, "%u pairs out of (depth, value) order within their tile", bad_order);
    CHECK(repeats == 0 && outside == 0, "%u Gaussians twice in a tile, %u pairs outside their Gaussian's bounds",
          repeats, outside);
    CHECK(miscount == 0, "%u Gaussians are in another number of tiles than project_fwd counted", miscount);
    return 0;
}

/* Each tile's pairs front to back (bin_sort_tiles): a crowded small view whose tiles hold
 * several times CS_TILE_SORT_CAP pairs (so the chunks are merged, over an odd and an even
 * number of rounds), with exact duplicates (equal depths: ties go by Gaussian index), in the
 * default and the deterministic mode. The image matches the CPU reference and the pairs pass
 * check_tile_pairs. */
static int tile_sort(int want_det, int global)
{
    uint64_t rs = test_seed() ^ 0x7505 ^ (uint64_t)(want_det + 2 * global);
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 0, 0, want_det, -1));
    /* oclgrind: 2x2 tiles that nearly every Gaussian reaches, each past one chunk */
    int n = test_small() ? 3000 : 14000, W = test_small() ? 32 : 64, H = test_small() ? 32 : 48;
    cs_camera cam;
    random_camera(&rs, W, H, 1, &cam);
    cs_splats s;
    crowded_splats(&rs, n, test_small() ? -1.6 : -2.6, &s);
    for (int i = 1; i < n; i += 7) { /* Gaussian i repeats i - 1: same depth, same tiles */
        memcpy(s.means + 3 * i, s.means + 3 * (i - 1), 12);
        memcpy(s.log_scales + 3 * i, s.log_scales + 3 * (i - 1), 12);
        memcpy(s.quats + 4 * i, s.quats + 4 * (i - 1), 16);
        s.logit_opacity[i] = s.logit_opacity[i - 1];
    }
    g_bin_global = global;
    /* units of 512 pairs (a GPU's) for the image: bin_sort_chunks sorts each chunk in a
       work-group of its own, and the split forward blends the tiles */
    setenv("CLSPLAT_BWD_CHUNK", "512", 1);
    setenv("CLSPLAT_FWD_SPLIT", "2", 1);
    /* llvmpipe stops a work-item's loops after 65535 iterations (cl_runtime.h): its forward
       cannot blend tiles this deep, with either binning; the pairs are still checked */
    int fails = d.cl.loop_limited ? 0 : compare_forward(&d, &s, &cam, 1, 0, 0, 0, "crowded tiles") == 1;
    if (d.cl.loop_limited) printf("  image not compared: the device limits loops (65535 iterations a work-item)\n");
    cs_view v;
    cs_view_from_camera(&cam, &v);
    float bg[3] = {0, 0, 0};
    cs_model m;
    cs_renderer r;
    /* with the global counters the pairs come from one unit a tile (a CPU's), so a tile's one
       group sorts all of its chunks (the image is not compared there: on NVIDIA, fast math over
       one 10,000-pair sum strays past the reference's 1e-4, where units sum apart) */
    if (global) setenv("CLSPLAT_BWD_CHUNK", "0", 1);
    int e = render_cl(&d, &s, &v, 1, bg, 0.1f, NULL, &m, &r);
    g_bin_global = 0;
    unsetenv("CLSPLAT_BWD_CHUNK");
    unsetenv("CLSPLAT_FWD_SPLIT");
    CHECK_OK(e);
    unsigned longest = 0;
    int rc = check_tile_pairs(&d, &r, n, &longest);
    printf("  %s, %s counters: %u pairs in %d tiles, the longest %u (sorted in chunks of %u, units of %u)\n",
           d.k.opts.deterministic ? "deterministic" : "default", global ? "global" : "local", r.n_pairs,
           r.tiles_x * r.tiles_y, longest, CS_TILE_SORT_CAP, r.chunk);
    cs_renderer_free(&r);
    cs_model_free(&d.cl, &m);
    cs_splats_free(&s);
    dev_close(&d);
    CHECK_OK(rc);
    CHECK(fails == 0, "image differs from the reference on crowded tiles (seed %llu)", (unsigned long long)test_seed());
    /* merges happen: full size, past four chunks (three rounds) and some tile of two to four
       (two rounds) is likely but not forced; small (oclgrind), past one chunk */
    CHECK(longest > (test_small() ? 1u : 4u) * CS_TILE_SORT_CAP, "the longest tile has %u pairs: no merge tested", longest);
    return 0;
}

/* both modes, with the binning's counters in local memory (where the device has room) and in
   global memory only (under CLSPLAT_TEST_SMALL two of the four) */
int test_bin_tile_sort(void)
{
    if (test_small()) return tile_sort(0, 0) || tile_sort(1, 1); /* oclgrind: each path once */
    return tile_sort(0, 0) || tile_sort(1, 0) || tile_sort(0, 1) || tile_sort(1, 1);
}

/* Huge Gaussians close to the camera (a foreign model's, or one the camera stands inside of),
 * twenty image sides wide and more: drawn as the CPU reference draws them (render --ply used to
 * cull them past four image sides); an infinite scale is culled by both. test_render_ply_same
 * checks the command line's two ways of rendering one model. */
int test_raster_huge_gaussians(void)
{
    uint64_t rs = test_seed() ^ 0x4ad1;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 1, 0, 0, 0, 0, -1));
    int fails = 0, huge_px = 0;
    for (int t = 0; t < 3; t++) {
        int r = 2;
        for (int attempt = 0; attempt < 5 && r == 2; attempt++) {
            cs_camera cam;
            random_camera(&rs, 96, 64, 0, &cam);
            cs_splats s;
            random_splats(&rs, 80, 1, 0, &cam, 0, &s);
            double cc[3], f[3] = {cam.R[6], cam.R[7], cam.R[8]};
            cs_camera_center(&cam, cc);
            for (int i = 0; i < 5; i++) { /* 0.4 to 1.2 in front, e^1 to e^2 wide, faint */
                double dist = 0.4 + 0.8 * test_rand(&rs);
                for (int k = 0; k < 3; k++) {
                    s.means[i * 3 + k] = (float)(cc[k] + f[k] * dist + 0.1 * test_randn(&rs));
                    s.log_scales[i * 3 + k] = (float)(1.0 + test_rand(&rs));
                }
                s.logit_opacity[i] = (float)(-3.0 + test_rand(&rs));
                huge_px = (int)fmax(huge_px, 3.0 * exp(1.0) * cam.fx / dist);
            }
            s.log_scales[5 * 3] = INFINITY; /* culled by both */
            r = compare_forward(&d, &s, &cam, 1, 0, 0, 0, "huge close Gaussians");
            cs_splats_free(&s);
        }
        fails += r != 0;
    }
    dev_close(&d);
    printf("  3 scenes with 5 Gaussians of radius >= %d px in a 96x64 image and one of infinite scale\n", huge_px);
    CHECK(fails == 0, "%d of 3 renders differ from the reference (seed %llu)", fails, (unsigned long long)test_seed());
    return 0;
}

/* a random 8-bit RGB photo of NPX pixels, on the host (*GT) and in a new buffer at OFF bytes */
static int random_photo(dev_ctx *d, uint64_t *rs, int npx, size_t off, cs_buf *gtb, unsigned char **gt)
{
    *gt = malloc((size_t)npx * 3);
    if (!*gt) return -1;
    for (int i = 0; i < npx * 3; i++) (*gt)[i] = (unsigned char)(255 * test_rand(rs));
    memset(gtb, 0, sizeof *gtb);
    return cs_buf_alloc(&d->cl, gtb, CS_MEM_SCRATCH, (size_t)npx * 3 + off, "gt") ||
           cs_buf_write(&d->cl, gtb, off, (size_t)npx * 3, *gt);
}

/* frees what the error score tests made */
static void score_fixture_free(dev_ctx *d, cs_densifier *dn, cs_buf *gtb, cs_renderer *r, cs_model *m, cs_splats *s)
{
    cs_densifier_free(&d->cl, dn);
    cs_buf_free(&d->cl, &dn->score), cs_buf_free(&d->cl, &dn->mask);
    cs_buf_free(&d->cl, gtb);
    cs_renderer_free(r);
    cs_model_free(&d->cl, m);
    cs_splats_free(s);
    dev_close(d);
}

/* rows by score, largest first, ties by index (the prune's order, written out with a sort) */
static const float *g_rank_score;
static int rank_cmp(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    float x = g_rank_score[i], y = g_rank_score[j];
    return x > y ? -1 : x < y ? 1 : (i > j) - (i < j);
}
static int int_cmp(const void *a, const void *b) { return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b); }

/* densify.prune_fraction (cs_importance_prune): two views scored with a threshold below 0 mark
 * every pixel (the mask all ones), and the prune keeps exactly the rows of largest summed
 * score (read back before it; ties by index), in their order and with their parameters, the
 * rows neither view sees (random_splats puts some behind the camera and outside the frustum)
 * dropped first; a prune with no view scored fails. */
int test_importance_prune(void)
{
    uint64_t rs = test_seed() ^ 0x9e1cull;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 3, 0, 0, 0, 0, -1));
    cs_camera cam, cam2;
    random_camera(&rs, 96, 64, 0, &cam);
    random_camera(&rs, 96, 64, 0, &cam2);
    cs_view v, v2;
    cs_view_from_camera(&cam, &v), cs_view_from_camera(&cam2, &v2);
    int npx = v.width * v.height;
    cs_splats s;
    random_splats(&rs, 400, 3, 0, &cam, 0, &s);
    int n = s.n;
    for (int i = 0; i < n; i++) s.logit_opacity[i] = (float)(-3.0 + 2.0 * test_rand(&rs)); /* few hidden by others */
    unsigned char *gt;
    cs_buf gtb;
    CHECK_OK(random_photo(&d, &rs, npx, 0, &gtb, &gt));
    float bg[3] = {0.f, 0.f, 0.f};
    cs_model m;
    cs_renderer r;
    CHECK_OK(render_cl(&d, &s, &v, 3, bg, 0.1f, NULL, &m, &r));
    cs_densifier dn = {0};
    float *mask = malloc(sizeof(float) * 3 * npx), *score = malloc(sizeof(float) * n);
    CHECK_OK(cs_error_score_view(&dn, &r, &m, &v, 3, bg, &gtb, 0, 3, -1.f, 1.f));
    CHECK_OK(cs_buf_read(&d.cl, &dn.mask, 0, sizeof(float) * 3 * npx, mask));
    for (int i = 0; i < 3 * npx; i++) CHECK(mask[i] == 1.f, "mask %g at %d: a threshold below 0 marks every pixel", mask[i], i);
    CHECK_OK(cs_error_score_view(&dn, &r, &m, &v2, 3, bg, &gtb, 0, 3, -1.f, 1.f));
    CHECK_OK(cs_buf_read(&d.cl, &dn.score, 0, sizeof(float) * n, score));
    int *idx = malloc(sizeof(int) * n), zeros = 0;
    for (int i = 0; i < n; i++) idx[i] = i, zeros += score[i] == 0.f;
    g_rank_score = score;
    qsort(idx, (size_t)n, sizeof(int), rank_cmp);
    CHECK(zeros > 10 && zeros < n - 20, "%d of %d rows unseen: the test says little", zeros, n);
    /* drop every unseen row and a random share of the seen ones (at least 5, at most half) */
    int drop = zeros + 5 + (int)(test_rand(&rs) * 0.5 * (n - zeros - 10));
    double fraction = (drop + 0.5) / n;
    int keep = n - (int)(fraction * n);
    CHECK(keep == n - drop, "fraction %g of %d drops %d, meant %d", fraction, n, n - keep, drop);
    qsort(idx, (size_t)keep, sizeof(int), int_cmp); /* the kept rows in their order */
    CHECK_OK(cs_importance_prune(&d.cl, &d.k, &dn, &m, fraction));
    CHECK(m.n == keep && dn.score_views == 0, "%d rows after the prune, want %d of %d", m.n, keep, n);
    cs_splats out;
    CHECK_OK(cs_model_download(&d.cl, &m, &out));
    for (int j = 0; j < keep; j++) {
        int i = idx[j];
        CHECK(score[i] > 0.f, "row %d kept with score 0", i);
        CHECK(!memcmp(out.means + 3 * j, s.means + 3 * i, 12) && !memcmp(out.log_scales + 3 * j, s.log_scales + 3 * i, 12) &&
                  out.logit_opacity[j] == s.logit_opacity[i] && out.sh[48 * j + 47] == s.sh[48 * i + 47],
              "row %d of the pruned model is not row %d (score %g)", j, i, score[i]);
    }
    CHECK(cs_importance_prune(&d.cl, &d.k, &dn, &m, fraction) == -1, "a prune with no view scored");
    printf("  %d Gaussians, %d unseen: %d kept by their blend weight over two views\n", n, zeros, keep);
    cs_splats_free(&out);
    free(idx), free(mask), free(score), free(gt);
    score_fixture_free(&d, &dn, &gtb, &r, &m, &s);
    return 0;
}

/* A view scored smaller than full size (densify.error_train_size): the same view scored again
 * as if each pixel stood for 4 adds its weight 1/4 to the divisor, and cs_densify_step grows
 * exactly the rows whose summed score (2x SCORE1, the first view's) over that divisor (1.25)
 * reaches densify.error_score, the gradient rule, pruning and the budget left out. Fails when
 * the divisor is the view count (2). */
static int check_score_weight(dev_ctx *d, cs_densifier *dn, cs_renderer *r, cs_model *m, const cs_view *v,
                              const float bg[3], cs_buf *gtb, float thr, const float *score1, uint64_t *rs)
{
    int n = m->n;
    CHECK_OK(cs_error_score_view(dn, r, m, v, 3, bg, gtb, 8, 3, thr, 4.f));
    CHECK(dn->score_views == 2 && dn->score_weight == 1.25f, "%d views weigh %g, want 2 and 1.25", dn->score_views,
          dn->score_weight);
    /* the threshold halfway between two neighbouring means near a random quantile */
    float *mean = malloc(sizeof(float) * n);
    for (int i = 0; i < n; i++) mean[i] = 2.f * score1[i] / 1.25f;
    cs_sort_floats(mean, (size_t)n);
    int q = n / 4 + (int)(test_rand(rs) * n / 2);
    while (q + 1 < n && mean[q + 1] - mean[q] < 1e-3f * mean[q + 1]) q++;
    CHECK(q + 1 < n && mean[q] > 0, "no gap in the scores to put a threshold in (%d)", q);
    cs_densify_cfg cfg = {0};
    cfg.grad_threshold = 1e30, cfg.percent_dense = 0.01, cfg.error_score = 0.5 * (mean[q] + mean[q + 1]);
    double extent = 1.0 + 4 * test_rand(rs);
    int want = n; /* a clone adds a row; a split adds two and drops its parent */
    for (int i = 0; i < n; i++) want += 2.f * score1[i] / 1.25f >= (float)cfg.error_score;
    CHECK_OK(cs_densify_step(&d->cl, &d->k, dn, m, &cfg, extent, 0, 10 * n, 7u));
    CHECK(m->n == want && want > n && want < 2 * n && dn->score_views == 0,
          "%d rows after the step, want %d of %d; %d views left", m->n, want, n, dn->score_views);
    free(mean);
    return 0;
}

/* The error score (densify.error_views, cs_error_score_view): the mask kernel against the
 * host's mask of the device's own render, each Gaussian's score against the reference
 * backward of that mask (its colour gradient: sum over masked pixels of its blend weight,
 * read from the DC coefficient's gradient / SH_C0 with every colour kept above 0), the model's
 * gradients untouched (poisoned before, still NaN after), and densify_score_flags against the
 * host rule. */
int test_error_score(void)
{
    uint64_t rs = test_seed() ^ 0xe5c0;
    dev_ctx d;
    CHECK_OK(dev_open(&d, 3, 0, 0, 0, 0, -1));
    cs_camera cam;
    random_camera(&rs, 40, 30, 0, &cam);
    cam.fx = cam.fy = 30;
    cs_view v;
    cs_view_from_camera(&cam, &v);
    int W = v.width, H = v.height, npx = W * H;
    cs_splats s;
    smooth_splats(&rs, 0, &s);
    for (int k = 0; k < s.n * 48; k++) /* every colour above 0: the DC gradient is the colour row */
        s.sh[k] = (float)(k % 48 < 3 ? 1.0 + 0.3 * test_rand(&rs) : 0.02 * test_randn(&rs));
    float bg[3] = {0.f, 0.f, 0.f};
    cs_model m;
    cs_renderer r;
    CHECK_OK(render_cl(&d, &s, &v, 3, bg, 0.1f, NULL, &m, &r));
    unsigned char *gt;
    cs_buf gtb;
    cs_densifier dn;
    memset(&dn, 0, sizeof dn);
    float nanv = NAN, thr = 0.4f;
    CHECK_OK(random_photo(&d, &rs, npx, 8, &gtb, &gt));
    CHECK_OK(cs_buf_fill(&d.cl, &m.v_geo, 0, m.v_geo.bytes, &nanv, 4));
    CHECK_OK(cs_error_score_view(&dn, &r, &m, &v, 3, bg, &gtb, 8, 3, thr, 1.f));
    float *img = malloc(sizeof(float) * 3 * npx), *mask = malloc(sizeof(float) * 3 * npx), *score = malloc(sizeof(float) * s.n);
    float vg0;
    CHECK_OK(cs_buf_read(&d.cl, &r.img, 0, sizeof(float) * 3 * npx, img));
    CHECK_OK(cs_buf_read(&d.cl, &dn.mask, 0, sizeof(float) * 3 * npx, mask));
    CHECK_OK(cs_buf_read(&d.cl, &dn.score, 0, sizeof(float) * s.n, score));
    CHECK_OK(cs_buf_read(&d.cl, &m.v_geo, 0, 4, &vg0));
    CHECK(isnan(vg0) && dn.score_views == 1, "the model's gradient was written (%g) or the view not counted", vg0);
    double *want = malloc(sizeof(double) * 3 * npx);
    int masked = 0;
    for (int p = 0; p < npx; p++) {
        double e = 0;
        for (int c = 0; c < 3; c++) e += fabs(img[c * npx + p] - gt[3 * p + c] / 255.0);
        double mk = e / 3 > thr ? 1 : 0;
        if (fabs(e / 3 - thr) < 1e-5) mk = mask[p]; /* within float rounding of the threshold */
        masked += mk > 0;
        for (int c = 0; c < 3; c++) {
            want[c * npx + p] = mk;
            CHECK(mask[c * npx + p] == (float)mk, "pixel %d channel %d: mask %g, host %g", p, c, mask[c * npx + p], mk);
        }
    }
    CHECK(masked > npx / 10 && masked < npx * 9 / 10, "%d of %d pixels masked: the test says little", masked, npx);
    ref_opts o = {3, 0, 0.1, 0, 0, {0, 0, 0}, g_tile};
    double *rgeo = malloc(sizeof(double) * s.n * CS_GEO_W), *rsh = malloc(sizeof(double) * s.n * 48);
    unsigned char *edge = malloc((size_t)s.n);
    ref_backward(&s, &v, &o, want, rgeo, rsh, edge);
    int compared = 0;
    for (int i = 0; i < s.n; i++) {
        if (edge[i]) continue;
        double ref = rsh[i * 48] / 0.28209479177387814;
        compared++;
        CHECK(fabs(score[i] - ref) <= 2e-3 * fabs(ref) + 1e-3, "Gaussian %d: score %g, reference %g", i, score[i], ref);
    }
    CHECK(compared >= s.n / 2, "only %d Gaussians compared", compared);
    CHECK(dn.score_weight == 1.f, "one full-size view weighs %g", dn.score_weight);
    CHECK_OK(check_score_weight(&d, &dn, &r, &m, &v, bg, &gtb, thr, score, &rs));
    /* densify_score_flags: KEEP rows whose score reaches threshold x views become clone / split */
    int n = 200;
    float *geo = malloc(sizeof(float) * n * CS_GEO_W), *sc = malloc(sizeof(float) * n);
    cl_uint *fl = malloc(sizeof(cl_uint) * n), *cn = malloc(sizeof(cl_uint) * n), *fl2 = malloc(sizeof(cl_uint) * n),
            *cn2 = malloc(sizeof(cl_uint) * n);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < CS_GEO_W; k++) geo[i * CS_GEO_W + k] = (float)(-3 + 2 * test_rand(&rs));
        sc[i] = (float)(10 * test_rand(&rs)), fl[i] = (cl_uint)(test_rand(&rs) * 3), cn[i] = fl[i] == 0 ? 0 : fl[i];
    }
    cs_buf bg_ = {0}, bs = {0}, bf = {0}, bc = {0};
    float views = 2.f, sthr = 2.5f, clone_max = (float)exp(-2.0);
    CHECK_OK(cs_buf_alloc(&d.cl, &bg_, CS_MEM_SCRATCH, sizeof(float) * n * CS_GEO_W, "geo") ||
             cs_buf_alloc(&d.cl, &bs, CS_MEM_SCRATCH, sizeof(float) * n, "score") ||
             cs_buf_alloc(&d.cl, &bf, CS_MEM_SCRATCH, sizeof(cl_uint) * n, "flags") ||
             cs_buf_alloc(&d.cl, &bc, CS_MEM_SCRATCH, sizeof(cl_uint) * n, "counts"));
    CHECK_OK(cs_buf_write(&d.cl, &bg_, 0, sizeof(float) * n * CS_GEO_W, geo) || cs_buf_write(&d.cl, &bs, 0, sizeof(float) * n, sc) ||
             cs_buf_write(&d.cl, &bf, 0, sizeof(cl_uint) * n, fl) || cs_buf_write(&d.cl, &bc, 0, sizeof(cl_uint) * n, cn));
    size_t g = (size_t)n, l = 64;
    CHECK_OK(cs_cl_run(&d.cl, d.k.densify_score_flags, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(bg_.mem), CS_ARG(bs.mem),
                       CS_ARG(views), CS_ARG(sthr), CS_ARG(clone_max), CS_ARG(bf.mem), CS_ARG(bc.mem)));
    CHECK_OK(cs_buf_read(&d.cl, &bf, 0, sizeof(cl_uint) * n, fl2) || cs_buf_read(&d.cl, &bc, 0, sizeof(cl_uint) * n, cn2));
    int grown = 0;
    for (int i = 0; i < n; i++) {
        cl_uint f = fl[i], c = cn[i];
        if (f == 0 && sc[i] >= sthr * views) {
            const float *ls = geo + i * CS_GEO_W + CS_GEO_LOG_SCALE;
            f = exp(fmax(ls[0], fmax(ls[1], ls[2]))) <= clone_max ? 1 : 2, c = f, grown++;
        }
        CHECK(fl2[i] == f && cn2[i] == c, "row %d: flags %u counts %u, host %u %u", i, fl2[i], cn2[i], f, c);
    }
    CHECK(grown > 10, "only %d rows grown", grown);
    printf("  error score: %d of %d pixels masked, %d Gaussians' scores against the reference; %d rows flagged by it\n",
           masked, npx, compared, grown);
    cs_buf_free(&d.cl, &bg_), cs_buf_free(&d.cl, &bs), cs_buf_free(&d.cl, &bf), cs_buf_free(&d.cl, &bc);
    free(geo), free(sc), free(fl), free(cn), free(fl2), free(cn2);
    free(rgeo), free(rsh), free(edge), free(want), free(img), free(mask), free(score), free(gt);
    score_fixture_free(&d, &dn, &gtb, &r, &m, &s);
    return 0;
}
