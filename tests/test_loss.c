/* test_loss: the L1 + D-SSIM loss kernels against a double CPU reference (value), and their
 * image gradient against central finite differences of that reference, for RGB ground truth
 * and for ground truth with a weight channel (masks). */
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "test.h"
#include "util.h"

#define SSIM_C1 0.0001
#define SSIM_C2 0.0009

/* A (3, H, W) render X against 8-bit ground truth GT of CH channels (4: the last is a weight m
   that blends the render towards GT, as ssim.cl). */
typedef struct {
    const double *x;
    const uint8_t *gt;
    int ch, W, H;
    double g[11]; /* the normalised Gaussian window, sigma 1.5 */
} ref_pair;

static ref_pair ref_pair_of(const double *x, const uint8_t *gt, int ch, int W, int H)
{
    ref_pair r = {x, gt, ch, W, H, {0}};
    double gs = 0;
    for (int i = 0; i < 11; i++) gs += r.g[i] = exp(-(i - 5) * (i - 5) / 4.5);
    for (int i = 0; i < 11; i++) r.g[i] /= gs;
    return r;
}
/* pixel P's weight, ground truth of channel C, and the render blended by the weight */
static double ref_wt(const ref_pair *r, size_t p) { return r->ch == 4 ? r->gt[p * 4 + 3] / 255.0 : 1.0; }
static double ref_gt(const ref_pair *r, size_t p, int c) { return r->gt[p * r->ch + c] / 255.0; }
static double ref_xb(const ref_pair *r, size_t p, int c)
{
    return ref_gt(r, p, c) + ref_wt(r, p) * (r->x[(size_t)c * r->W * r->H + p] - ref_gt(r, p, c));
}
/* The window's moments at pixel (X, Y) of channel C: E[a], E[b], E[a^2], E[b^2], E[ab] (zero
   padding) */
static void ref_moments(const ref_pair *r, int c, int x, int y, double m[5])
{
    for (int q = 0; q < 5; q++) m[q] = 0;
    for (int dy = -5; dy <= 5; dy++)
        for (int dx = -5; dx <= 5; dx++) {
            int py = y + dy, px = x + dx;
            if (py < 0 || py >= r->H || px < 0 || px >= r->W) continue;
            double w = r->g[dy + 5] * r->g[dx + 5];
            size_t p = (size_t)py * r->W + px;
            double a = ref_xb(r, p, c), b = ref_gt(r, p, c);
            m[0] += w * a, m[1] += w * b, m[2] += w * a * a, m[3] += w * b * b, m[4] += w * a * b;
        }
}

/* Sums over the pair: weighted L1, weighted SSIM, the weights, and the squared error of the
   render clamped to [0, 1] (weighted). */
typedef struct {
    double l1, ssim, weight, sq;
} ref_sums;

static ref_sums ref_loss_sums(const double *x, const uint8_t *gt, int ch, int W, int H)
{
    ref_pair rp = ref_pair_of(x, gt, ch, W, H);
    ref_sums r = {0, 0, 0, 0};
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < H; y++)
            for (int xx = 0; xx < W; xx++) {
                double m[5];
                ref_moments(&rp, c, xx, y, m);
                double s11 = m[2] - m[0] * m[0], s22 = m[3] - m[1] * m[1], s12 = m[4] - m[0] * m[1];
                size_t p = (size_t)y * W + xx;
                double wt = ref_wt(&rp, p), d = ref_xb(&rp, p, c) - ref_gt(&rp, p, c);
                r.ssim += wt * (2 * m[0] * m[1] + SSIM_C1) * (2 * s12 + SSIM_C2) /
                          ((m[0] * m[0] + m[1] * m[1] + SSIM_C1) * (s11 + s22 + SSIM_C2));
                r.l1 += fabs(d);
                double a = x[(size_t)c * W * H + p];
                a = a < 0 ? 0 : a > 1 ? 1 : a;
                double dc = ref_gt(&rp, p, c) + wt * (a - ref_gt(&rp, p, c)) - ref_gt(&rp, p, c);
                r.sq += dc * dc;
                r.weight += wt;
            }
    return r;
}

/* The training loss the kernels differentiate: a mean over all 3 H W values, masked ones 0. */
static double ref_train_loss(const double *x, const uint8_t *gt, int ch, int W, int H, double lambda)
{
    ref_sums r = ref_loss_sums(x, gt, ch, W, H);
    double n = 3.0 * W * H;
    return (1 - lambda) * r.l1 / n - lambda * r.ssim / n;
}

/* The gradient of ref_train_loss for every value of X, analytic in double (the same chain as
   ssim.cl, summed directly over the 11x11 window): for the finite differences to vouch for, and
   to compare every pixel with (a window tap lost at a work-group's edge moves a few pixels by
   1e-4 of their gradient, where 60 sampled differences cannot see it). */
static void ref_train_grad(const double *x, const uint8_t *gt, int ch, int W, int H, double lambda, double *out)
{
    ref_pair rp = ref_pair_of(x, gt, ch, W, H);
    double n = 3.0 * W * H;
    size_t np = (size_t)W * H;
    double *d = malloc(sizeof(double) * 3 * np); /* dS/dmu1, dS/dE[a^2], dS/dE[ab], scaled */
    for (int c = 0; c < 3; c++) {
        for (int y = 0; y < H; y++)
            for (int xx = 0; xx < W; xx++) {
                double m[5];
                ref_moments(&rp, c, xx, y, m);
                double A1 = 2 * m[0] * m[1] + SSIM_C1, A2 = 2 * (m[4] - m[0] * m[1]) + SSIM_C2;
                double B1 = m[0] * m[0] + m[1] * m[1] + SSIM_C1, B2 = m[2] - m[0] * m[0] + m[3] - m[1] * m[1] + SSIM_C2;
                size_t p = (size_t)y * W + xx;
                double S = A1 * A2 / (B1 * B2), k = -lambda / n * ref_wt(&rp, p);
                d[p] = k * ((2 * m[1] * A2 - 2 * m[1] * A1) / (B1 * B2) - S * (2 * m[0] / B1 - 2 * m[0] / B2));
                d[np + p] = k * (-S / B2);
                d[2 * np + p] = k * (2 * A1 / (B1 * B2));
            }
        for (int y = 0; y < H; y++)
            for (int xx = 0; xx < W; xx++) {
                double s[3] = {0, 0, 0};
                for (int dy = -5; dy <= 5; dy++)
                    for (int dx = -5; dx <= 5; dx++) {
                        int py = y + dy, px = xx + dx;
                        if (py < 0 || py >= H || px < 0 || px >= W) continue;
                        for (int q = 0; q < 3; q++) s[q] += rp.g[dy + 5] * rp.g[dx + 5] * d[q * np + (size_t)py * W + px];
                    }
                size_t p = (size_t)y * W + xx;
                double a = ref_xb(&rp, p, c), b = ref_gt(&rp, p, c), sgn = a > b ? 1 : a < b ? -1 : 0;
                out[(size_t)c * np + p] = ref_wt(&rp, p) * (s[0] + 2 * a * s[1] + b * s[2] + (1 - lambda) / n * sgn);
            }
    }
    free(d);
}

/* The loss, gradient and metrics of one random image pair with CH ground-truth channels. */
static int check_loss(cs_cl *cl, const cs_kernels *k, int ch, uint64_t *rs)
{
    int W = 37, H = 23;
    size_t n = (size_t)3 * W * H, np = (size_t)W * H;
    double *x = malloc(sizeof(double) * n);
    float *xf = malloc(sizeof(float) * n), *grad = malloc(sizeof(float) * n);
    uint8_t *gt = malloc(np * ch);
    for (size_t i = 0; i < np * ch; i++) gt[i] = (uint8_t)(test_rand(rs) * 256);
    if (ch == 4) /* weights: a masked block, a few partial weights, the rest 1 */
        for (size_t p = 0; p < np; p++) {
            int px = (int)(p % W), py = (int)(p / W);
            gt[p * 4 + 3] = px > 8 && px < 20 && py > 4 && py < 15 ? 0 : test_rand(rs) < 0.1 ? gt[p * 4 + 3] : 255;
        }
    for (size_t i = 0; i < n; i++) x[i] = xf[i] = (float)(0.5 + 0.3 * test_randn(rs)); /* some outside [0, 1] */
    /* a renderer holding just the image */
    cs_renderer r;
    cs_renderer_init(&r, cl, k, 0.1f);
    cs_buf gtb;
    CHECK_OK(cs_buf_alloc(cl, &r.img, CS_MEM_SCRATCH, n * 4, "img"));
    CHECK_OK(cs_buf_write(cl, &r.img, 0, n * 4, xf));
    CHECK_OK(cs_buf_alloc(cl, &gtb, CS_MEM_IMAGES, np * ch + 16, "gt"));
    uint8_t junk = 0xab; /* the bytes before the image: an offset error reads these */
    CHECK_OK(cs_buf_fill(cl, &gtb, 0, np * ch + 16, &junk, 1));
    CHECK_OK(cs_buf_write(cl, &gtb, 16, np * ch, gt));
    cs_loss l;
    cs_loss_init(&l, cl, k);
    l.gt_channels = ch;
    double lambda = 0.2, loss;
    cs_metrics mt;
    CHECK_OK(cs_loss_forward_backward(&l, &r.img, &gtb, 16, W, H, (float)lambda, 3));
    CHECK_OK(cs_loss_read(&l, 3, (float)lambda, &mt, &loss));
    CHECK_OK(cs_buf_read(cl, &l.v_img, 0, n * 4, grad));
    ref_sums rf = ref_loss_sums(x, gt, ch, W, H);
    double ref = (1 - lambda) * rf.l1 / rf.weight + lambda * (1 - rf.ssim / rf.weight);
    CHECK(fabs(loss - ref) < 1e-5 && fabs(mt.ssim - rf.ssim / rf.weight) < 1e-5,
          "%d channels: loss %.8f vs %.8f, ssim %.8f vs %.8f", ch, loss, ref, mt.ssim, rf.ssim / rf.weight);
    double se = 0, sr = 0, fe = 0, *full = malloc(sizeof(double) * n);
    ref_train_grad(x, gt, ch, W, H, lambda, full);
    int masked_nonzero = 0;
    for (int t = 0; t < 60; t++) {
        size_t i = (size_t)(test_rand(rs) * n), p = i % np;
        double x0 = x[i], h = 1e-4;
        if (fabs(x0 - gt[p * ch + i / np] / 255.0) < 2 * h) continue; /* L1 kink */
        x[i] = x0 + h;
        double lp = ref_train_loss(x, gt, ch, W, H, lambda);
        x[i] = x0 - h;
        double lm = ref_train_loss(x, gt, ch, W, H, lambda);
        x[i] = x0;
        double fd = (lp - lm) / (2 * h);
        se += fabs(grad[i] - fd), sr += fabs(fd);
        fe += fabs(full[i] - fd);
    }
    /* every value against the analytic reference (which the differences check too) */
    double gmax = 0, worst = 0;
    size_t wi = 0;
    for (size_t i = 0; i < n; i++) gmax = fmax(gmax, fabs(full[i]));
    for (size_t i = 0; i < n; i++)
        if (fabs(grad[i] - full[i]) > worst) worst = fabs(grad[i] - full[i]), wi = i;
    CHECK(fe / sr < 2e-3, "%d channels: the reference gradient: relative error of sums %.3g", ch, fe / sr);
    CHECK(worst < 1e-5 * gmax, "%d channels: image gradient at channel %d pixel (%d, %d): %.9g vs %.9g (largest %.3g)", ch,
          (int)(wi / np), (int)(wi % np % W), (int)(wi % np / W), grad[wi], full[wi], gmax);
    for (size_t i = 0; ch == 4 && i < n; i++) masked_nonzero += gt[(i % np) * 4 + 3] == 0 && grad[i] != 0;
    CHECK(se / sr < 2e-3, "%d channels: image gradient: relative error of sums %.3g", ch, se / sr);
    CHECK(masked_nonzero == 0, "%d values of masked pixels have a gradient", masked_nonzero);
    /* a training step whose loss nobody reads (slot -1): the same gradient, no sums written */
    float *again = malloc(sizeof(float) * n), poison = NAN, sums_before[4], sums_after[4];
    CHECK_OK(cs_buf_read(cl, &l.sums, 3 * 16, 16, sums_before));
    CHECK_OK(cs_buf_fill(cl, &l.v_img, 0, n * 4, &poison, 4));
    CHECK_OK(cs_buf_fill(cl, &l.sums, 3 * 16, 16, &poison, 4));
    CHECK_OK(cs_loss_forward_backward(&l, &r.img, &gtb, 16, W, H, (float)lambda, -1));
    CHECK_OK(cs_buf_read(cl, &l.v_img, 0, n * 4, again));
    CHECK_OK(cs_buf_read(cl, &l.sums, 3 * 16, 16, sums_after));
    CHECK(memcmp(again, grad, n * 4) == 0, "%d channels: the gradient without sums differs from the one with them", ch);
    CHECK(isnan(sums_after[0]) && !isnan(sums_before[0]), "%d channels: slot -1 wrote the sums (%g)", ch,
          sums_after[0]);
    free(again);
    /* metrics clamp to [0, 1] like graphdeco's evaluation */
    CHECK_OK(cs_loss_metrics(&l, &r.img, &gtb, 16, W, H, 4));
    CHECK_OK(cs_loss_read(&l, 4, 0.f, &mt, NULL));
    CHECK(fabs(mt.mse - rf.sq / rf.weight) < 1e-6, "%d channels: mse %.8f vs %.8f", ch, mt.mse, rf.sq / rf.weight);
    cs_buf_free(cl, &gtb);
    cs_renderer_free(&r);
    cs_buf_free(cl, &r.img);
    cs_loss_free(&l);
    free(x), free(xf), free(grad), free(gt), free(full);
    return 0;
}

int test_ssim_loss(void)
{
    uint64_t rs = test_seed() ^ 0x55;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_kernels k;
    cs_kernel_opts ko = {{0, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    CHECK_OK(cs_kernels_build(&cl, &ko, &k));
    CHECK_OK(check_loss(&cl, &k, 3, &rs));
    CHECK_OK(check_loss(&cl, &k, 4, &rs));
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}

/* The resolution schedule's ground truth: gt_downsample against a CPU box average (rounded to
 * nearest) for odd sizes, 3 and 4 channels, factors 2 to 5, read from a non-zero offset, the
 * output poisoned first; and the scaled view's intrinsics. */
int test_gt_downsample(void)
{
    uint64_t rs = test_seed() ^ 0xd0a5;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_kernels k;
    cs_kernel_opts ko = {{0, 0, 0, 0}, 0, 0, 0, 0, CS_PROGS(loss), 0};
    CHECK_OK(cs_kernels_build(&cl, &ko, &k));
    cs_loss l;
    cs_loss_init(&l, &cl, &k);
    int checked = 0;
    for (int ch = 3; ch <= 4; ch++)
        for (int f = 2; f <= 5; f++) {
            int W = 37 + (int)(test_rand(&rs) * 40), H = 23 + (int)(test_rand(&rs) * 30), w2 = W / f, h2 = H / f;
            unsigned off = 7 * (unsigned)ch;
            size_t n = off + (size_t)W * H * ch;
            uint8_t *img = malloc(n), *got = malloc((size_t)w2 * h2 * ch);
            for (size_t i = 0; i < n; i++) img[i] = (uint8_t)(test_rand(&rs) * 256);
            cs_buf src = {0}, *out;
            CHECK_OK(cs_buf_alloc(&cl, &src, CS_MEM_IMAGES, n, "test image"));
            CHECK_OK(cs_buf_write(&cl, &src, 0, n, img));
            l.gt_channels = ch;
            uint8_t poison = 0xa5;
            CHECK_OK(cs_buf_reserve(&cl, &l.gt_small, (size_t)w2 * h2 * ch, 0, "test scaled gt"));
            CHECK_OK(cs_buf_fill(&cl, &l.gt_small, 0, (size_t)w2 * h2 * ch, &poison, 1));
            CHECK_OK(cs_loss_gt_scaled(&l, &src, off, W, H, f, &out));
            CHECK_OK(cs_buf_read(&cl, out, 0, (size_t)w2 * h2 * ch, got));
            for (int y = 0; y < h2; y++)
                for (int x = 0; x < w2; x++)
                    for (int c = 0; c < ch; c++) {
                        unsigned sum = 0;
                        for (int j = 0; j < f; j++)
                            for (int i = 0; i < f; i++) sum += img[off + ((size_t)(y * f + j) * W + x * f + i) * ch + c];
                        unsigned want = (sum + f * f / 2) / (f * f), have = got[((size_t)y * w2 + x) * ch + c];
                        CHECK(have == want, "%dx%d, %d channels, 1/%d: pixel (%d, %d) channel %d is %u, want %u", W, H,
                              ch, f, x, y, c, have, want);
                        checked++;
                    }
            cs_buf_free(&cl, &src);
            free(img), free(got);
        }
    cs_view v = {0};
    v.intr.s[0] = 800, v.intr.s[1] = 600, v.intr.s[2] = 400.5f, v.intr.s[3] = 300.25f, v.width = 801, v.height = 601;
    cs_view_scale(&v, 4);
    CHECK(v.width == 200 && v.height == 150 && v.intr.s[0] == 200 && v.intr.s[1] == 150 && v.intr.s[2] == 400.5f / 4 &&
              v.intr.s[3] == 300.25f / 4,
          "scaled view %dx%d, intrinsics %g %g %g %g", v.width, v.height, v.intr.s[0], v.intr.s[1], v.intr.s[2],
          v.intr.s[3]);
    printf("  gt_downsample: %d values equal the CPU box average\n", checked);
    cs_loss_free(&l);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}

/* ---- per-view exposure (optim.exposure) --------------------------------------------------- */

/* OUT (3, W H) = row E's transform of X: out_c = E[4c..4c+2] . x + E[4c+3] */
static void ref_expose(const double *e, const double *x, size_t np, double *out)
{
    for (size_t p = 0; p < np; p++)
        for (int c = 0; c < 3; c++)
            out[c * np + p] = e[4 * c] * x[p] + e[4 * c + 1] * x[np + p] + e[4 * c + 2] * x[2 * np + p] + e[4 * c + 3];
}

/* The training loss of X under row E (the reference of cs_loss_forward_backward with exposure). */
static double ref_exposed_loss(const double *e, const double *x, const uint8_t *gt, int W, int H, double lambda)
{
    size_t np = (size_t)W * H;
    double *y = malloc(sizeof(double) * 3 * np);
    ref_expose(e, x, np, y);
    double L = ref_train_loss(y, gt, 3, W, H, lambda);
    free(y);
    return L;
}

/* The loss with a random exposure row selected among three: its value, the render's gradient
 * and the row's gradient (the backward's partial sums) against the reference and central
 * differences of it; Adam's first two steps on the row, each with the rows' mean then moved to
 * the identity, against the CPU. Outputs poisoned first. */
static int check_exposure_loss(cs_cl *cl, const cs_kernels *k, uint64_t *rs)
{
    int W = 37, H = 23, R = 3, row = 1;
    size_t np = (size_t)W * H, n = 3 * np;
    double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *gy = malloc(sizeof(double) * n);
    float *xf = malloc(sizeof(float) * n), *grad = malloc(sizeof(float) * n);
    uint8_t *gt = malloc(np * 3);
    for (size_t i = 0; i < np * 3; i++) gt[i] = (uint8_t)(test_rand(rs) * 256);
    for (size_t i = 0; i < n; i++) x[i] = xf[i] = (float)(0.5 + 0.3 * test_randn(rs));
    float rows[3 * CS_EXPOSURE_W];
    double e[CS_EXPOSURE_W];
    for (int i = 0; i < R * CS_EXPOSURE_W; i++) /* near the identity, as training keeps them */
        rows[i] = (float)((i % CS_EXPOSURE_W) % 5 == 0 ? 1 + 0.2 * test_randn(rs) : 0.1 * test_randn(rs));
    for (int i = 0; i < CS_EXPOSURE_W; i++) e[i] = rows[row * CS_EXPOSURE_W + i];
    cs_renderer r;
    cs_renderer_init(&r, cl, k, 0.1f);
    cs_buf gtb;
    CHECK_OK(cs_buf_alloc(cl, &r.img, CS_MEM_SCRATCH, n * 4, "img"));
    CHECK_OK(cs_buf_write(cl, &r.img, 0, n * 4, xf));
    CHECK_OK(cs_buf_alloc(cl, &gtb, CS_MEM_IMAGES, np * 3, "gt"));
    CHECK_OK(cs_buf_write(cl, &gtb, 0, np * 3, gt));
    cs_exposure ex;
    CHECK_OK(cs_exposure_open(&ex, cl, k, NULL, NULL, R));
    float ident[3 * CS_EXPOSURE_W];
    CHECK_OK(cs_exposure_read(&ex, ident));
    for (int i = 0; i < R * CS_EXPOSURE_W; i++)
        CHECK(ident[i] == ((i % CS_EXPOSURE_W) % 5 == 0 ? 1.f : 0.f), "a new row is not the identity at %d: %g", i,
              ident[i]);
    CHECK_OK(cs_buf_write(cl, &ex.rows, 0, sizeof rows, rows));
    cs_loss l;
    cs_loss_init(&l, cl, k);
    l.exposure = &ex;
    cs_exposure_select(&ex, row);
    float poison = NAN;
    CHECK_OK(cs_buf_reserve(cl, &ex.out, n * 4, 0, "exposed"));
    CHECK_OK(cs_buf_fill(cl, &ex.out, 0, n * 4, &poison, 4));
    double lambda = 0.2, loss;
    cs_metrics mt;
    CHECK_OK(cs_loss_forward_backward(&l, &r.img, &gtb, 0, W, H, (float)lambda, 2));
    CHECK_OK(cs_loss_read(&l, 2, (float)lambda, &mt, &loss));
    CHECK_OK(cs_buf_read(cl, &l.v_img, 0, n * 4, grad));
    /* the value */
    ref_expose(e, x, np, y);
    ref_sums rf = ref_loss_sums(y, gt, 3, W, H);
    double ref = (1 - lambda) * rf.l1 / rf.weight + lambda * (1 - rf.ssim / rf.weight);
    CHECK(fabs(loss - ref) < 1e-5, "exposed loss %.8f vs %.8f", loss, ref);
    float *out = malloc(sizeof(float) * n);
    CHECK_OK(cs_buf_read(cl, &ex.out, 0, n * 4, out));
    double worst = 0;
    for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(out[i] - y[i]));
    CHECK(worst < 1e-5, "exposure forward differs from the reference by %.3g", worst);
    /* the render's gradient: A^T of the exposed image's */
    ref_train_grad(y, gt, 3, W, H, lambda, gy);
    double gmax = 0;
    worst = 0;
    for (size_t p = 0; p < np; p++)
        for (int j = 0; j < 3; j++) {
            double g = 0;
            for (int c = 0; c < 3; c++) g += e[4 * c + j] * gy[c * np + p];
            gmax = fmax(gmax, fabs(g));
            worst = fmax(worst, fabs(grad[j * np + p] - g));
        }
    CHECK(worst < 1e-5 * gmax, "render gradient under exposure: off by %.3g (largest %.3g)", worst, gmax);
    /* the row's gradient: the partials summed, against the chain rule and central differences */
    float *parts = malloc((size_t)ex.n_groups * CS_EXPOSURE_W * sizeof(float));
    CHECK_OK(cs_buf_read(cl, &ex.partials, 0, (size_t)ex.n_groups * CS_EXPOSURE_W * sizeof(float), parts));
    double g_row[CS_EXPOSURE_W] = {0};
    for (unsigned gi = 0; gi < ex.n_groups; gi++)
        for (int q = 0; q < CS_EXPOSURE_W; q++) g_row[q] += parts[(size_t)gi * CS_EXPOSURE_W + q];
    /* the chain rule vouched for by differences of the smooth part (D-SSIM alone: L1's kinks
       would make a difference over all pixels at once unreliable), then the kernel against it */
    double *gs = malloc(sizeof(double) * n);
    ref_train_grad(y, gt, 3, W, H, 1.0, gs);
    for (int q = 0; q < CS_EXPOSURE_W; q++) {
        int c = q / 4, j = q % 4;
        double chain = 0, chain_ssim = 0;
        for (size_t p = 0; p < np; p++) {
            double xj = j < 3 ? x[j * np + p] : 1.0;
            chain += gy[c * np + p] * xj, chain_ssim += gs[c * np + p] * xj;
        }
        double ep[CS_EXPOSURE_W], em[CS_EXPOSURE_W], h = 1e-4;
        memcpy(ep, e, sizeof ep), memcpy(em, e, sizeof em);
        ep[q] += h, em[q] -= h;
        double fd = (ref_exposed_loss(ep, x, gt, W, H, 1.0) - ref_exposed_loss(em, x, gt, W, H, 1.0)) / (2 * h);
        CHECK(fabs(chain_ssim - fd) < 1e-4 * fabs(fd) + 1e-9, "row gradient %d: chain rule %.8g vs differences %.8g", q,
              chain_ssim, fd);
        CHECK(fabs(g_row[q] - chain) < 1e-4 * fabs(chain) + 1e-6, "row gradient %d: kernel %.8g vs %.8g", q, g_row[q], chain);
    }
    free(gs);
    /* Adam's first two steps on the selected row (the same gradient twice), each followed by
       every row moved alike so that the rows' mean is the identity */
    double lr = 0.01, m1[CS_EXPOSURE_W] = {0}, v1[CS_EXPOSURE_W] = {0}, p1[3 * CS_EXPOSURE_W];
    for (int i = 0; i < R * CS_EXPOSURE_W; i++) p1[i] = rows[i];
    for (int t = 1; t <= 2; t++) {
        CHECK_OK(cs_exposure_step(&ex, lr));
        for (int q = 0; q < CS_EXPOSURE_W; q++) {
            m1[q] = 0.9 * m1[q] + 0.1 * g_row[q], v1[q] = 0.999 * v1[q] + 0.001 * g_row[q] * g_row[q];
            p1[row * CS_EXPOSURE_W + q] -= lr * (m1[q] / (1 - pow(0.9, t))) / (sqrt(v1[q] / (1 - pow(0.999, t))) + 1e-15);
        }
        for (int q = 0; q < CS_EXPOSURE_W; q++) {
            double mean = 0;
            for (int i = 0; i < R; i++) mean += p1[i * CS_EXPOSURE_W + q] / R;
            for (int i = 0; i < R; i++) p1[i * CS_EXPOSURE_W + q] -= mean - (q % 5 == 0 ? 1.0 : 0.0);
        }
    }
    float after[3 * CS_EXPOSURE_W];
    CHECK_OK(cs_exposure_read(&ex, after));
    for (int i = 0; i < R * CS_EXPOSURE_W; i++)
        CHECK(fabs(after[i] - p1[i]) < 1e-5, "Adam and the centring, row %d value %d: %.8g vs %.8g", i / CS_EXPOSURE_W,
              i % CS_EXPOSURE_W, after[i], p1[i]);
    cs_loss_free(&l);
    cs_exposure_free(&ex);
    cs_buf_free(cl, &gtb);
    cs_renderer_free(&r);
    cs_buf_free(cl, &r.img);
    free(x), free(y), free(gy), free(xf), free(grad), free(gt), free(out), free(parts);
    return 0;
}

/* The optimiser path converges: a fixed render and, as its photo, a known affine transform of
 * it (8-bit); the loss and the row's Adam steps alone bring the row to that transform (the seven
 * other views, never trained, take the centring's share). */
static int check_exposure_fit(cs_cl *cl, const cs_kernels *k, uint64_t *rs)
{
    int W = 48, H = 40;
    size_t np = (size_t)W * H, n = 3 * np;
    double truth[CS_EXPOSURE_W], *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n);
    float *xf = malloc(sizeof(float) * n);
    uint8_t *gt = malloc(np * 3);
    /* gains within 10% of 1, mixing and offsets within 0.04: the photo stays inside (0, 1), so
       no clamp hides the transform from the fit */
    for (int q = 0; q < CS_EXPOSURE_W; q++)
        truth[q] = q % 5 == 0 ? 1.0 + 0.1 * (2 * test_rand(rs) - 1) : 0.04 * (2 * test_rand(rs) - 1);
    for (size_t i = 0; i < n; i++) x[i] = xf[i] = (float)(0.2 + 0.6 * test_rand(rs));
    ref_expose(truth, x, np, y);
    for (size_t p = 0; p < np; p++)
        for (int c = 0; c < 3; c++) gt[p * 3 + c] = (uint8_t)lround(fmin(fmax(y[c * np + p], 0), 1) * 255);
    cs_buf img, gtb;
    CHECK_OK(cs_buf_alloc(cl, &img, CS_MEM_SCRATCH, n * 4, "img"));
    CHECK_OK(cs_buf_write(cl, &img, 0, n * 4, xf));
    CHECK_OK(cs_buf_alloc(cl, &gtb, CS_MEM_IMAGES, np * 3, "gt"));
    CHECK_OK(cs_buf_write(cl, &gtb, 0, np * 3, gt));
    cs_exposure ex;
    CHECK_OK(cs_exposure_open(&ex, cl, k, NULL, NULL, 8)); /* the other 7 take the centring's share */
    cs_exposure_select(&ex, 1);
    cs_loss l;
    cs_loss_init(&l, cl, k);
    l.exposure = &ex;
    double first = 0, last = 0;
    cs_metrics mt;
    for (int it = 0; it < 600; it++) {
        CHECK_OK(cs_loss_forward_backward(&l, &img, &gtb, 0, W, H, 0.2f, it == 0 || it == 599 ? 0 : -1));
        if (it == 0) CHECK_OK(cs_loss_read(&l, 0, 0.2f, &mt, &first));
        if (it == 599) CHECK_OK(cs_loss_read(&l, 0, 0.2f, &mt, &last));
        CHECK_OK(cs_exposure_step(&ex, 0.01 * pow(0.1, it / 599.0)));
    }
    float rows[8 * CS_EXPOSURE_W];
    CHECK_OK(cs_exposure_read(&ex, rows));
    double err = 0;
    for (int q = 0; q < CS_EXPOSURE_W; q++) err = fmax(err, fabs(rows[CS_EXPOSURE_W + q] - truth[q]));
    CHECK(err < 0.03 && last < 0.25 * first, "the fit ends %.4f from the true transform, loss %.5f -> %.5f", err, first,
          last);
    cs_loss_free(&l);
    cs_exposure_free(&ex);
    cs_buf_free(cl, &img);
    cs_buf_free(cl, &gtb);
    free(x), free(y), free(xf), free(gt);
    return 0;
}

/* A view's exposure at evaluation: a training camera selects its own row; a held-out camera the
 * inverse-distance blend of the rows of its CS_EXPOSURE_NEAREST nearest training cameras (a
 * brute-force search here), applied in place to a render, against the CPU. Cameras at random
 * centres, rows random, the image poisoned around the transform's output. */
static int check_exposure_held_out(cs_cl *cl, const cs_kernels *k, uint64_t *rs)
{
    enum { NC = 10, NT = 7 };
    cs_scene sc;
    memset(&sc, 0, sizeof sc);
    sc.n_cams = NC;
    sc.cams = calloc(NC, sizeof(cs_camera));
    double ctr[NC][3];
    for (int i = 0; i < NC; i++) {
        sc.cams[i].R[0] = sc.cams[i].R[4] = sc.cams[i].R[8] = 1;
        for (int a = 0; a < 3; a++) ctr[i][a] = 4 * test_randn(rs);
        cs_camera_place(&sc.cams[i], ctr[i]);
    }
    int train[NT] = {0, 1, 3, 4, 6, 8, 9}; /* held out: 2, 5, 7 */
    cs_exposure ex;
    CHECK_OK(cs_exposure_open(&ex, cl, k, &sc, train, NT));
    float rows[NT * CS_EXPOSURE_W];
    for (int i = 0; i < NT * CS_EXPOSURE_W; i++) rows[i] = (float)((i % CS_EXPOSURE_W) % 5 == 0 ? 1 + 0.2 * test_randn(rs) : 0.1 * test_randn(rs));
    CHECK_OK(cs_buf_write(cl, &ex.rows, 0, sizeof rows, rows));
    int W = 21, H = 18;
    size_t np = (size_t)W * H;
    float *img = malloc(sizeof(float) * 3 * np), *got = malloc(sizeof(float) * 3 * np);
    double *x = malloc(sizeof(double) * 3 * np), *want = malloc(sizeof(double) * 3 * np);
    for (size_t i = 0; i < 3 * np; i++) x[i] = img[i] = (float)test_rand(rs);
    cs_buf b;
    CHECK_OK(cs_buf_alloc(cl, &b, CS_MEM_SCRATCH, 3 * np * 4, "render"));
    for (int cam = 0; cam < NC; cam++) {
        double e[CS_EXPOSURE_W] = {0};
        int own = -1;
        for (int i = 0; i < NT; i++) own = train[i] == cam ? i : own;
        if (own >= 0)
            for (int q = 0; q < CS_EXPOSURE_W; q++) e[q] = rows[own * CS_EXPOSURE_W + q];
        else { /* the nearest NEAREST by brute force: rank each training camera by distance */
            double d[NT], sum = 0;
            for (int i = 0; i < NT; i++)
                d[i] = sqrt(pow(ctr[train[i]][0] - ctr[cam][0], 2) + pow(ctr[train[i]][1] - ctr[cam][1], 2) +
                            pow(ctr[train[i]][2] - ctr[cam][2], 2));
            for (int i = 0; i < NT; i++) {
                int rank = 0;
                for (int j = 0; j < NT; j++) rank += d[j] < d[i];
                if (rank >= CS_EXPOSURE_NEAREST) continue;
                sum += 1 / d[i];
                for (int q = 0; q < CS_EXPOSURE_W; q++) e[q] += rows[i * CS_EXPOSURE_W + q] / d[i];
            }
            for (int q = 0; q < CS_EXPOSURE_W; q++) e[q] /= sum;
        }
        CHECK_OK(cs_buf_write(cl, &b, 0, 3 * np * 4, img));
        CHECK_OK(cs_exposure_select_camera(&ex, cam));
        CHECK_OK(cs_exposure_apply(&ex, &b, W, H));
        CHECK_OK(cs_buf_read(cl, &b, 0, 3 * np * 4, got));
        ref_expose(e, x, np, want);
        double worst = 0;
        for (size_t i = 0; i < 3 * np; i++) worst = fmax(worst, fabs(got[i] - want[i]));
        CHECK(worst < 1e-5, "camera %d (%s): the exposed render is off by %.3g", cam, own >= 0 ? "training" : "held out",
              worst);
    }
    cs_buf_free(cl, &b);
    cs_exposure_free(&ex);
    free(sc.cams), free(img), free(got), free(x), free(want);
    return 0;
}

int test_exposure_loss(void)
{
    uint64_t rs = test_seed() ^ 0xe905;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_kernels k;
    cs_kernel_opts ko = {{0, 0, 0, 0}, 0, 0, 0, 0, CS_PROGS(loss), 0};
    CHECK_OK(cs_kernels_build(&cl, &ko, &k));
    CHECK_OK(check_exposure_loss(&cl, &k, &rs));
    CHECK_OK(check_exposure_held_out(&cl, &k, &rs));
    /* the fit runs the same kernels 600 times: not in the simulator (check_oclgrind.sh) */
    if (!test_small()) CHECK_OK(check_exposure_fit(&cl, &k, &rs));
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}
