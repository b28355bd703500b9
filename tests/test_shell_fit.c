/* mesh --shell-fit (mesh_shell_fit.h): the background shell brought in to the background the
 * views see. A made-up capture round a random centre: an object (kept surface, radius 1, every
 * direction), a backdrop (background at radius RB under the object, z < -0.2 of the direction),
 * a ring of training cameras at radius 3 slightly above the centre, a band of background nearer
 * than the cameras round their own directions (what floaters in front of them would give:
 * z < 0.35), and on top (z > 0.9) a little background among more kept surface (a fur's edge
 * the check drops), which must not bring the shell in. */
#include <math.h>
#include <stdlib.h>

#include "mesh.h"
#include "mesh_shell.h"
#include "mesh_shell_fit.h"
#include "test.h"
#include "util.h"

enum { NCAMS = 24, LEVEL = 5 };

/* a random unit direction */
static void rand_dir(uint64_t *rs, double d[3])
{
    double n;
    do {
        for (int k = 0; k < 3; k++) d[k] = 2 * test_rand(rs) - 1;
        n = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
    } while (n > 1 || n < 1e-6);
    for (int k = 0; k < 3; k++) d[k] /= sqrt(n);
}

/* the point CENTRE + R D as floats */
static void point(const double c[3], double r, const double d[3], float p[3])
{
    for (int k = 0; k < 3; k++) p[k] = (float)(c[k] + r * d[k]);
}

/* the ring of cameras CAMS at radius 3 round C, slightly above it */
static void ring(const double c[3], double cams[NCAMS][3])
{
    for (int i = 0; i < NCAMS; i++) {
        double a = 2 * M_PI * i / NCAMS, d[3] = {cos(a), sin(a), 0.1};
        for (int k = 0; k < 3; k++) cams[i][k] = c[k] + 3 * d[k] / sqrt(1.01);
    }
}

/* F filled with the made-up capture (backdrop at RB); BACKGROUND 0 files the backdrop as kept
   surface instead (a fit that ignored the flag) */
static void fill(cs_shell_fit *f, uint64_t *rs, double rb, int background)
{
    const double *c = f->centre;
    for (int i = 0; i < 2000000; i++) {
        double d[3];
        float p[3];
        rand_dir(rs, d);
        if (i % 4 == 0) point(c, 1, d, p), cs_shell_fit_surface(f, p, 0);                     /* the object */
        else if (d[2] < -0.2) point(c, rb, d, p), cs_shell_fit_surface(f, p, background);      /* the backdrop */
        else if (d[2] < 0.35) point(c, 2, d, p), cs_shell_fit_surface(f, p, background);        /* floaters */
        else if (d[2] > 0.9 && i % 8 == 1) point(c, 1.1, d, p), cs_shell_fit_surface(f, p, background); /* a few */
    }
}

/* the shell's radius at each of its vertices (first .. nv of M), and their directions' z */
static double vertex_radius(const cs_mesh *m, size_t i, const double c[3], double *z)
{
    double d[3], r;
    for (int k = 0; k < 3; k++) d[k] = m->pos[3 * i + k] - c[k];
    r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    *z = d[2] / r;
    return r;
}

/* runs one fit; *ON_BACKDROP: largest relative error of the radius under the backdrop's middle,
   *FAR_OK: the top stays far, *INSIDE: every camera inside the shell */
static int run_fit(uint64_t *rs, int background, double *on_backdrop, int *far_ok, int *inside, size_t *fitted)
{
    double c[3], far = 50, rb = 5 + 2 * test_rand(rs), cams[NCAMS][3];
    for (int k = 0; k < 3; k++) c[k] = 4 * (test_rand(rs) - 0.5);
    cs_shell_fit f;
    cs_mesh m = {0};
    ring(c, cams);
    CHECK_OK(cs_shell_fit_init(&f, c, far, &cams[0][0], NCAMS));
    fill(&f, rs, rb, background);
    CHECK_OK(cs_mesh_add_shell(&m, c, far, LEVEL));
    CHECK_OK(cs_shell_fit_apply(&f, &m, 0, m.nv, 0, fitted));
    *on_backdrop = 0, *far_ok = 1, *inside = 1;
    for (size_t i = 0; i < m.nv; i++) {
        double z, r = vertex_radius(&m, i, c, &z);
        if (z < -0.6) *on_backdrop = fmax(*on_backdrop, fabs(r - rb) / rb);
        if (z > 0.8 && fabs(r - far) > 1e-3 * far) *far_ok = 0;
        for (int j = 0; j < NCAMS; j++) { /* the vertices within 3 degrees of a camera's direction */
            double d[3], dc[3], n = 0, nc = 0, dot = 0;
            for (int k = 0; k < 3; k++) d[k] = m.pos[3 * i + k] - c[k], dc[k] = cams[j][k] - c[k];
            for (int k = 0; k < 3; k++) n += d[k] * d[k], nc += dc[k] * dc[k], dot += d[k] * dc[k];
            if (dot > cos(3 * M_PI / 180) * sqrt(n * nc) && n < nc) *inside = 0;
        }
    }
    printf("  backdrop at %.2f (background %d): %zu of %zu vertices fitted, largest error under it %.1f%%, top far %d, "
           "cameras inside %d\n", rb, background, *fitted, m.nv, 100 * *on_backdrop, *far_ok, *inside);
    cs_mesh_free(&m);
    cs_shell_fit_free(&f);
    return 0;
}

int test_shell_fit(void)
{
    uint64_t rs = test_seed() ^ 0x5e11f;
    double err;
    int far_ok, inside;
    size_t fitted;
    if (run_fit(&rs, 1, &err, &far_ok, &inside, &fitted)) return 1;
    CHECK(err < 0.05, "the shell under the backdrop is %.1f%% off it", 100 * err);
    CHECK(far_ok, "the shell moved in where the views see no background");
    CHECK(inside, "a training camera is outside the fitted shell");
    CHECK(fitted > 0 && fitted < cs_mesh_shell_triangles(LEVEL) / 2, "%zu vertices fitted", fitted);
    /* the backdrop filed as kept surface: nothing is background, nothing moves */
    if (run_fit(&rs, 0, &err, &far_ok, &inside, &fitted)) return 1;
    CHECK(fitted == 0 && far_ok && inside, "with no background %zu vertices fitted", fitted);
    return 0;
}
