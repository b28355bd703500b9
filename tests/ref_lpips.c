/* ref_lpips: CPU reference of LPIPS-alex v0.1 in double precision (ref_lpips.h). */
#include "ref_lpips.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ref_conv_relu(const double *in, int cin, int h, int w, const float *wt, const float *bias, int cout, int k,
                   int stride, int pad, double *out, int *ho, int *wo)
{
    *ho = (h + 2 * pad - k) / stride + 1, *wo = (w + 2 * pad - k) / stride + 1;
    for (int o = 0; o < cout; o++)
        for (int y = 0; y < *ho; y++)
            for (int x = 0; x < *wo; x++) {
                double s = bias[o];
                for (int c = 0; c < cin; c++)
                    for (int ky = 0; ky < k; ky++) {
                        int iy = y * stride - pad + ky;
                        if (iy < 0 || iy >= h) continue;
                        for (int kx = 0; kx < k; kx++) {
                            int ix = x * stride - pad + kx;
                            if (ix >= 0 && ix < w)
                                s += (double)wt[((o * cin + c) * k + ky) * k + kx] * in[((size_t)c * h + iy) * w + ix];
                        }
                    }
                out[((size_t)o * *ho + y) * *wo + x] = s > 0 ? s : 0;
            }
}

static void pool(const double *in, int c, int *h, int *w, double *out)
{
    int ho = (*h - 3) / 2 + 1, wo = (*w - 3) / 2 + 1;
    for (int ch = 0; ch < c; ch++)
        for (int y = 0; y < ho; y++)
            for (int x = 0; x < wo; x++) {
                double m = -INFINITY;
                for (int dy = 0; dy < 3; dy++)
                    for (int dx = 0; dx < 3; dx++) m = fmax(m, in[((size_t)ch * *h + 2 * y + dy) * *w + 2 * x + dx]);
                out[((size_t)ch * ho + y) * wo + x] = m;
            }
    *h = ho, *w = wo;
}

/* the five taps of one image; taps[l] (cout_l, th[l], tw[l]) */
static void features(const float *wts, const uint8_t *img, int w, int h, double *taps[5], int th[5], int tw[5])
{
    static const int cout[5] = {64, 192, 384, 256, 256}, k[5] = {11, 5, 3, 3, 3}, st[5] = {4, 1, 1, 1, 1},
                     pad[5] = {2, 2, 1, 1, 1}, pool_before[5] = {0, 1, 1, 0, 0};
    size_t n = (size_t)w * h;
    double *x = malloc(sizeof(double) * 3 * n), *tmp = malloc(sizeof(double) * 3 * n);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) x[c * n + i] = (img[i * 3 + c] / 127.5 - 1.0 - wts[c]) / wts[3 + c];
    const float *p = wts + 6;
    int cin = 3, ch = h, cw = w;
    const double *cur = x;
    for (int l = 0; l < 5; l++) {
        if (pool_before[l]) {
            pool(cur, cin, &ch, &cw, tmp);
            cur = tmp;
        }
        const float *wt = p, *bias = p + (size_t)cout[l] * cin * k[l] * k[l];
        p = bias + cout[l];
        int ho = (ch + 2 * pad[l] - k[l]) / st[l] + 1, wo = (cw + 2 * pad[l] - k[l]) / st[l] + 1;
        taps[l] = malloc(sizeof(double) * cout[l] * ho * wo);
        ref_conv_relu(cur, cin, ch, cw, wt, bias, cout[l], k[l], st[l], pad[l], taps[l], &ho, &wo);
        th[l] = ho, tw[l] = wo, ch = ho, cw = wo, cin = cout[l];
        cur = taps[l];
        free(tmp);
        tmp = malloc(sizeof(double) * cin * ch * cw);
    }
    free(x), free(tmp);
}

double ref_lpips(const float *wts, const uint8_t *a, const uint8_t *b, int w, int h)
{
    static const int cout[5] = {64, 192, 384, 256, 256};
    double *ta[5], *tb[5], total = 0;
    int th[5], tw[5];
    features(wts, a, w, h, ta, th, tw);
    features(wts, b, w, h, tb, th, tw);
    const float *lin = wts + 2469696 + 6;
    for (int l = 0; l < 5; l++) {
        size_t n = (size_t)th[l] * tw[l];
        double s = 0;
        for (size_t p = 0; p < n; p++) {
            double na = 0, nb = 0, d = 0;
            for (int c = 0; c < cout[l]; c++) na += ta[l][c * n + p] * ta[l][c * n + p], nb += tb[l][c * n + p] * tb[l][c * n + p];
            na = sqrt(na) + 1e-10, nb = sqrt(nb) + 1e-10;
            for (int c = 0; c < cout[l]; c++) {
                double t = ta[l][c * n + p] / na - tb[l][c * n + p] / nb;
                d += lin[c] * t * t;
            }
            s += d;
        }
        total += s / n;
        lin += cout[l];
        free(ta[l]), free(tb[l]);
    }
    return total;
}
