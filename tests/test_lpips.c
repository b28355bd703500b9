/* test_lpips: the LPIPS kernels against the double-precision CPU reference (tests/ref_lpips.c):
 * the convolution on random shapes that cut every tile edge, and the whole metric on random
 * image pairs; then every pair of ../shared/lpips/pairs/golden.json (an independent float64
 * implementation's values) within 1e-4, with fast math off and on. The weights come from
 * $CLSPLAT_LPIPS_DIR (default ../shared/lpips). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "kernels.h"
#include "layout.h"
#include "lpips.h"
#include "ref_lpips.h"
#include "test.h"
#include "util.h"

static int open_all(cs_cl *cl, cs_kernels *k, cs_lpips *lp)
{
    cs_kernel_opts ko = {{0, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    if (test_open_cl(cl) || cs_kernels_build(cl, &ko, k)) return -1;
    return cs_lpips_load(lp, cl, k, test_lpips_weights());
}

/* one convolution of random shape (COUT not a multiple of the 64-channel block, K not of the
 * 16-deep step, positions not of the 64-wide block) against ref_conv_relu */
static int conv_case(cs_cl *cl, const cs_kernels *k, uint64_t *rs)
{
    int cin = 1 + (int)(test_rand(rs) * 20), cout = 1 + (int)(test_rand(rs) * 150), kk = 1 + 2 * (int)(test_rand(rs) * 3);
    int stride = 1 + (int)(test_rand(rs) * 3), pad = (int)(test_rand(rs) * 3), h = kk + (int)(test_rand(rs) * 40),
        w = kk + (int)(test_rand(rs) * 40);
    int ho = (h + 2 * pad - kk) / stride + 1, wo = (w + 2 * pad - kk) / stride + 1, nw = cout * cin * kk * kk;
    size_t nin = (size_t)cin * h * w, nout = (size_t)cout * ho * wo;
    float *in = malloc(sizeof(float) * nin), *wts = malloc(sizeof(float) * (nw + cout + 5)), *out = malloc(sizeof(float) * nout);
    double *din = malloc(sizeof(double) * nin), *ref = malloc(sizeof(double) * nout);
    for (size_t i = 0; i < nin; i++) din[i] = in[i] = (float)test_randn(rs);
    for (int i = 0; i < nw + cout + 5; i++) wts[i] = (float)(test_randn(rs) * 0.3);
    int w_off = 5, b_off = 5 + nw; /* offsets as the real layers have them */
    cs_buf bi = {0}, bw = {0}, bo = {0};
    float poison = NAN;
    CHECK_OK(cs_buf_alloc(cl, &bi, CS_MEM_EVAL, nin * 4, "in") || cs_buf_alloc(cl, &bw, CS_MEM_EVAL, (nw + cout + 5) * 4, "w") ||
             cs_buf_alloc(cl, &bo, CS_MEM_EVAL, nout * 4, "out") || cs_buf_write(cl, &bi, 0, nin * 4, in) ||
             cs_buf_write(cl, &bw, 0, (nw + cout + 5) * 4, wts) || cs_buf_fill(cl, &bo, 0, nout * 4, &poison, 4));
    int rh, rw;
    ref_conv_relu(din, cin, h, w, wts + w_off, wts + b_off, cout, kk, stride, pad, ref, &rh, &rw);
    for (int direct = 0; direct < 2; direct++) {
        CHECK_OK(cs_buf_fill(cl, &bo, 0, nout * 4, &poison, 4));
        CHECK_OK(cs_lpips_conv(cl, k, direct, &bi, cin, h, w, &bw, w_off, b_off, cout, kk, stride, pad, &bo, ho, wo));
        CHECK_OK(cs_buf_read(cl, &bo, 0, nout * 4, out));
        double worst = 0;
        for (size_t i = 0; i < nout; i++) worst = fmax(worst, isfinite(out[i]) ? fabs(out[i] - ref[i]) : INFINITY);
        CHECK(worst < 1e-4 * sqrt((double)cin * kk * kk), "%s conv %dx%dx%d k%d s%d p%d -> %d: max error %g",
              direct ? "direct" : "tiled", cin, h, w, kk, stride, pad, cout, worst);
    }
    cs_buf_free(cl, &bi), cs_buf_free(cl, &bw), cs_buf_free(cl, &bo);
    free(in), free(wts), free(out), free(din), free(ref);
    return 0;
}

/* LPIPS of two 8-bit images on the device */
static int device_lpips(cs_lpips *lp, const uint8_t *a, const uint8_t *b, int w, int h, double *out)
{
    cs_buf ba = {0}, bb = {0};
    size_t n = (size_t)w * h * 3;
    int rc = cs_buf_alloc(lp->cl, &ba, CS_MEM_EVAL, n, "a") || cs_buf_alloc(lp->cl, &bb, CS_MEM_EVAL, n, "b") ||
             cs_buf_write(lp->cl, &ba, 0, n, a) || cs_buf_write(lp->cl, &bb, 0, n, b) ||
             cs_lpips_u8(lp, &ba, 0, &bb, 0, w, h, out);
    cs_buf_free(lp->cl, &ba), cs_buf_free(lp->cl, &bb);
    return rc ? -1 : 0;
}

int test_lpips_reference(void)
{
    uint64_t rs = test_seed() ^ 0x1b1b5;
    cs_cl cl;
    cs_kernels k;
    cs_lpips lp;
    CHECK(open_all(&cl, &k, &lp) == 0, "%s (LPIPS weights from $CLSPLAT_LPIPS_DIR, default ../shared/lpips)",
          cs_last_error());
    int small = test_small(); /* oclgrind: 3 convolutions and one pair of 31..40 pixels a side */
    for (int i = 0; i < (small ? 3 : 10); i++)
        if (conv_case(&cl, &k, &rs)) return 1;
    /* the smallest input every pooling layer takes: 31 (as the reference refuses smaller) */
    CHECK(cs_lpips_fits(31, 31) && !cs_lpips_fits(30, 40) && !cs_lpips_fits(40, 30) && cs_lpips_fits(97, 71),
          "cs_lpips_fits");
    CHECK(cs_lpips_begin(&lp, 30, 40) == -1 && strstr(cs_last_error(), "31x31"), "30x40: %s", cs_last_error());
    /* random pairs: one noisy copy of a smooth image, sizes not multiples of anything */
    for (int t = 0; t < (small ? 1 : 2); t++) {
        int w = small ? 31 + (int)(test_rand(&rs) * 10) : 40 + (int)(test_rand(&rs) * 30);
        int h = small ? 31 + (int)(test_rand(&rs) * 10) : 36 + (int)(test_rand(&rs) * 30);
        uint8_t *a = malloc((size_t)w * h * 3), *b = malloc((size_t)w * h * 3);
        double fx = 0.05 + 0.2 * test_rand(&rs), fy = 0.05 + 0.2 * test_rand(&rs);
        for (int i = 0; i < w * h * 3; i++) {
            int x = (i / 3) % w, y = (i / 3) / w;
            double v = 127.5 + 120 * sin(fx * x + i % 3) * cos(fy * y);
            a[i] = (uint8_t)v;
            b[i] = (uint8_t)fmin(255, fmax(0, v + 40 * test_randn(&rs)));
        }
        double dev, ref = ref_lpips(lp.host, a, b, w, h), from_float;
        CHECK_OK(device_lpips(&lp, a, b, w, h, &dev));
        /* A as a planar float render (the evaluation's input) gives the same value */
        float *fa = malloc(sizeof(float) * 3 * w * h);
        for (int i = 0; i < w * h; i++)
            for (int c = 0; c < 3; c++) fa[c * w * h + i] = a[i * 3 + c] / 255.f;
        cs_buf bf = {0}, bb = {0};
        CHECK_OK(cs_buf_alloc(&cl, &bf, CS_MEM_EVAL, sizeof(float) * 3 * w * h, "render") ||
                 cs_buf_alloc(&cl, &bb, CS_MEM_EVAL, (size_t)3 * w * h, "b") ||
                 cs_buf_write(&cl, &bf, 0, sizeof(float) * 3 * w * h, fa) ||
                 cs_buf_write(&cl, &bb, 0, (size_t)3 * w * h, b) || cs_lpips_render(&lp, &bf, &bb, 0, w, h, &from_float));
        CHECK(fabs(from_float - dev) < 1e-6, "float render input %.7f, 8-bit %.7f", from_float, dev);
        /* masked ground truth (RGB and a weight, 0 over a random block): the render counts as
           the ground truth there, as if the pair were A with that block copied from B */
        uint8_t *b4 = malloc((size_t)w * h * 4), *blend = malloc((size_t)w * h * 3);
        int x0 = (int)(test_rand(&rs) * w / 2), y0 = (int)(test_rand(&rs) * h / 2);
        for (int i = 0; i < w * h; i++) {
            int in = i % w >= x0 && i % w < x0 + w / 3 && i / w >= y0 && i / w < y0 + h / 3;
            for (int c = 0; c < 3; c++) b4[i * 4 + c] = b[i * 3 + c], blend[i * 3 + c] = in ? b[i * 3 + c] : a[i * 3 + c];
            b4[i * 4 + 3] = in ? 0 : 255;
        }
        double masked, masked_ref = ref_lpips(lp.host, blend, b, w, h);
        cs_buf b4b = {0};
        lp.gt_channels = 4;
        CHECK_OK(cs_buf_alloc(&cl, &b4b, CS_MEM_EVAL, (size_t)4 * w * h, "b4") ||
                 cs_buf_write(&cl, &b4b, 0, (size_t)4 * w * h, b4) || cs_lpips_render(&lp, &bf, &b4b, 0, w, h, &masked));
        lp.gt_channels = 3;
        cs_buf_free(&cl, &b4b), cs_buf_free(&cl, &bf), cs_buf_free(&cl, &bb);
        free(fa), free(b4), free(blend);
        CHECK(fabs(masked - masked_ref) < 1e-5 && masked < dev, "masked block: device %.7f, reference %.7f (unmasked %.7f)",
              masked, masked_ref, dev);
        free(a), free(b);
        CHECK(fabs(dev - ref) < 1e-5 && ref > 0.01, "%dx%d pair: device %.7f, reference %.7f", w, h, dev, ref);
        printf("  %dx%d random pair: LPIPS %.6f (reference %.6f)\n", w, h, dev, ref);
    }
    /* accounted and released: nothing of the metric is left after cs_lpips_end */
    CHECK(cl.mem.cur[CS_MEM_EVAL] > 0, "LPIPS memory not accounted in the eval category");
    cs_lpips_end(&lp);
    CHECK(cl.mem.cur[CS_MEM_EVAL] == 0, "%zu bytes left after cs_lpips_end", cl.mem.cur[CS_MEM_EVAL]);
    cs_lpips_free(&lp);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}

/* every golden pair whose images are present; FAST_MATH builds the program with fast math */
static int golden(int fast_math)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/pairs/golden.json", test_lpips_dir());
    json_error_t err;
    json_t *g = json_load_file(p, 0, &err);
    CHECK(g != NULL, "%s: %s", p, err.text);
    if (fast_math) setenv("CLSPLAT_FAST_MATH", "1", 1);
    cs_cl cl;
    cs_kernels k;
    cs_lpips lp;
    int o = open_all(&cl, &k, &lp);
    unsetenv("CLSPLAT_FAST_MATH");
    CHECK(o == 0, "%s", cs_last_error());
    CHECK(!fast_math || cl.fast_math, "fast math was not switched on");
    const char *name;
    json_t *pair;
    int checked = 0, missing = 0;
    json_object_foreach(g, name, pair) {
        cs_image a, b;
        char pa[1300], pb[1300];
        snprintf(pa, sizeof pa, "%s/pairs/%s", test_lpips_dir(), json_string_value(json_object_get(pair, "a")));
        snprintf(pb, sizeof pb, "%s/pairs/%s", test_lpips_dir(), json_string_value(json_object_get(pair, "b")));
        if (!cs_file_exists(pa) || !cs_file_exists(pb)) {
            printf("  %s: images not in %s/pairs (listed in golden.json only)\n", name, test_lpips_dir());
            missing++;
            continue;
        }
        CHECK_OK(cs_image_load(pa, &a));
        CHECK_OK(cs_image_load(pb, &b));
        CHECK(a.channels == 3 && b.channels == 3 && a.width == b.width && a.height == b.height, "%s: shapes", name);
        double v, want = json_real_value(json_object_get(pair, "lpips_alex_v0.1"));
        CHECK_OK(device_lpips(&lp, a.px, b.px, a.width, a.height, &v));
        printf("  %s %dx%d%s: %.6f (golden %.6f, diff %.1e)\n", name, a.width, a.height, fast_math ? " fast math" : "",
               v, want, fabs(v - want));
        CHECK(fabs(v - want) <= 1e-4, "%s: LPIPS %.7f, golden %.7f", name, v, want);
        cs_image_free(&a), cs_image_free(&b);
        checked++;
    }
    json_decref(g);
    cs_lpips_free(&lp);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    CHECK(checked >= 4, "only %d golden pairs found (%d missing)", checked, missing);
    return 0;
}

/* with fast math off and on, each with the other convolution kernel than the device's own */
int test_lpips_golden(void)
{
    int r = golden(0);
    setenv("CLSPLAT_LPIPS_CONV", "tiled", 1); /* the GPU kernel, here on the CPU */
    r = r || golden(1);
    unsetenv("CLSPLAT_LPIPS_CONV");
    return r;
}

/* tools/lpips_weights.py on torch files written by hand in both formats from ../shared/lpips's
 * tensors (tests/lpips/check_converter.py): the exact weights file, and refusals */
int test_lpips_converter(void)
{
    char cmd[3000], log[700];
    snprintf(log, sizeof log, "%s/converter.log", test_tmpdir());
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 tests/lpips/check_converter.py %s %s/converter > %s 2>&1",
             test_lpips_dir(), test_tmpdir(), log);
    int st = system(cmd);
    char *text = cs_read_file(log, NULL);
    if (text) fputs(text, stdout);
    free(text);
    CHECK(st == 0, "converter check failed, see %s", log);
    return 0;
}
