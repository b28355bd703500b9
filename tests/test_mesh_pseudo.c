/* mesh --pseudo-views (mesh_pseudo.h): the cameras between training views (poses against the
 * rotation's angle and the centres, the nearest views against a brute-force search) and their
 * use as targets of the refinement (mesh_refine.h, on the host, its reference). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "mesh_pseudo.h"
#include "mesh_refine.h"
#include "test.h"
#include "util.h"

static void random_rotation(uint64_t *rs, double R[9])
{
    double q[4], n = 0;
    for (int i = 0; i < 4; i++) q[i] = test_randn(rs), n += q[i] * q[i];
    for (int i = 0; i < 4; i++) q[i] /= sqrt(n);
    cs_quat_to_rot(q, R);
}

/* a camera at centre C with rotation R, W x H, random intrinsics */
static void place(cs_camera *c, const double R[9], const double C[3], int w, int h, uint64_t *rs)
{
    memset(c, 0, sizeof *c);
    memcpy(c->R, R, sizeof c->R);
    cs_camera_place(c, C);
    c->width = c->file_width = c->photo_width = w, c->height = c->file_height = c->photo_height = h;
    c->fx = 10 + 50 * test_rand(rs), c->fy = 10 + 50 * test_rand(rs), c->cx = w * test_rand(rs), c->cy = h * test_rand(rs);
    c->orientation = 1, c->map = -1;
}

/* the angle of the rotation taking A's frame to B's (radians) */
static double angle_between(const double A[9], const double B[9])
{
    double tr = 0; /* trace of A^T B */
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 3; k++) tr += A[3 * k + i] * B[3 * k + i];
    double c = (tr - 1) / 2;
    return acos(c > 1 ? 1 : c < -1 ? -1 : c);
}

static int check_between(uint64_t *rs)
{
    for (int trial = 0; trial < 200; trial++) {
        double Ra[9], Rb[9], ca[3], cb[3];
        random_rotation(rs, Ra), random_rotation(rs, Rb);
        for (int i = 0; i < 3; i++) ca[i] = 10 * test_rand(rs) - 5, cb[i] = 10 * test_rand(rs) - 5;
        cs_camera a, b, m;
        place(&a, Ra, ca, 40, 30, rs), place(&b, Rb, cb, 50, 20, rs);
        double f = trial % 3 == 0 ? 0.0 : trial % 3 == 1 ? 1.0 : test_rand(rs);
        cs_mesh_pseudo_between(&a, &b, f, &m);
        double cm[3], det = 0, ortho = 0;
        cs_camera_center(&m, cm);
        for (int i = 0; i < 3; i++)
            CHECK(fabs(cm[i] - (ca[i] + f * (cb[i] - ca[i]))) < 1e-9, "trial %d: centre %d is %.9g", trial, i, cm[i]);
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) {
                double d = 0;
                for (int j = 0; j < 3; j++) d += m.R[3 * i + j] * m.R[3 * k + j];
                ortho = fmax(ortho, fabs(d - (i == k)));
            }
        det = m.R[0] * (m.R[4] * m.R[8] - m.R[5] * m.R[7]) - m.R[1] * (m.R[3] * m.R[8] - m.R[5] * m.R[6]) +
              m.R[2] * (m.R[3] * m.R[7] - m.R[4] * m.R[6]);
        CHECK(ortho < 1e-9 && fabs(det - 1) < 1e-9, "trial %d: not a rotation (%.3g off, det %.9g)", trial, ortho, det);
        double all = angle_between(Ra, Rb), to_a = angle_between(Ra, m.R), to_b = angle_between(m.R, Rb);
        CHECK(fabs(to_a - f * all) < 1e-6 && fabs(to_b - (1 - f) * all) < 1e-6,
              "trial %d: f %.3f of a %.4f rad turn, but %.4f from A and %.4f to B", trial, f, all, to_a, to_b);
        CHECK(m.width == 40 && m.height == 30 && m.fx == a.fx && m.fy == a.fy && m.cx == a.cx && m.cy == a.cy &&
                  m.map == -1 && !m.path[0] && !m.is_test,
              "trial %d: the size, intrinsics or photo are not A's pinhole", trial);
    }
    return 0;
}

/* N views a training camera of a random scene (some cameras held out): each is halfway between
   its training camera and one of that camera's N nearest training cameras, in order */
static int check_cameras(uint64_t *rs)
{
    cs_scene s = {0};
    s.n_cams = 12 + (int)(10 * test_rand(rs));
    s.cams = calloc((size_t)s.n_cams, sizeof(cs_camera));
    CHECK(s.cams, "out of memory");
    for (int i = 0; i < s.n_cams; i++) {
        double R[9], C[3];
        random_rotation(rs, R);
        for (int k = 0; k < 3; k++) C[k] = 20 * test_rand(rs) - 10;
        place(&s.cams[i], R, C, 16, 12, rs);
        s.cams[i].is_test = i % 5 == 2;
    }
    int train = cs_scene_count(&s, 0), rc = 0;
    for (int n = 1; n <= 3 && !rc; n++) {
        cs_mesh_pseudo p;
        if (cs_mesh_pseudo_cameras(&s, n, 1e18, &p)) { rc = 1; break; }
        if (p.n != train * n) fprintf(stderr, "  n %d: %d cameras, not %d\n", n, p.n, train * n), rc = 1;
        for (int i = 0, at = 0; !rc && i < s.n_cams; i++) {
            if (s.cams[i].is_test) continue;
            double ci[3], used = -1;
            cs_camera_center(&s.cams[i], ci);
            for (int k = 0; k < n && !rc; k++, at++) {
                double cm[3], best = 1e300, d2 = -1;
                cs_camera_center(&p.cams[at], cm);
                for (int j = 0; j < s.n_cams; j++) { /* the partner: its centre mirrors ci in cm */
                    double cj[3], e = 0, dd = 0;
                    cs_camera_center(&s.cams[j], cj);
                    for (int q = 0; q < 3; q++) e += pow(cj[q] - (2 * cm[q] - ci[q]), 2), dd += pow(cj[q] - ci[q], 2);
                    if (e < 1e-12 && j != i && !s.cams[j].is_test) d2 = dd;
                    if (j != i && !s.cams[j].is_test && dd > used + 1e-12) best = fmin(best, dd);
                }
                if (d2 < 0 || fabs(d2 - best) > 1e-9 * (1 + best))
                    fprintf(stderr, "  n %d, view %d, pseudo %d: not halfway to its next nearest training view\n", n, i, k), rc = 1;
                used = d2;
            }
        }
        cs_mesh_pseudo_free(&p);
    }
    /* the memory cap (2.5 rounds of drawings: 2 a view) and the other views' count (train - 1) */
    double round = 4.0 * 16 * 12 * train;
    cs_mesh_pseudo p1, p2, p3;
    int bad = cs_mesh_pseudo_cameras(&s, 3, 2.5 * round, &p1) || cs_mesh_pseudo_cameras(&s, 100, 1e18, &p2) ||
              cs_mesh_pseudo_cameras(&s, 1, 0.9 * round, &p3);
    int n1 = p1.n, v1 = p1.per_view, n2 = p2.n, v2 = p2.per_view, n3 = p3.n, capped = p1.capped && !p2.capped && p3.capped;
    cs_mesh_pseudo_free(&p1), cs_mesh_pseudo_free(&p2), cs_mesh_pseudo_free(&p3);
    free(s.cams);
    CHECK(!rc, "pseudo cameras wrong (above)");
    CHECK(!bad && n1 == 2 * train && v1 == 2 && n2 == train * (train - 1) && v2 == train - 1 && n3 == 0 && capped,
          "capped: %d (%d a view), %d (%d a view), %d cameras, the memory bound flagged: %d", n1, v1, n2, v2, n3, capped);
    return 0;
}

/* two training cameras whose photos are black look at a square; their pseudo-views' targets
   are white. The host refinement leaves the square black without them and pulls it toward
   white with them */
static int check_refine_uses_them(void)
{
    char photo[700];
    snprintf(photo, sizeof photo, "%s/pseudo_black.png", test_tmpdir());
    write_gray_png(photo, 32, 24);
    cs_camera cams[2];
    uint64_t rs = 1;
    double I[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int k = 0; k < 2; k++) {
        double C[3] = {k ? 0.3 : -0.3, 0, -3};
        place(&cams[k], I, C, 32, 24, &rs);
        cams[k].fx = cams[k].fy = 20, cams[k].cx = 16, cams[k].cy = 12;
        snprintf(cams[k].path, sizeof cams[k].path, "%s", photo), snprintf(cams[k].name, sizeof cams[k].name, "v%d", k);
    }
    cs_scene s = {.kind = CS_SCENE_COLMAP, .cams = cams, .n_cams = 2};
    float pos[12] = {-3, -3, 0, 3, -3, 0, 3, 3, 0, -3, 3, 0};
    uint32_t tri[6] = {0, 1, 2, 0, 2, 3};
    double mean[2];
    for (int with = 0; with < 2; with++) {
        uint8_t rgb[12];
        memset(rgb, 128, sizeof rgb);
        cs_mesh m = {.pos = pos, .rgb = rgb, .tri = tri, .nv = 4, .nt = 2};
        cs_mesh_pseudo p = {0};
        if (with) {
            CHECK_OK(cs_mesh_pseudo_cameras(&s, 1, 1e18, &p));
            CHECK(p.n == 2 && (p.imgs = calloc(2, sizeof(cs_image))) != NULL, "%d pseudo cameras", p.n);
            for (int i = 0; i < p.n; i++) {
                p.imgs[i] = (cs_image){32, 24, 3, malloc(32 * 24 * 3)};
                CHECK(p.imgs[i].px, "out of memory");
                memset(p.imgs[i].px, 255, 32 * 24 * 3);
            }
        }
        cs_mesh_refine_opts o = {.iterations = 400, .lr = 0.01, .seed = 3, .pseudo = with ? &p : NULL};
        cs_mesh_refine_stats st;
        int rc = cs_mesh_refine_colors(&m, &s, NULL, &o, 0, &st);
        cs_mesh_pseudo_free(&p);
        CHECK_OK(rc);
        mean[with] = 0;
        for (int i = 0; i < 12; i++) mean[with] += rgb[i] / (255.0 * 12);
    }
    printf("  refined colour: %.3f with black photos alone, %.3f with white pseudo-views too\n", mean[0], mean[1]);
    CHECK(mean[0] < 0.05 && mean[1] > 0.25, "the pseudo-views do not pull the colours (%.3f, %.3f)", mean[0], mean[1]);
    return 0;
}

int test_mesh_pseudo(void)
{
    uint64_t rs = test_seed() ^ 0x7073;
    return check_between(&rs) || check_cameras(&rs) || check_refine_uses_them();
}
