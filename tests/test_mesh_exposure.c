/* The model's per-view exposure in the mesh stage (mesh_exposure.h): exposure.json read on the
 * host (the rows by the views' names, the identity for a view it leaves out, a malformed matrix
 * refused with the file and view named); the device refinement comparing each training photo
 * with its view's transform of the drawing and a pseudo-view at the identity; --psnr drawing a
 * held-out view under the blend of its nearest training views' transforms. The scene: two
 * training cameras and a held-out one halfway between them, all facing a square that fills
 * their views. Every photo is the same grey G; view 0 was taken under a gain A (per channel),
 * view 1 under an offset G - C, so the one colour both explain is C = G / A, and the held-out
 * view's blend (gain (1 + A) / 2, offset (G - C) / 2) takes C to G exactly. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_eval.h"
#include "mesh_exposure.h"
#include "mesh_pseudo.h"
#include "mesh_refine.h"
#include "outputs.h"
#include "test.h"
#include "util.h"

#define W 32
#define H 24

typedef struct {
    cs_camera cams[3]; /* v0, v1 (training), t (held out, between them) */
    cs_scene s;
    double g, a[3], c[3]; /* the photos' grey, view 0's gains, the true colour (0-1) */
    char photo[700], json[700];
} exp_scene;

/* a W x H pinhole at (X, 0, -3) facing +z, its photo PHOTO */
static void place(cs_camera *c, double x, const char *name, const char *photo, int is_test)
{
    memset(c, 0, sizeof *c);
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, C[3] = {x, 0, -3};
    memcpy(c->R, R, sizeof c->R);
    cs_camera_place(c, C);
    c->width = c->file_width = c->photo_width = W, c->height = c->file_height = c->photo_height = H;
    c->fx = c->fy = 20, c->cx = W / 2.0, c->cy = H / 2.0, c->orientation = 1, c->map = -1, c->is_test = is_test;
    snprintf(c->name, sizeof c->name, "%s", name), snprintf(c->path, sizeof c->path, "%s", photo);
}

/* the rows graphdeco's exposure.json would hold for the scene: view 0 a gain, view 1 an offset */
static void true_rows(const exp_scene *e, float rows[2][CS_EXPOSURE_W])
{
    memset(rows, 0, 2 * CS_EXPOSURE_W * sizeof(float));
    for (int k = 0; k < 3; k++) {
        rows[0][5 * k] = (float)e->a[k];
        rows[1][5 * k] = 1, rows[1][4 * k + 3] = (float)(e->g - e->c[k]);
    }
}

/* a W x H photo of grey V (0-1) at the scratch folder's NAME into PATH */
static int grey_photo(const char *name, double v, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", test_tmpdir(), name);
    cs_image img = {W, H, 3, malloc(W * H * 3)};
    CHECK(img.px, "out of memory");
    memset(img.px, (int)lround(v * 255), W * H * 3);
    int rc = cs_image_save_png(path, &img);
    cs_image_free(&img);
    CHECK_OK(rc);
    return 0;
}

static int make_scene(exp_scene *e, uint64_t *rs)
{
    memset(e, 0, sizeof *e);
    e->g = (64 + (int)(40 * test_rand(rs))) / 255.0;
    for (int k = 0; k < 3; k++) e->a[k] = 0.5 + 0.1 * test_rand(rs), e->c[k] = e->g / e->a[k];
    if (grey_photo("exposure_grey.png", e->g, e->photo, sizeof e->photo)) return 1;
    place(&e->cams[0], -0.3, "v0", e->photo, 0), place(&e->cams[1], 0.3, "v1", e->photo, 0);
    place(&e->cams[2], 0, "t", e->photo, 1);
    e->s = (cs_scene){.kind = CS_SCENE_COLMAP, .cams = e->cams, .n_cams = 3};
    /* exposure.json as training writes it (names in any order, one the scene does not have) */
    float rows[2][CS_EXPOSURE_W];
    true_rows(e, rows);
    json_t *o = json_object();
    for (int v = 1; v >= 0; v--) {
        json_t *m = json_array();
        for (int r = 0; r < 3; r++)
            json_array_append_new(m, json_pack("[ffff]", rows[v][4 * r], rows[v][4 * r + 1], rows[v][4 * r + 2],
                                               rows[v][4 * r + 3]));
        json_object_set_new(o, v ? "v1" : "v0", m);
    }
    int rc;
    json_object_set_new(o, "elsewhere", json_pack("[[ffff][ffff][ffff]]", 9., 9., 9., 9., 9., 9., 9., 9., 9., 9., 9., 9.));
    snprintf(e->json, sizeof e->json, "%s/exposure.json", test_tmpdir());
    rc = cs_write_json(e->json, o);
    json_decref(o);
    CHECK_OK(rc);
    return 0;
}

/* the file read back: both rows by name; a file naming only v1 leaves v0 at the identity; a
   matrix of the wrong shape is refused with the file and the view named */
static int check_load(const exp_scene *e)
{
    cs_mesh_exposure x;
    CHECK_OK(cs_mesh_exposure_load(&x, &e->s, e->json));
    float rows[2][CS_EXPOSURE_W];
    true_rows(e, rows);
    int ok = x.found == 2 && x.split.n_train == 2;
    for (int v = 0; ok && v < 2; v++)
        for (int q = 0; q < CS_EXPOSURE_W; q++)
            ok = ok && fabsf(x.rows[CS_EXPOSURE_W * v + q] - rows[x.split.train[v]][q]) < 1e-6f;
    cs_mesh_exposure_free(&x);
    CHECK(ok, "exposure.json's rows were not read back by the views' names");
    char p[800];
    snprintf(p, sizeof p, "%s/exposure_partial.json", test_tmpdir());
    json_t *o = json_pack("{s[[ffff][ffff][ffff]]}", "v1", 2., 0., 0., .1, 0., 2., 0., .1, 0., 0., 2., .1);
    CHECK(o && cs_write_json(p, o) == 0, "could not write %s", p);
    json_decref(o);
    CHECK_OK(cs_mesh_exposure_load(&x, &e->s, p));
    ok = x.found == 1 && x.rows[0] == 1 && x.rows[5] == 1 && x.rows[10] == 1 && x.rows[3] == 0 &&
         x.rows[CS_EXPOSURE_W] == 2 && fabsf(x.rows[CS_EXPOSURE_W + 11] - 0.1f) < 1e-6f;
    cs_mesh_exposure_free(&x);
    CHECK(ok, "a view exposure.json leaves out is not at the identity, or v1's row is not read");
    o = json_pack("{s[[ffff][fff][ffff]]}", "v0", 1., 0., 0., 0., 0., 1., 0., 0., 0., 1., 0.);
    CHECK(o && cs_write_json(p, o) == 0, "could not write %s", p);
    json_decref(o);
    int rc = cs_mesh_exposure_load(&x, &e->s, p);
    CHECK(rc != 0 && strstr(cs_last_error(), p) && strstr(cs_last_error(), "v0"),
          "a 3 x 3 + 1 matrix: rc %d, message \"%s\"", rc, cs_last_error());
    return 0;
}

/* the square's mesh (4 vertices, 2 triangles) with every vertex at grey V (0-1) */
typedef struct {
    float pos[12];
    uint32_t tri[6];
    uint8_t rgb[12];
    cs_mesh m;
} square_mesh;

static void square(square_mesh *q, double v)
{
    const float p[12] = {-4, -4, 0, 4, -4, 0, 4, 4, 0, -4, 4, 0};
    const uint32_t t[6] = {0, 1, 2, 0, 2, 3};
    memcpy(q->pos, p, sizeof p), memcpy(q->tri, t, sizeof t);
    memset(q->rgb, (int)lround(v * 255), 12);
    q->m = (cs_mesh){.pos = q->pos, .rgb = q->rgb, .tri = q->tri, .nv = 4, .nt = 2};
}

/* the refinement on the device from grey 0.5; with X, pseudo-views too whose drawings are the
   true colour (at the identity, they agree with the photos under their exposures); without
   (NULL), the photos alone: the mean distance of the vertices' colours from the true colour
   and from the photos' grey */
static int refine(cs_cl *cl, const exp_scene *e, const cs_mesh_exposure *x, double *to_true, double *to_grey)
{
    square_mesh q;
    square(&q, 0.5);
    cs_mesh_pseudo p = {0};
    CHECK_OK(cs_mesh_pseudo_cameras(&e->s, x ? 1 : 0, 1e18, &p));
    CHECK(p.n == (x ? 2 : 0) && (p.imgs = calloc(2, sizeof(cs_image))) != NULL, "%d pseudo cameras", p.n);
    for (int i = 0; i < p.n; i++) {
        p.imgs[i] = (cs_image){W, H, 3, malloc(W * H * 3)};
        CHECK(p.imgs[i].px, "out of memory");
        for (int q = 0; q < W * H * 3; q++) p.imgs[i].px[q] = (uint8_t)lround(e->c[q % 3] * 255);
    }
    cs_mesh_refine_opts o = {.iterations = test_small() ? 60 : 400, .lr = 0.01, .dssim = 0.2, .seed = 5,
                             .pseudo = p.n ? &p : NULL, .exposure = x};
    cs_mesh_refine_stats st;
    int rc = cs_mesh_refine_colors(&q.m, &e->s, cl, &o, 0, &st);
    cs_mesh_pseudo_free(&p);
    CHECK_OK(rc);
    *to_true = *to_grey = 0;
    for (int i = 0; i < 12; i++)
        *to_true += fabs(q.rgb[i] / 255.0 - e->c[i % 3]) / 12, *to_grey += fabs(q.rgb[i] / 255.0 - e->g) / 12;
    return 0;
}

/* --psnr's drawing of the held-out view with the true colours: under the blend, the photos'
   grey up to rounding; at the identity, C against G */
static int check_eval(const exp_scene *e, const cs_mesh_exposure *x)
{
    square_mesh q;
    square(&q, 0);
    for (int i = 0; i < 12; i++) q.rgb[i] = (uint8_t)lround(e->c[i % 3] * 255);
    cs_mesh_eval_result with, without;
    CHECK_OK(cs_mesh_eval(&q.m, &e->s, x, 1, NULL, &with));
    CHECK_OK(cs_mesh_eval(&q.m, &e->s, NULL, 1, NULL, &without));
    printf("  held-out view: %.1f dB under the blend of its neighbours' exposures, %.1f at the identity\n", with.psnr,
           without.psnr);
    CHECK(with.views == 1 && !strcmp(with.split, "test") && with.coverage > 0.999, "%d %s views, %.3f covered",
          with.views, with.split, with.coverage);
    CHECK(with.psnr > 40 && without.psnr < 28, "under the blend %.1f dB (not > 40), at the identity %.1f (not < 28)",
          with.psnr, without.psnr);
    return 0;
}

/* --refine-exposure: no file, the exposures learned from the identity. View 0's photo is the
   grey C (1 + D), view 1's C (1 - D): with the rows' mean held at the identity the one colour
   is C, and each view's transform takes it to its photo (the rows themselves are not unique:
   a gain and an offset or the channels' mixing draw a grey alike) */
static int check_learn(cs_cl *cl, uint64_t *rs)
{
    exp_scene e;
    if (make_scene(&e, rs)) return 1;
    double c = 0.4 + 0.1 * test_rand(rs), dd = 0.2 + 0.1 * test_rand(rs);
    char p0[700], p1[700];
    if (grey_photo("learn0.png", c * (1 + dd), p0, sizeof p0) || grey_photo("learn1.png", c * (1 - dd), p1, sizeof p1))
        return 1;
    snprintf(e.cams[0].path, sizeof e.cams[0].path, "%s", p0), snprintf(e.cams[1].path, sizeof e.cams[1].path, "%s", p1);
    square_mesh q;
    square(&q, 0.5);
    cs_mesh_exposure got = {0};
    cs_mesh_refine_opts o = {.iterations = test_small() ? 60 : 800, .lr = 0.01, .dssim = 0.2, .seed = 7,
                             .exposure_lr = 0.01, .learned = &got};
    cs_mesh_refine_stats st;
    CHECK_OK(cs_mesh_refine_colors(&q.m, &e.s, cl, &o, 0, &st));
    CHECK(got.rows && got.split.n_train == 2, "no learned rows");
    double off = 0, g[2]; /* each view's learned red at the true colour: (A c + b)_red */
    for (int i = 0; i < 12; i++) off += fabs(q.rgb[i] / 255.0 - c) / 12;
    for (int v = 0; v < 2; v++) {
        const float *r = got.rows + CS_EXPOSURE_W * v;
        g[got.split.train[v]] = (r[0] + r[1] + r[2]) * c + r[3];
    }
    cs_mesh_exposure_free(&got);
    printf("  learned: colour %.3f from the true %.3f; the views' transforms take it to %.3f / %.3f (photos %.3f / "
           "%.3f)\n", off, c, g[0], g[1], c * (1 + dd), c * (1 - dd));
    if (test_small()) return 0;
    CHECK(off < 0.02 && fabs(g[0] - c * (1 + dd)) < 0.02 && fabs(g[1] - c * (1 - dd)) < 0.02,
          "the learned colour or transforms are off (above)");
    return 0;
}

/* the host's part: the file, --psnr's blend, the host refinement's refusal */
int test_mesh_exposure_host(void)
{
    uint64_t rs = test_seed() ^ 0x6568;
    exp_scene e;
    if (make_scene(&e, &rs) || check_load(&e)) return 1;
    cs_mesh_exposure x;
    CHECK_OK(cs_mesh_exposure_load(&x, &e.s, e.json));
    if (check_eval(&e, &x)) return cs_mesh_exposure_free(&x), 1;
    /* the host refinement (the colours' reference) has no exposure: refused, not ignored */
    square_mesh q;
    square(&q, 0.5);
    cs_mesh_refine_opts ho = {.iterations = 10, .lr = 0.01, .exposure = &x};
    cs_mesh_refine_stats st;
    int rc = cs_mesh_refine_colors(&q.m, &e.s, NULL, &ho, 0, &st);
    cs_mesh_exposure_free(&x);
    CHECK(rc != 0 && strstr(cs_last_error(), "exposure"), "the host refinement with an exposure: rc %d", rc);
    return 0;
}

/* the device refinement under the views' exposures */
int test_mesh_exposure(void)
{
    uint64_t rs = test_seed() ^ 0x6578;
    exp_scene e;
    if (make_scene(&e, &rs)) return 1;
    cs_mesh_exposure x;
    CHECK_OK(cs_mesh_exposure_load(&x, &e.s, e.json));
    cs_cl cl;
    if (test_open_cl(&cl)) {
        cs_mesh_exposure_free(&x);
        CHECK_OK(-1);
    }
    double t1, g1, t0, g0;
    int rc = refine(&cl, &e, &x, &t1, &g1) || refine(&cl, &e, NULL, &t0, &g0) || check_learn(&cl, &rs);
    cs_cl_close(&cl);
    cs_mesh_exposure_free(&x);
    if (rc) return 1;
    printf("  true colour %.3f %.3f %.3f, photos %.3f: refined %.3f from it with the exposures (%.3f from the photos' "
           "grey), %.3f without (%.3f from the grey)\n", e.c[0], e.c[1], e.c[2], e.g, t1, g1, t0, g0);
    if (test_small()) return 0; /* 60 views: the path runs, Adam has not come far */
    CHECK(t1 < 0.01, "with the exposures the colours end %.3f from the one colour every view explains", t1);
    CHECK(t0 > t1 + 0.05, "without them the colours end %.3f from it, not further than with them", t0);
    return 0;
}
