/* The supersampled refinement (mesh_device.h, S > 1): a view drawn at S times its size, each
 * photo pixel compared with the mean of its S x S samples, the loss's gradient spread back over
 * them. The device's colour and position gradients against host references built on the
 * device's own visibility buffer (ref_mesh.h for the geometry), at L1 (lambda 0), whose
 * gradient is sign(residual) / (3 W H) a photo value. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_device.h"
#include "mesh_geom.h"
#include "mesh_raster.h"
#include "ref_mesh.h"
#include "test.h"
#include "util.h"

static const float BG[3] = {0.3f, 0.8f, 0.45f};

/* LO (3, h, w) = the S x S means of HI (3, S h, S w) */
static void box_down(const double *hi, int w, int h, int S, double *lo)
{
    size_t nl = (size_t)w * h, nh = nl * S * S;
    for (int c = 0; c < 3; c++)
        for (size_t i = 0; i < nl; i++) {
            size_t x = i % (size_t)w, y = i / (size_t)w;
            double s = 0;
            for (int sy = 0; sy < S; sy++)
                for (int sx = 0; sx < S; sx++) s += hi[c * nh + (y * S + sy) * (size_t)(w * S) + x * S + sx];
            lo[c * nl + i] = s / (S * S);
        }
}

/* PHOTO (RGB, w x h) random but at least 0.02 from LO (3, h, w), so L1's sign is the same on the
   host and on the device; then V_HI (3, S h, S w): L1's gradient sign / (3 w h) spread over the
   samples (/ S^2); returns the L1 */
static double photo_and_grad(const double *lo, int w, int h, int S, cs_image *photo, double *v_hi, uint64_t *rs)
{
    size_t nl = (size_t)w * h, nh = nl * S * S;
    double l1 = 0;
    for (size_t i = 0; i < nl; i++)
        for (int c = 0; c < 3; c++) {
            double x = lo[c * nl + i], p = test_rand(rs);
            if (fabs(p - x) < 0.02) p = x < 0.5 ? x + 0.03 : x - 0.03;
            uint8_t b = (uint8_t)(p * 255 + 0.5);
            photo->px[3 * i + c] = b;
            double r = x - b / 255.0;
            l1 += fabs(r);
            double g = (r > 0 ? 1.0 : -1.0) / (3.0 * nl) / (S * S);
            size_t xx = i % (size_t)w, yy = i / (size_t)w;
            for (int sy = 0; sy < S; sy++)
                for (int sx = 0; sx < S; sx++) v_hi[c * nh + (yy * S + sy) * (size_t)(w * S) + xx * S + sx] = g;
        }
    return l1 / (3.0 * nl);
}

/* the largest |A - B| over N values against the largest |B| */
static double off_by(const double *a, const double *b, size_t n, double *bmax)
{
    double e = 0, m = 0;
    for (size_t i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i])), m = fmax(m, fabs(b[i]));
    *bmax = m;
    return e;
}

/* the colour stage at S samples a side: the loss and every colour's gradient */
static int colour_case(cs_cl *cl, const cs_mesh *m, const float *col, const cs_camera *c, int S, uint64_t *rs)
{
    int w = c->width, h = c->height;
    size_t nl = (size_t)w * h, nh = nl * S * S, nv = m->nv;
    int32_t *tri = malloc(4 * nh);
    float *wt = malloc(12 * nh), *fg = malloc(12 * nv);
    double *hi = malloc(24 * nh), *lo = malloc(24 * nl), *v = malloc(24 * nh), *g = calloc(3 * nv, 8), *dg = malloc(24 * nv);
    cs_image photo = {w, h, 3, malloc(3 * nl)};
    CHECK(tri && wt && fg && hi && lo && v && g && dg && photo.px, "out of memory");
    cs_mesh_dev d;
    CHECK_OK(cs_mesh_dev_open(&d, cl, m, nl, S, BG));
    float nanv = NAN;
    CHECK_OK(cs_buf_fill(cl, &d.lo, 0, d.lo.bytes, &nanv, 4));
    CHECK_OK(cs_buf_fill(cl, &d.v_hi, 0, d.v_hi.bytes, &nanv, 4));
    CHECK_OK(cs_mesh_dev_visibility(&d, c));
    CHECK(d.W == S * w && d.H == S * h, "drawn at %dx%d for a %dx%d photo at %d samples", d.W, d.H, w, h, S);
    CHECK_OK(cs_mesh_dev_read_visibility(&d, tri, wt));
    long covered = 0;
    for (size_t j = 0; j < nh; j++)
        for (int ch = 0; ch < 3; ch++) {
            double x = BG[ch];
            if (tri[j] >= 0) {
                const uint32_t *q = m->tri + 3 * (size_t)tri[j];
                x = wt[3 * j] * col[3 * q[0] + ch] + wt[3 * j + 1] * col[3 * q[1] + ch] + wt[3 * j + 2] * col[3 * q[2] + ch];
            }
            hi[ch * nh + j] = x;
            covered += ch == 0 && tri[j] >= 0;
        }
    box_down(hi, w, h, S, lo);
    double l1 = photo_and_grad(lo, w, h, S, &photo, v, rs);
    for (size_t j = 0; j < nh; j++)
        for (int ch = 0; tri[j] >= 0 && ch < 3; ch++)
            for (int k = 0; k < 3; k++) g[3 * m->tri[3 * (size_t)tri[j] + k] + ch] += v[ch * nh + j] * wt[3 * j + k];
    double loss = 0, dl1 = 0, gmax;
    CHECK_OK(cs_mesh_dev_color_grad(&d, &photo, 0.f, &loss, &dl1));
    CHECK_OK(cs_mesh_dev_read_colors(&d, NULL, fg));
    for (size_t i = 0; i < 3 * nv; i++) dg[i] = fg[i];
    double e = off_by(dg, g, 3 * nv, &gmax);
    printf("  %d x %d samples: %ld of %zu covered, L1 %.6f (device %.6f), colour gradients off by %.2g of %.2g\n", S, S,
           covered, nh, l1, dl1, e, gmax);
    CHECK(covered > (long)nh / 3 && fabs(dl1 - l1) < 1e-5 && fabs(loss - l1) < 1e-5,
          "%d samples: L1 %.7f on the host, %.7f on the device (loss %.7f)", S, l1, dl1, loss);
    CHECK(gmax > 0 && e <= 1e-4 * gmax, "%d samples: colour gradients off by %.3g (largest %.3g)", S, e, gmax);
    cs_mesh_dev_close(&d);
    free(tri), free(wt), free(fg), free(hi), free(lo), free(v), free(g), free(dg), free(photo.px);
    return 0;
}

/* the world positions' gradient of the geometry stage's L1 at S samples a side: the
   anti-aliased drawing at the drawing's size, boxed down, its gradient back through the
   anti-aliasing, the weights and the camera at S times its size */
static int geometry_case(cs_cl *cl, const cs_mesh *m, const float *col, const cs_camera *c, int S, uint64_t *rs)
{
    int w = c->width, h = c->height;
    size_t nl = (size_t)w * h, nh = nl * S * S, nv = m->nv;
    cs_mesh_topo tp;
    CHECK_OK(cs_mesh_topology(m, &tp));
    cs_mesh_dev d;
    CHECK_OK(cs_mesh_dev_open(&d, cl, m, nl, S, BG));
    CHECK_OK(cs_mesh_dev_geom_open(&d, m, nv));
    int32_t *tri = malloc(4 * nh);
    float *wt = malloc(12 * nh), *img = malloc(12 * nh), *depth = malloc(4 * nh), *uvz = malloc(12 * nv);
    float *f4 = malloc(16 * nv);
    double *aa = malloc(24 * nh), *lo = malloc(24 * nl), *v = malloc(24 * nh), *vin = malloc(24 * nh);
    double *g = calloc(3 * nv, 8), *gp = malloc(24 * nv), *dgp = malloc(24 * nv);
    cs_image photo = {w, h, 3, malloc(3 * nl)};
    CHECK(tri && wt && img && depth && uvz && f4 && aa && lo && v && vin && g && gp && dgp && photo.px, "out of memory");
    CHECK_OK(cs_mesh_dev_visibility(&d, c));
    CHECK_OK(cs_mesh_dev_draw_aa(&d));
    CHECK_OK(cs_mesh_dev_read_visibility(&d, tri, wt));
    CHECK_OK(cs_buf_read(cl, &d.img, 0, 12 * nh, img));
    CHECK_OK(cs_buf_read(cl, &d.depth, 0, 4 * nh, depth));
    CHECK_OK(cs_buf_read(cl, &d.uvz, 0, 16 * nv, f4));
    for (size_t i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) uvz[3 * i + k] = f4[4 * i + k];
    ref_mesh_view rv = {d.W, d.H, m->tri, tp.nbr, uvz, tri, depth};
    ref_mesh_aa_fwd(&rv, img, aa, NULL);
    box_down(aa, w, h, S, lo);
    photo_and_grad(lo, w, h, S, &photo, v, rs);
    ref_mesh_aa_bwd(&rv, img, v, vin, g);
    ref_mesh_interior_bwd(&rv, col, vin, g);
    cs_camera hc = cs_mesh_dev_camera(&d, c);
    ref_mesh_project_bwd(&hc, m, g, gp);
    const cs_buf *vb;
    CHECK_OK(cs_mesh_dev_set_photo(&d, &photo));
    CHECK_OK(cs_mesh_dev_loss(&d, &d.img_aa, 0.f, &vb));
    CHECK(vb == &d.v_hi, "%d samples: the loss's gradient is not the samples'", S);
    CHECK_OK(cs_mesh_dev_aa_backward(&d, vb));
    CHECK_OK(cs_mesh_dev_project_backward(&d, c));
    CHECK_OK(cs_buf_read(cl, &d.gp, 0, 16 * nv, f4));
    for (size_t i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) dgp[3 * i + k] = f4[4 * i + k];
    double gmax, e = off_by(dgp, gp, 3 * nv, &gmax);
    printf("  %d x %d samples: world gradients of %zu vertices off by %.2g of %.2g\n", S, S, nv, e, gmax);
    CHECK(gmax > 0 && e <= 2e-3 * gmax, "%d samples: world gradients off by %.3g (largest %.3g)", S, e, gmax);
    cs_mesh_dev_close(&d);
    cs_mesh_topo_free(&tp);
    free(tri), free(wt), free(img), free(depth), free(uvz), free(f4), free(aa), free(lo), free(v), free(vin), free(g);
    free(gp), free(dgp), free(photo.px);
    return 0;
}

int test_mesh_samples(void)
{
    uint64_t rs = test_seed() ^ 0x5a5a;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_camera c;
    ref_mesh_test_camera(&c);
    enum { NT = 200 };
    static float pos[9 * NT], col[9 * NT];
    static uint8_t rgb[9 * NT];
    static uint32_t tri[3 * NT];
    cs_mesh m;
    ref_mesh_random_mesh(&m, pos, col, rgb, tri, NT, &rs);
    for (int S = 2; S <= 3; S++) CHECK_OK(colour_case(&cl, &m, col, &c, S, &rs));
    CHECK_OK(geometry_case(&cl, &m, col, &c, 2, &rs));
    cs_mesh_dev d; /* a count outside 1-4 refused */
    CHECK(cs_mesh_dev_open(&d, &cl, &m, 100, CS_MESH_RASTER_MAX_SAMPLES + 1, BG) != 0, "%d samples accepted",
          CS_MESH_RASTER_MAX_SAMPLES + 1);
    cs_cl_close(&cl);
    return 0;
}
