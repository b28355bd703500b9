/* test_loss: the L1 + D-SSIM loss kernels against a double CPU reference (value), and their
 * image gradient against central finite differences of that reference. */
#include <stdlib.h>
#include <string.h>

#include "loss.h"
#include "test.h"
#include "util.h"

static double ref_loss_value(const double *x, const uint8_t *gt, int W, int H, double lambda, double *ssim_out)
{
    static const double C1 = 0.0001, C2 = 0.0009;
    double g[11], gs = 0;
    for (int i = 0; i < 11; i++) gs += g[i] = exp(-(i - 5) * (i - 5) / 4.5);
    for (int i = 0; i < 11; i++) g[i] /= gs;
    double l1 = 0, ss = 0;
    for (int c = 0; c < 3; c++)
        for (int y = 0; y < H; y++)
            for (int xx = 0; xx < W; xx++) {
                double m[5] = {0, 0, 0, 0, 0};
                for (int dy = -5; dy <= 5; dy++)
                    for (int dx = -5; dx <= 5; dx++) {
                        int py = y + dy, px = xx + dx;
                        if (py < 0 || py >= H || px < 0 || px >= W) continue;
                        double w = g[dy + 5] * g[dx + 5];
                        double a = x[(size_t)c * W * H + (size_t)py * W + px], b = gt[((size_t)py * W + px) * 3 + c] / 255.0;
                        m[0] += w * a, m[1] += w * b, m[2] += w * a * a, m[3] += w * b * b, m[4] += w * a * b;
                    }
                double s11 = m[2] - m[0] * m[0], s22 = m[3] - m[1] * m[1], s12 = m[4] - m[0] * m[1];
                ss += (2 * m[0] * m[1] + C1) * (2 * s12 + C2) / ((m[0] * m[0] + m[1] * m[1] + C1) * (s11 + s22 + C2));
                l1 += fabs(x[(size_t)c * W * H + (size_t)y * W + xx] - gt[((size_t)y * W + xx) * 3 + c] / 255.0);
            }
    double n = 3.0 * W * H;
    if (ssim_out) *ssim_out = ss / n;
    return (1 - lambda) * l1 / n + lambda * (1 - ss / n);
}

int test_ssim_loss(void)
{
    uint64_t rs = test_seed() ^ 0x55;
    int W = 37, H = 23;
    size_t n = (size_t)3 * W * H;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_kernels k;
    cs_kernel_opts ko = {{0, 0, 0, 0}, 0, 0, 0};
    CHECK_OK(cs_kernels_build(&cl, &ko, &k));
    double *x = malloc(sizeof(double) * n);
    float *xf = malloc(sizeof(float) * n), *grad = malloc(sizeof(float) * n);
    uint8_t *gt = malloc(n);
    for (size_t i = 0; i < n; i++) {
        gt[i] = (uint8_t)(test_rand(&rs) * 256);
        x[i] = xf[i] = (float)(0.5 + 0.3 * test_randn(&rs)); /* some outside [0, 1] */
    }
    /* a renderer holding just the image */
    cs_renderer r;
    cs_renderer_init(&r, &cl, &k, 0.1f);
    cs_buf gtb;
    CHECK_OK(cs_buf_alloc(&cl, &r.img, CS_MEM_SCRATCH, n * 4, "img"));
    CHECK_OK(cs_buf_write(&cl, &r.img, 0, n * 4, xf));
    CHECK_OK(cs_buf_alloc(&cl, &gtb, CS_MEM_IMAGES, n + 16, "gt"));
    CHECK_OK(cs_buf_write(&cl, &gtb, 0, n, gt));
    cs_loss l;
    cs_loss_init(&l, &cl, &k);
    double lambda = 0.2, loss, ssim;
    cs_metrics mt;
    CHECK_OK(cs_loss_forward_backward(&l, &r, &gtb, 0, W, H, (float)lambda, 3));
    CHECK_OK(cs_loss_read(&l, 3, W, H, (float)lambda, &mt, &loss));
    CHECK_OK(cs_buf_read(&cl, &l.v_img, 0, n * 4, grad));
    double ref = ref_loss_value(x, gt, W, H, lambda, &ssim);
    CHECK(fabs(loss - ref) < 1e-5 && fabs(mt.ssim - ssim) < 1e-5, "loss %.8f vs %.8f, ssim %.8f vs %.8f", loss, ref,
          mt.ssim, ssim);
    double se = 0, sr = 0;
    for (int t = 0; t < 60; t++) {
        size_t i = (size_t)(test_rand(&rs) * n);
        double x0 = x[i], h = 1e-4;
        if (fabs(x0 - gt[(i % ((size_t)W * H)) * 3 + i / ((size_t)W * H)] / 255.0) < 2 * h) continue; /* L1 kink */
        x[i] = x0 + h;
        double lp = ref_loss_value(x, gt, W, H, lambda, NULL);
        x[i] = x0 - h;
        double lm = ref_loss_value(x, gt, W, H, lambda, NULL);
        x[i] = x0;
        double fd = (lp - lm) / (2 * h);
        se += fabs(grad[i] - fd), sr += fabs(fd);
    }
    CHECK(se / sr < 2e-3, "image gradient: relative error of sums %.3g (seed %llu)", se / sr, (unsigned long long)test_seed());
    /* metrics clamp to [0, 1] like graphdeco's evaluation */
    CHECK_OK(cs_loss_metrics(&l, &r, &gtb, 0, W, H, 4));
    CHECK_OK(cs_loss_read(&l, 4, W, H, 0.f, &mt, NULL));
    double sq = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (int)(i / ((size_t)W * H));
        size_t p = i % ((size_t)W * H);
        double a = x[i] < 0 ? 0 : x[i] > 1 ? 1 : x[i], d = a - gt[p * 3 + c] / 255.0;
        sq += d * d;
    }
    CHECK(fabs(mt.mse - sq / n) < 1e-6, "mse %.8f vs %.8f", mt.mse, sq / n);
    cs_buf_free(&cl, &gtb);
    cs_renderer_free(&r);
    cs_buf_free(&cl, &r.img);
    cs_loss_free(&l);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    free(x), free(xf), free(grad), free(gt);
    return 0;
}
