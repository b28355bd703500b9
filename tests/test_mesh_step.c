/* The geometry step chosen by held-out training views (mesh_step.h): which steps are tried (a
 * capture's default), which views are held out,
 * that the refinement never draws them (on the host, its reference: the held-out photos are
 * black, the others white, and the colours end white), and on the device that a step which lets
 * the silhouettes reach the photos' is chosen over one that cannot move them, whatever the
 * list's order, that each step's figure is the one a trial of its own (a quarter of the
 * refinement's views) reproduces and not the whole refinement's, and that the mesh given is
 * left as it was. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "mesh_eval.h"
#include "mesh_raster.h"
#include "mesh_step.h"
#include "test.h"
#include "util.h"

#define W 48
#define H 36
#define N_CAMS 19 /* two of them test views */
#define GRID 9

typedef struct {
    cs_camera cams[N_CAMS];
    cs_scene s;
    cs_mesh truth, start;
} step_scene;

static void scene_free(step_scene *e)
{
    cs_mesh_free(&e->truth), cs_mesh_free(&e->start);
}

/* camera C at CENTRE looking at the origin, z up in the world, y down in the image */
static void look_at(cs_camera *c, const double centre[3])
{
    double f[3], n = sqrt(centre[0] * centre[0] + centre[1] * centre[1] + centre[2] * centre[2]);
    for (int i = 0; i < 3; i++) f[i] = -centre[i] / n;
    double x[3] = {f[1], -f[0], 0}; /* f x (0, 0, 1) */
    double nx = sqrt(x[0] * x[0] + x[1] * x[1]);
    for (int i = 0; i < 3; i++) x[i] /= nx;
    double y[3] = {f[1] * x[2] - f[2] * x[1], f[2] * x[0] - f[0] * x[2], f[0] * x[1] - f[1] * x[0]};
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 3; i++) c->R[i] = x[i], c->R[3 + i] = y[i], c->R[6 + i] = f[i];
    cs_camera_place(c, centre);
    c->width = c->file_width = c->photo_width = W, c->height = c->file_height = c->photo_height = H;
    c->fx = c->fy = 40, c->cx = W / 2.0, c->cy = H / 2.0, c->orientation = 1, c->map = -1;
}

/* a GRID x GRID sheet of side SIDE at z = 0 (drawn from either side: no culling), colours from
   a checker of 3 x 3 blocks (or grey with GREY) */
static int sheet(cs_mesh *m, double side, int grey)
{
    size_t nv = GRID * GRID, nt = 2 * (GRID - 1) * (GRID - 1);
    m->pos = malloc(sizeof(float) * 3 * nv), m->rgb = malloc(3 * nv), m->tri = malloc(sizeof(uint32_t) * 3 * nt);
    m->nv = nv, m->nt = nt, m->tex = NULL, m->tex_r = 0;
    CHECK(m->pos && m->rgb && m->tri, "out of memory");
    for (int y = 0, v = 0; y < GRID; y++)
        for (int x = 0; x < GRID; x++, v++) {
            m->pos[3 * v] = (float)(side * ((double)x / (GRID - 1) - 0.5));
            m->pos[3 * v + 1] = (float)(side * ((double)y / (GRID - 1) - 0.5)), m->pos[3 * v + 2] = 0;
            int on = (x / 3 + y / 3) % 2;
            for (int k = 0; k < 3; k++) m->rgb[3 * v + k] = grey ? 128 : on ? (uint8_t)(230 - 60 * k) : (uint8_t)(30 + 50 * k);
        }
    size_t t = 0;
    for (int y = 0; y + 1 < GRID; y++)
        for (int x = 0; x + 1 < GRID; x++) {
            uint32_t a = (uint32_t)(y * GRID + x), b = a + 1, d = a + GRID, e2 = d + 1;
            uint32_t q[6] = {a, b, e2, a, e2, d};
            memcpy(m->tri + 3 * t, q, sizeof q), t += 2;
        }
    return 0;
}

/* the scene: N_CAMS cameras on a ring above the sheet, each photo the true sheet (side 2) drawn
   on the background; the mesh to refine starts as a grey sheet of side 1.6 */
static int make(step_scene *e, const char *tag)
{
    memset(e, 0, sizeof *e);
    if (sheet(&e->truth, 2.0, 0) || sheet(&e->start, 1.6, 1)) return 1;
    e->s = (cs_scene){.kind = CS_SCENE_COLMAP, .cams = e->cams, .n_cams = N_CAMS, .background = {0.2f, 0.3f, 0.4f}};
    for (int i = 0; i < N_CAMS; i++) {
        double a = 2 * M_PI * i / N_CAMS, el = 0.7 + 0.4 * (i % 3) / 2.0;
        double centre[3] = {4 * cos(el) * cos(a), 4 * cos(el) * sin(a), 4 * sin(el)};
        cs_camera *c = &e->cams[i];
        look_at(c, centre);
        c->is_test = i == 5 || i == 11;
        snprintf(c->name, sizeof c->name, "v%02d", i);
        snprintf(c->path, sizeof c->path, "%s/step_%s_%02d.png", test_tmpdir(), tag, i);
        cs_image img = {0};
        CHECK_OK(cs_mesh_rasterize(&e->truth, c, e->s.background, 1, &img, NULL, NULL));
        int rc = cs_image_save_png(c->path, &img);
        cs_image_free(&img);
        CHECK_OK(rc);
    }
    return 0;
}

/* every 8th training view (test views skipped) held out; none where that leaves none to refine on */
static int check_held_out(step_scene *e)
{
    uint8_t held[N_CAMS];
    int views[N_CAMS], n = cs_mesh_held_out(&e->s, held, views), train = 0, want = 0;
    for (int i = 0; i < N_CAMS; i++) {
        if (e->cams[i].is_test) {
            CHECK(!held[i], "test view %d held out", i);
            continue;
        }
        int h = train++ % CS_MESH_STEP_HOLD_EVERY == 0;
        CHECK(held[i] == h, "training view %d (the %dth) held %d", i, train - 1, held[i]);
        if (h) CHECK(views[want++] == i, "the list's view %d is %d, not %d", want - 1, views[want - 1], i);
    }
    CHECK(n == want && n == 3, "%d views held out, %d marked", n, want);
    cs_scene one = {.cams = e->cams, .n_cams = 1}; /* one training view: nothing to hold out */
    CHECK(cs_mesh_held_out(&one, held, views) == 0 && !held[0], "the only training view was held out");
    return 0;
}

/* the steps tried: a list as given; on a capture with no step given, the auto list; none for one
   step given, on a Blender scene, or with one training view */
static int check_steps_to_try(step_scene *e)
{
    double steps[CS_MESH_STEPS_MAX], list[CS_MESH_STEPS_MAX] = {0.3, 0.2}, autos[] = CS_MESH_STEPS_AUTO;
    CHECK(cs_mesh_steps_to_try(&e->s, list, 2, 1, steps) == 2 && steps[0] == 0.3 && steps[1] == 0.2, "a list");
    int n = cs_mesh_steps_to_try(&e->s, list, 0, 0, steps);
    CHECK(n == CS_MESH_STEPS_AUTO_N && !memcmp(steps, autos, sizeof autos), "a capture's default: %d steps", n);
    CHECK(cs_mesh_steps_to_try(&e->s, list, 1, 1, steps) == 0, "one step given");
    e->s.kind = CS_SCENE_BLENDER;
    CHECK(cs_mesh_steps_to_try(&e->s, list, 0, 0, steps) == 0, "a Blender scene's default");
    e->s.kind = CS_SCENE_COLMAP;
    int test[N_CAMS];
    for (int i = 0; i < N_CAMS; i++) test[i] = e->cams[i].is_test, e->cams[i].is_test = i != 7;
    n = cs_mesh_steps_to_try(&e->s, list, 0, 0, steps);
    for (int i = 0; i < N_CAMS; i++) e->cams[i].is_test = test[i];
    CHECK(n == 0, "one training view: %d steps", n);
    return 0;
}

int test_mesh_step_held(void)
{
    step_scene e;
    if (make(&e, "held")) return scene_free(&e), 1;
    int rc = check_held_out(&e) || check_steps_to_try(&e);
    /* the held-out views' photos removed: the refinement, which reads each view's photo, must
       pass with them held out and fail without (the check can fail) */
    uint8_t held[N_CAMS];
    int views[N_CAMS], nh = cs_mesh_held_out(&e.s, held, views), out[2] = {-1, -1}, seen = 0;
    for (int k = 0; !rc && k < nh; k++) rc = remove(e.cams[views[k]].path);
    for (int k = 0; !rc && k < 2; k++) {
        cs_mesh m;
        if ((rc = cs_mesh_copy(&e.start, &m)) != 0) break;
        cs_mesh_refine_opts o = {.iterations = 200, .lr = 0.05, .seed = 3, .held_out = k ? NULL : held};
        cs_mesh_refine_stats st;
        out[k] = cs_mesh_refine_colors(&m, &e.s, NULL, &o, 0, &st);
        if (k == 0) seen = st.views;
        cs_mesh_free(&m);
    }
    scene_free(&e);
    CHECK_OK(rc);
    printf("  held out: refinement rc %d over %d views; not held out: rc %d (%s)\n", out[0], seen, out[1], cs_last_error());
    CHECK(out[0] == 0 && seen == 14, "held out: rc %d, %d views (want 0, 14)", out[0], seen);
    CHECK(out[1] != 0 && strstr(cs_last_error(), "step_held_"), "not held out: rc %d, '%s'", out[1], cs_last_error());
    return 0;
}

/* the choice among STEPS (N of them) on E, the index of the step 0.05 in it; the chosen figure
   checked against a trial of its own */
static int choose(step_scene *e, cs_cl *cl, const double *steps, int n, int want, cs_mesh_step_choice *ch)
{
    /* trials of 100 + 200 views (the share of 400 + 800); a colour step small enough that 100
       views leave the colours short of the photos' */
    cs_mesh_refine_opts o = {.iterations = 400, .lr = 0.002, .dssim = 0.2, .seed = 1, .geometry = 800,
                             .nmove = e->start.nv, .geom = {0, 0.1, 0.1}};
    float before[3 * GRID * GRID];
    memcpy(before, e->start.pos, sizeof before);
    CHECK_OK(cs_mesh_choose_step(&e->start, &e->s, cl, &o, NULL, steps, n, 0, ch));
    CHECK(!memcmp(before, e->start.pos, sizeof before), "the mesh given was changed");
    CHECK(ch->n == n && ch->held == 3, "%d steps tried, %d views held out", ch->n, ch->held);
    for (int k = 0; k < n; k++)
        printf("  step %g: %.2f dB at the 3 held-out views (lowest %.2f)\n", ch->step[k], ch->psnr[k], ch->psnr_min[k]);
    CHECK(ch->chosen == want, "step %g chosen, not %g", ch->step[ch->chosen], steps[want]);
    CHECK(ch->psnr[want] > ch->psnr[1 - want] + 1, "the moving step gained %.2f dB", ch->psnr[want] - ch->psnr[1 - want]);
    /* the still step's figure again: a copy refined on the views not held out, drawn at those
       held out (the moving step's varies from run to run by a dB or two on PoCL: the geometry
       stage sums its gradients with float atomics, in no fixed order) */
    uint8_t held[N_CAMS];
    int views[N_CAMS], nh = cs_mesh_held_out(&e->s, held, views);
    cs_mesh m;
    CHECK_OK(cs_mesh_copy(&e->start, &m));
    o.geom.lr = steps[1 - want], o.held_out = held;
    o.iterations = cs_mesh_trial_views(o.iterations), o.geometry = cs_mesh_trial_views(o.geometry);
    CHECK(o.iterations == 100 && o.geometry == 200, "a trial of %d + %d views", o.iterations, o.geometry);
    cs_mesh_refine_stats st;
    cs_mesh_eval_result r;
    int rc = cs_mesh_refine_colors(&m, &e->s, cl, &o, 0, &st) ||
             cs_mesh_eval_views(&m, &e->s, NULL, 1, views, nh, "held-out", &r);
    cs_mesh_free(&m);
    CHECK_OK(rc);
    CHECK(fabs(r.psnr - ch->psnr[1 - want]) < 0.01, "a trial of its own reads %.3f dB, the choice %.3f", r.psnr,
          ch->psnr[1 - want]);
    /* the whole refinement's figure for the still step: its colours, at this small step, fit the
       photos better over four times the views than its trial did (0.6 dB on PoCL) */
    CHECK_OK(cs_mesh_copy(&e->start, &m));
    o.iterations = 400, o.geometry = 800;
    rc = cs_mesh_refine_colors(&m, &e->s, cl, &o, 0, &st) ||
         cs_mesh_eval_views(&m, &e->s, NULL, 1, views, nh, "held-out", &r);
    cs_mesh_free(&m);
    CHECK_OK(rc);
    printf("  the still step refined over 400 + 800 views: %.3f dB, its trial %.3f\n", r.psnr, ch->psnr[1 - want]);
    CHECK(r.psnr > ch->psnr[1 - want] + 0.2, "the trial (%.3f dB) is not shorter than the whole refinement (%.3f)",
          ch->psnr[1 - want], r.psnr);
    return 0;
}

int test_mesh_step(void)
{
    step_scene e;
    if (make(&e, "choice")) return scene_free(&e), 1;
    cs_cl cl;
    if (test_open_cl(&cl)) return scene_free(&e), 1;
    cs_mesh_step_choice ch;
    const double a[2] = {1e-5, 0.05}, b[2] = {0.05, 1e-5};
    int rc = choose(&e, &cl, a, 2, 1, &ch) || choose(&e, &cl, b, 2, 0, &ch);
    /* a list too long is refused */
    double five[5] = {0.01, 0.02, 0.03, 0.04, 0.05};
    if (!rc && cs_mesh_choose_step(&e.start, &e.s, &cl, &(cs_mesh_refine_opts){.iterations = 1, .geometry = 1}, NULL,
                                   five, 5, 0, &ch) == 0)
        rc = 1, fprintf(stderr, "  five steps were not refused\n");
    cs_cl_close(&cl);
    scene_free(&e);
    return rc;
}
