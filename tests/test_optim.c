/* test_optim: the Adam kernels against a double-precision CPU Adam, with fp32 moments and
 * with the 16-bit moments of memory.optimizer_dtype = fp16 (src/model/model.h): gradients of
 * magnitudes from 1e-10 to 1e-1 for 150 steps, then 1000 steps of zero gradient, during
 * which v must keep decaying (rounding to nearest would freeze the 16-bit sqrt(v)). */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "kernels.h"
#include "model.h"
#include "optim.h"
#include "layout.h"
#include "test.h"
#include "util.h"

/* host decoding of the 16-bit sqrt(v) (6-bit exponent biased by 55, 10-bit mantissa) */
static double u16_decode(uint16_t s)
{
    return s ? ldexp(1.0 + (s & 1023) / 1024.0, (int)(s >> 10) - 55) : 0.0;
}

/* SPARSE: each step a random 70% of the rows are visible (rows i % 16 == 0 never are), and
   the reference steps only those (optim.sparse_adam); never-visible rows must keep every bit. */
static int adam_check(int opt_half, int sparse)
{
    uint64_t rs = test_seed() ^ (0xada + (unsigned)opt_half + 2u * (unsigned)sparse);
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_kernel_opts ko = {{1, 0, 0, opt_half}, 0, 0, 0, 0, 0, 0};
    cs_kernels k;
    CHECK_OK(cs_kernels_build(&cl, &ko, &k));
    cs_config cfg;
    cs_config_defaults(&cfg);
    const cs_adam_lrs lrs = cs_adam_lrs_of(&cfg.optim);
    /* oclgrind (CLSPLAT_TEST_SMALL): fewer steps, as every launch is simulated (26-51 s a test with 1150) */
    const int N = 64, K3 = 12, W = CS_GEO_W + K3, STEPS = test_small() ? 30 : 150, ZERO_STEPS = test_small() ? 60 : 1000;
    cs_splats s;
    cs_splats_alloc(&s, N, 1, 0);
    for (int i = 0; i < N; i++) {
        for (int c = 0; c < 3; c++) s.means[i * 3 + c] = (float)test_randn(&rs), s.log_scales[i * 3 + c] = -3.f;
        s.quats[i * 4] = 1.f;
        s.logit_opacity[i] = 0.f;
        for (int c = 0; c < K3; c++) s.sh[i * K3 + c] = (float)(0.3 * test_randn(&rs));
    }
    cs_model m;
    CHECK_OK(cs_model_create(&cl, &m, &s, &ko.layout, N));
    /* host mirror in double: parameters, moments; per-element gradient scale 1e-10 .. 1e-1 */
    size_t ne = (size_t)N * W;
    double *p = malloc(sizeof(double) * ne), *mm = calloc(ne, sizeof(double)), *vv = calloc(ne, sizeof(double)),
           *scale = malloc(sizeof(double) * ne), *p0 = malloc(sizeof(double) * ne), *lr = malloc(sizeof(double) * ne),
           *path = calloc(ne, sizeof(double));
    float *geo = malloc(sizeof(float) * N * CS_GEO_W), *sh = malloc(sizeof(float) * N * K3);
    float *gg = malloc(sizeof(float) * N * CS_GEO_W), *gs = malloc(sizeof(float) * N * K3);
    CHECK_OK(cs_buf_read(&cl, &m.geo, 0, sizeof(float) * N * CS_GEO_W, geo));
    CHECK_OK(cs_buf_read(&cl, &m.sh, 0, sizeof(float) * N * K3, sh));
    double lr_mean = 1.6e-4;
    for (int i = 0; i < N; i++)
        for (int c = 0; c < W; c++) {
            size_t e = (size_t)i * W + c;
            p[e] = p0[e] = c < CS_GEO_W ? geo[i * CS_GEO_W + c] : sh[i * K3 + c - CS_GEO_W];
            scale[e] = pow(10.0, -10.0 + 9.0 * test_rand(&rs));
            lr[e] = c < CS_GEO_LOG_SCALE ? lr_mean : c < CS_GEO_QUAT ? cfg.optim.scaling_lr
                    : c < CS_GEO_LOGIT_OPACITY ? cfg.optim.rotation_lr : c < CS_GEO_W ? cfg.optim.opacity_lr
                    : c < CS_GEO_W + 3 ? cfg.optim.feature_lr : cfg.optim.feature_rest_lr;
        }
    cs_buf radii = {0};
    int *vis = malloc(sizeof(int) * N);
    CHECK_OK(cs_buf_alloc(&cl, &radii, CS_MEM_OTHER, sizeof(int) * N, "test radii"));
    for (int t = 1; t <= STEPS + ZERO_STEPS; t++) {
        for (int i = 0; i < N; i++) vis[i] = !sparse || (i % 16 && test_rand(&rs) < 0.7) ? 1 + i % 5 : -(i % 2);
        for (int i = 0; i < N; i++)
            for (int c = 0; c < W && vis[i] > 0; c++) {
                size_t e = (size_t)i * W + c;
                double g = t <= STEPS ? scale[e] * test_randn(&rs) : 0.0;
                float gf = (float)g;
                if (c < CS_GEO_W) gg[i * CS_GEO_W + c] = gf;
                else gs[i * K3 + c - CS_GEO_W] = gf;
                mm[e] = 0.9 * mm[e] + 0.1 * gf;
                vv[e] = 0.999 * vv[e] + 0.001 * (double)gf * gf;
                double bc1 = 1 - pow(0.9, t), bc2 = 1 - pow(0.999, t);
                double d = lr[e] * (mm[e] / bc1) / (sqrt(vv[e] / bc2) + 1e-15);
                p[e] -= d;
                path[e] += fabs(d);
            }
        for (int i = 0; i < N; i++) /* a hidden row's gradient is whatever the backward left: poison it */
            for (int c = 0; c < W && vis[i] <= 0; c++)
                if (c < CS_GEO_W) gg[i * CS_GEO_W + c] = 1e3f;
                else gs[i * K3 + c - CS_GEO_W] = -1e3f;
        CHECK_OK(cs_buf_write(&cl, &m.v_geo, 0, sizeof(float) * N * CS_GEO_W, gg));
        CHECK_OK(cs_buf_write(&cl, &m.v_sh, 0, sizeof(float) * N * K3, gs));
        CHECK_OK(cs_buf_write(&cl, &radii, 0, sizeof(int) * N, vis));
        CHECK_OK(cs_adam_step(&cl, &k, &m, &lrs, lr_mean, sparse ? &radii : NULL));
    }
    cs_buf_free(&cl, &radii);
    free(vis);
    CHECK_OK(cs_buf_read(&cl, &m.geo, 0, sizeof(float) * N * CS_GEO_W, geo));
    CHECK_OK(cs_buf_read(&cl, &m.sh, 0, sizeof(float) * N * K3, sh));
    /* displacement of every element vs the reference's; v at the end vs the reference's */
    double worst = 0, sum_err = 0, sum_ref = 0, worst_v = 0;
    int wi = -1;
    uint16_t *v16 = malloc(ne * 2);
    float *v32 = malloc(ne * 4);
    if (opt_half) {
        CHECK_OK(cs_buf_read(&cl, &m.v2_geo, 0, (size_t)N * CS_GEO_W * 2, v16));
        CHECK_OK(cs_buf_read(&cl, &m.v2_sh, 0, (size_t)N * K3 * 2, v16 + N * CS_GEO_W));
    } else {
        CHECK_OK(cs_buf_read(&cl, &m.v2_geo, 0, (size_t)N * CS_GEO_W * 4, v32));
        CHECK_OK(cs_buf_read(&cl, &m.v2_sh, 0, (size_t)N * K3 * 4, v32 + N * CS_GEO_W));
    }
    for (int i = 0; i < N; i += 16)
        for (int c = 0; c < W && sparse; c++) {
            float now = c < CS_GEO_W ? geo[i * CS_GEO_W + c] : sh[i * K3 + c - CS_GEO_W], was = (float)p0[(size_t)i * W + c];
            CHECK(!memcmp(&now, &was, 4), "sparse Adam changed row %d (never visible), column %d: %.9g -> %.9g", i, c,
                  was, now);
        }
    for (int i = 0; i < N; i++)
        for (int c = 0; c < W; c++) {
            size_t e = (size_t)i * W + c;
            if (sparse && i % 16 == 0) continue; /* zero moments: checked bit for bit above */
            double got = (c < CS_GEO_W ? geo[i * CS_GEO_W + c] : sh[i * K3 + c - CS_GEO_W]) - p0[e], want = p[e] - p0[e];
            /* relative to the distance travelled, after the rounding of 1150 float stores: each
               kept step rounds by up to half a unit in the last place of the parameter (a random walk
               of ~4 ulp), and the decaying steps under half an ulp are lost (a tail of up to ~5 ulp) */
            double ulp = ldexp(1.0, ilogb(fmax(fabs(p0[e]), fabs(p[e])) + 1e-30) - 23);
            double rel = fmax(0.0, fabs(got - want) - 32 * ulp) / (path[e] + 1e-30);
            if (!(rel <= worst)) worst = rel, wi = (int)e;
            sum_err += fabs(got - want), sum_ref += fabs(want);
            size_t ve = c < 11 ? (size_t)i * CS_GEO_W + c : (size_t)N * CS_GEO_W + (size_t)i * K3 + c - 11;
            double u = opt_half ? u16_decode(v16[ve]) : sqrt(v32[ve]), uref = sqrt(vv[e]);
            double rv = fabs(u - uref) / uref;
            if (!(rv <= worst_v)) worst_v = rv;
        }
    printf("  %s%s moments: parameter displacement relative error: sum %.3g, worst %.3g (element %d); "
           "sqrt(v) after %d zero steps: worst relative error %.3g\n",
           sparse ? "sparse, " : "", opt_half ? "16-bit" : "fp32", sum_err / sum_ref, worst, wi, ZERO_STEPS, worst_v);
    double b_sum = opt_half ? 5e-3 : 1e-4, b_worst = opt_half ? 0.02 : 1e-3, b_v = opt_half ? 0.1 : 1e-4;
    CHECK(sum_err / sum_ref < b_sum && worst < b_worst && worst_v < b_v,
          "Adam with %s moments drifts from the reference: sum %.3g (bound %g), worst %.3g (bound %g), sqrt(v) %.3g "
          "(bound %g), seed %llu",
          opt_half ? "16-bit" : "fp32", sum_err / sum_ref, b_sum, worst, b_worst, worst_v, b_v,
          (unsigned long long)test_seed());
    free(p), free(mm), free(vv), free(scale), free(p0), free(lr), free(path), free(geo), free(sh), free(gg), free(gs), free(v16),
        free(v32);
    cs_splats_free(&s);
    cs_model_free(&cl, &m);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}

int test_adam_fp32(void) { return adam_check(0, 0); }
int test_adam_fp16_moments(void) { return adam_check(1, 0); }
int test_adam_sparse(void) { return adam_check(0, 1) || adam_check(1, 1); }
