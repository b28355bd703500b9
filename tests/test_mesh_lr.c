/* The refinement's step schedule (mesh_refine.h, cs_mesh_refine_lr): the colours' and the
 * texture's Adam step falls from lr to lr x CS_MESH_LR_DECAY over their stage's views. One
 * training view of a square that fills it, its photo white, the colours starting black: every
 * view's gradient is then the same, so Adam's step is exactly the schedule's (the bias-corrected
 * moments give g / |g|) and each colour ends at the schedule's sum over the views, where a constant
 * step would take it to N lr. On the host (the reference) and on the device; there the texture
 * stage, starting from the refined colours, adds its own stage's sum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_refine.h"
#include "mesh_texture.h"
#include "test.h"
#include "util.h"

#define W 32
#define H 24

typedef struct {
    cs_camera cam;
    cs_scene s;
    char photo[700];
    float pos[12];
    uint32_t tri[6];
    uint8_t rgb[12];
    cs_mesh m;
} lr_scene;

static int make(lr_scene *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->photo, sizeof e->photo, "%s/lr_white.png", test_tmpdir());
    cs_image img = {W, H, 3, malloc(W * H * 3)};
    CHECK(img.px, "out of memory");
    memset(img.px, 255, W * H * 3);
    int rc = cs_image_save_png(e->photo, &img);
    cs_image_free(&img);
    CHECK_OK(rc);
    double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, C[3] = {0, 0, -3};
    memcpy(e->cam.R, R, sizeof R);
    cs_camera_place(&e->cam, C);
    e->cam.width = e->cam.file_width = e->cam.photo_width = W;
    e->cam.height = e->cam.file_height = e->cam.photo_height = H;
    e->cam.fx = e->cam.fy = 20, e->cam.cx = W / 2.0, e->cam.cy = H / 2.0, e->cam.orientation = 1, e->cam.map = -1;
    snprintf(e->cam.name, sizeof e->cam.name, "v"), snprintf(e->cam.path, sizeof e->cam.path, "%s", e->photo);
    e->s = (cs_scene){.kind = CS_SCENE_COLMAP, .cams = &e->cam, .n_cams = 1};
    const float p[12] = {-4, -4, 0, 4, -4, 0, 4, 4, 0, -4, 4, 0};
    const uint32_t t[6] = {0, 1, 2, 0, 2, 3};
    memcpy(e->pos, p, sizeof p), memcpy(e->tri, t, sizeof t);
    e->m = (cs_mesh){.pos = e->pos, .rgb = e->rgb, .tri = e->tri, .nv = 4, .nt = 2};
    return 0;
}

/* the colour a constant gradient's Adam reaches from 0 over N views at lr's schedule */
static double schedule_sum(double lr, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += cs_mesh_refine_lr(lr, i, n);
    return s;
}

/* the schedule itself: lr at the first view, lr x decay at the end, geometric between */
static int check_schedule(void)
{
    CHECK(CS_MESH_LR_DECAY > 0 && CS_MESH_LR_DECAY < 1, "the decay %g is not a fall", CS_MESH_LR_DECAY);
    for (int n = 1; n < 300; n += 37) {
        CHECK(fabs(cs_mesh_refine_lr(0.01, 0, n) - 0.01) < 1e-12, "the first view's step is not lr (n %d)", n);
        CHECK(fabs(cs_mesh_refine_lr(0.01, n, n) - 0.01 * CS_MESH_LR_DECAY) < 1e-12, "the end is not lr x decay");
        for (int i = 1; i < n; i++) {
            double r = cs_mesh_refine_lr(0.01, i, n) / cs_mesh_refine_lr(0.01, i - 1, n);
            CHECK(fabs(r - pow(CS_MESH_LR_DECAY, 1.0 / n)) < 1e-9, "view %d of %d: ratio %.9f", i, n, r);
        }
    }
    return 0;
}

/* every value (0-255) within a level and a half of 255 EXPECT (0-1): the start and the end are rounded to bytes */
static int check_colours(const uint8_t *c, size_t n, double expect, const char *what)
{
    for (size_t i = 0; i < n; i++)
        CHECK(fabs(c[i] - 255 * expect) <= 1.5, "%s: value %zu is %d, the schedule's sum %.1f (a constant step: more)",
              what, i, c[i], 255 * expect);
    return 0;
}

int test_mesh_lr_host(void)
{
    if (check_schedule()) return 1;
    lr_scene e;
    if (make(&e)) return 1;
    int n = 40;
    cs_mesh_refine_opts o = {.iterations = n, .lr = 0.01, .seed = 2};
    cs_mesh_refine_stats st;
    CHECK_OK(cs_mesh_refine_colors(&e.m, &e.s, NULL, &o, 0, &st));
    double want = schedule_sum(0.01, n);
    printf("  host: colours %d %d %d %d after %d views, the schedule's sum %.1f, a constant step's %.1f\n", e.rgb[0],
           e.rgb[3], e.rgb[6], e.rgb[9], n, 255 * want, 255 * 0.01 * n);
    return check_colours(e.rgb, 12, want, "host refinement");
}

int test_mesh_lr(void)
{
    lr_scene e;
    if (make(&e)) return 1;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    int n = 40;
    cs_mesh_refine_opts o = {.iterations = n, .lr = 0.01, .seed = 2, .texture = 1, .texture_views = n};
    cs_mesh_refine_stats st;
    int rc = cs_mesh_refine_colors(&e.m, &e.s, &cl, &o, 0, &st);
    cs_cl_close(&cl);
    if (rc) free(e.m.tex);
    CHECK_OK(rc);
    double want = schedule_sum(0.01, n);
    size_t nt = 3 * (size_t)CS_TEX_NODES(1) * e.m.nt;
    printf("  device: colours %d %d %d %d, texture %d .. after %d + %d views; the schedule's sums %.1f, %.1f\n",
           e.rgb[0], e.rgb[3], e.rgb[6], e.rgb[9], e.m.tex[0], n, n, 255 * want, 2 * 255 * want);
    rc = check_colours(e.rgb, 12, want, "device colours") || check_colours(e.m.tex, nt, 2 * want, "device texture");
    free(e.m.tex);
    return rc;
}
