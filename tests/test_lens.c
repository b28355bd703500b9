/* lens: every COLMAP model clsplat undistorts: distortion inverted by Newton to 1e-9 (0.01 px in
 * the terms, far below it here), and the ideal pinhole's crop valid / full. Coefficients
 * are typical values scaled by a fresh random factor each run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

#include "lens.h"
#include "test.h"
#include "util.h"

typedef struct {
    cs_lens_model model;
    double p[CS_LENS_MAX_PARAMS];
} lens_case;

static const lens_case CASES[] = {
    {CS_LENS_SIMPLE_RADIAL, {500, 320, 240, -0.12}},
    {CS_LENS_RADIAL, {500, 320, 240, -0.2, 0.05}},
    {CS_LENS_OPENCV, {510, 490, 318, 243, -0.25, 0.07, 1e-3, -5e-4}},
    {CS_LENS_FULL_OPENCV, {510, 490, 318, 243, -0.25, 0.07, 1e-3, -5e-4, 0.01, 0.02, -0.01, 0.004}},
    {CS_LENS_OPENCV_FISHEYE, {300, 300, 320, 240, 0.05, -0.01, 0.002, -0.0005}},
    {CS_LENS_SIMPLE_RADIAL_FISHEYE, {300, 320, 240, 0.03}},
    {CS_LENS_RADIAL_FISHEYE, {300, 320, 240, 0.03, -0.005}},
    {CS_LENS_OPENCV, {500, 500, 320, 240, 0.15, 0.02, 0, 0}}, /* pincushion */
};

/* the pixel the lens puts the ideal normalised point (u, v) at */
static void to_pixel(const cs_lens *l, double u, double v, double *x, double *y)
{
    double ud, vd;
    cs_lens_distort(l, u, v, &ud, &vd);
    *x = ud * l->fx + l->cx, *y = vd * l->fy + l->cy;
}

/* Case C's lens for a photo 640/SHRINK wide, its coefficients scaled by a fresh factor in [0.5, 1.5). */
static cs_lens case_lens(size_t c, double shrink, uint64_t *rng)
{
    cs_lens l;
    cs_lens_from_params(&l, CASES[c].model, CASES[c].p);
    l.fx /= shrink, l.fy /= shrink, l.cx /= shrink, l.cy /= shrink;
    double f = 0.5 + test_rand(rng);
    for (int i = 0; i < CS_LENS_MAX_PARAMS; i++) l.k[i] *= f;
    return l;
}

int test_lens_models(void)
{
    uint64_t rng = test_seed() ^ 0x1e45;
    const int W = 640, H = 480;
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        cs_lens l = case_lens(c, 1, &rng); /* fresh coefficients each run */
        const char *name = cs_lens_model_name(l.model);
        CHECK(cs_lens_supported(l.model) && !cs_lens_is_pinhole(&l), "%s", name);
        double fx, fy, cx, cy;
        int w, h;
        CHECK(cs_lens_ideal(&l, W, H, 0, &fx, &fy, &cx, &cy, &w, &h) == 0, "%s: %s", name, cs_last_error());
        CHECK(cx == w / 2.0 && cy == h / 2.0 && w > W / 3 && h > H / 3 && fx == l.fx && fy == l.fy, "%s: ideal %dx%d c %g %g", name, w, h, cx, cy);
        /* every ideal pixel of the valid crop comes from inside the photo; a slightly larger crop does not */
        int outside_bigger = 0;
        for (int i = 0; i <= 200; i++) {
            double t = i / 200.0, xs[4] = {0, (double)w, t * w, t * w}, ys[4] = {t * h, t * h, 0, (double)h};
            for (int e = 0; e < 4; e++) {
                double x, y, u = (xs[e] - cx) / fx, v = (ys[e] - cy) / fy;
                to_pixel(&l, u, v, &x, &y);
                CHECK(x >= -1e-6 && x <= W + 1e-6 && y >= -1e-6 && y <= H + 1e-6, "%s: ideal border (%g %g) from (%g %g)", name, xs[e], ys[e], x, y);
                to_pixel(&l, u * 1.02, v * 1.02, &x, &y);
                outside_bigger |= x < 0 || x > W || y < 0 || y > H;
            }
        }
        CHECK(outside_bigger, "%s: the valid crop %dx%d is not the largest", name, w, h);
        /* round trips at random photo pixels: Newton's ideal point distorts back to the pixel */
        for (int i = 0; i < 2000; i++) {
            double x0 = W * test_rand(&rng), y0 = H * test_rand(&rng), u, v, x, y;
            CHECK(cs_lens_undistort(&l, (x0 - l.cx) / l.fx, (y0 - l.cy) / l.fy, &u, &v) == 0, "%s: pixel (%g %g) did not invert", name, x0, y0);
            to_pixel(&l, u, v, &x, &y);
            CHECK(fabs(x - x0) < 1e-6 && fabs(y - y0) < 1e-6, "%s: (%g %g) round trip to (%g %g)", name, x0, y0, x, y);
        }
        /* the full crop holds the whole photo */
        int wf, hf;
        CHECK(cs_lens_ideal(&l, W, H, 1, &fx, &fy, &cx, &cy, &wf, &hf) == 0, "%s full: %s", name, cs_last_error());
        CHECK(wf >= w && hf >= h, "%s: full %dx%d smaller than valid %dx%d", name, wf, hf, w, h);
        for (int i = 0; i <= 100; i++) {
            double t = i / 100.0, xs[4] = {0, W, t * W, t * W}, ys[4] = {t * H, t * H, 0, H}, u, v;
            for (int e = 0; e < 4; e++) {
                CHECK_OK(cs_lens_undistort(&l, (xs[e] - l.cx) / l.fx, (ys[e] - l.cy) / l.fy, &u, &v));
                double xi = u * fx + cx, yi = v * fy + cy;
                CHECK(xi >= -1 && xi <= wf + 1 && yi >= -1 && yi <= hf + 1, "%s full: photo border lands at (%g %g) of %dx%d", name, xi, yi, wf, hf);
            }
        }
        printf("  %-22s valid %dx%d, full %dx%d of %dx%d\n", name, w, h, wf, hf, W, H);
    }
    /* a pinhole: no distortion, the same size back */
    cs_lens l;
    double pp[4] = {400, 410, 320, 240};
    cs_lens_from_params(&l, CS_LENS_PINHOLE, pp);
    double fx, fy, cx, cy, ud, vd;
    int w, h;
    CHECK(cs_lens_is_pinhole(&l), "PINHOLE has distortion");
    cs_lens_distort(&l, 0.3, -0.2, &ud, &vd);
    CHECK(ud == 0.3 && vd == -0.2, "PINHOLE distorts");
    CHECK_OK(cs_lens_ideal(&l, 640, 480, 0, &fx, &fy, &cx, &cy, &w, &h));
    CHECK(w == 640 && h == 480 && cx == 320 && cy == 240, "pinhole ideal %dx%d", w, h);
    /* names and parameter counts as COLMAP numbers them */
    CHECK(cs_lens_model_by_name("OPENCV_FISHEYE") == 5 && cs_lens_model_params(CS_LENS_FULL_OPENCV) == 12 &&
          !cs_lens_supported(CS_LENS_FOV) && cs_lens_model_by_name("NOPE") == -1, "model table");
    return 0;
}

/* The undistortion map against a direct double evaluation (round trip < 0.01 px), and the
 * bilinear remap: exact on a pinhole of the same size, linear images reproduced, outside marked. */
int test_lens_map_and_remap(void)
{
    uint64_t rng = test_seed() ^ 0x3a9;
    const int W = 160, H = 120;
    {   /* #33 item 12: a fisheye whose field of view a pinhole cannot hold is refused in full, not
           grown without bound (64x48 photos became 12016x9012 views) */
        cs_lens fe = {0};
        fe.model = (cs_lens_model)cs_lens_model_by_name("OPENCV_FISHEYE");
        fe.fx = fe.fy = 27, fe.cx = 32, fe.cy = 24; /* 86 degrees to the corners */
        double fx, fy, cx, cy;
        int w, h;
        CHECK(cs_lens_ideal(&fe, 64, 48, 1, &fx, &fy, &cx, &cy, &w, &h) == -1 &&
                  strstr(cs_last_error(), "use undistort_crop valid"),
              "a 172-degree fisheye in full: %dx%d, %s", w, h, cs_last_error());
    }
    for (size_t c = 0; c < sizeof CASES / sizeof CASES[0]; c++) {
        cs_lens l = case_lens(c, 4, &rng); /* the cases are for 640x480 */
        double fx, fy, cx, cy;
        int w, h;
        CHECK_OK(cs_lens_ideal(&l, W, H, 1, &fx, &fy, &cx, &cy, &w, &h));
        float *map = malloc(sizeof(float) * 2 * w * h);
        cs_lens_map(&l, fx, fy, cx, cy, w, h, map);
        double worst = 0;
        for (int s = 0; s < 500; s++) {
            int i = (int)(w * test_rand(&rng)), j = (int)(h * test_rand(&rng));
            float *m = map + ((size_t)j * w + i) * 2;
            if (m[0] < 0 || m[0] > W || m[1] < 0 || m[1] > H) continue;
            double u, v;
            CHECK(cs_lens_undistort(&l, (m[0] - l.cx) / l.fx, (m[1] - l.cy) / l.fy, &u, &v) == 0, "%s: map point did not invert",
                  cs_lens_model_name(l.model));
            double d = hypot(u * fx + cx - (i + 0.5), v * fy + cy - (j + 0.5));
            worst = d > worst ? d : worst;
        }
        free(map);
        CHECK(worst < 0.01, "%s: map round trip off by %g px", cs_lens_model_name(l.model), worst);
    }
    /* a linear image I = 40 + 0.8 x + 0.5 y (x, y the pixel centres) sampled anywhere inside */
    cs_image src = {W, H, 3, malloc((size_t)W * H * 3)};
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            for (int c = 0; c < 3; c++) src.px[((size_t)y * W + x) * 3 + c] = (uint8_t)lround(40 + 0.8 * (x + 0.5) + 0.5 * (y + 0.5) + c);
    const int w = 50, h = 40;
    float *map = malloc(sizeof(float) * 2 * w * h);
    for (int p = 0; p < w * h; p++) map[p * 2] = (float)(1 + (W - 2) * test_rand(&rng)), map[p * 2 + 1] = (float)(1 + (H - 2) * test_rand(&rng));
    map[0] = -1, map[1] = 5; /* outside */
    cs_image out;
    unsigned char valid[50 * 40];
    CHECK_OK(cs_image_remap(&src, map, w, h, &out, valid));
    CHECK(!valid[0] && out.px[0] == 0 && out.px[1] == 0, "an outside point sampled");
    for (int p = 1; p < w * h; p++) {
        double want = 40 + 0.8 * map[p * 2] + 0.5 * map[p * 2 + 1];
        CHECK(valid[p] && fabs(out.px[p * 3] - want) <= 1.01, "pixel %d: %d for %g at (%g %g)", p, out.px[p * 3], want, map[p * 2], map[p * 2 + 1]);
    }
    cs_image_free(&out);
    free(map);
    /* a pinhole of the same size: the identity */
    cs_lens l;
    double pp[4] = {100, 100, W / 2.0, H / 2.0}, fx, fy, cx, cy;
    int w2, h2;
    cs_lens_from_params(&l, CS_LENS_PINHOLE, pp);
    CHECK_OK(cs_lens_ideal(&l, W, H, 0, &fx, &fy, &cx, &cy, &w2, &h2));
    map = malloc(sizeof(float) * 2 * w2 * h2);
    cs_lens_map(&l, fx, fy, cx, cy, w2, h2, map);
    CHECK_OK(cs_image_remap(&src, map, w2, h2, &out, NULL));
    CHECK(w2 == W && h2 == H && !memcmp(out.px, src.px, (size_t)W * H * 3), "pinhole remap is not the identity");
    cs_image_free(&out);
    free(map);
    cs_image_free(&src);
    return 0;
}
