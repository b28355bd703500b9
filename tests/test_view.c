/* test_view: the viewer's model blob (view_model.h) against a double-precision reference:
 * half floats (model.h's cs_float_to_half) rounded to the nearest (ties to even) with the edges (the largest half, overflow
 * to infinity, subnormals, signed zero, NaN), and the blob of random Gaussians with a
 * mip-splatting 3D filter and a non-finite row: header, left-out row, activated and filtered
 * opacity, covariance, SH. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "test.h"
#include "view_model.h"

/* the value of half H (exact in double) */
static double half_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* F rounds to H: no finite half is nearer, and a tie went to the even one */
static int nearest(float f, uint16_t h)
{
    double v = half_value(h), err = fabs(v - f);
    if (fabs((double)f) >= 65520.0) return isinf(v) && (v > 0) == (f > 0);
    for (int d = -1; d <= 1; d += 2) {
        uint16_t o = (uint16_t)(h + d);
        if ((h & 0x7fff) == 0 && d < 0) o = (uint16_t)((h ^ 0x8000) + 1); /* past zero */
        double w = half_value(o);
        if (isinf(w) || isnan(w)) continue;
        double e2 = fabs(w - f);
        if (e2 < err || (e2 == err && (h & 1))) return 0;
    }
    return 1;
}

static int half_checks(uint64_t *rs)
{
    struct { float f; uint16_t h; } fixed[] = {
        {0.f, 0}, {-0.f, 0x8000}, {1.f, 0x3c00}, {-2.f, 0xc000}, {65504.f, 0x7bff}, {65519.f, 0x7bff},
        {65520.f, 0x7c00}, {1e10f, 0x7c00}, {-INFINITY, 0xfc00}, {5.960464477539063e-8f, 1}, {2.9e-8f, 0},
        {6.103515625e-5f, 0x0400}, {1.0009765625f, 0x3c01}, {1.00048828125f, 0x3c00}, {1.00146484375f, 0x3c02}};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        CHECK(cs_float_to_half(fixed[i].f) == fixed[i].h, "half of %.9g: 0x%04x, want 0x%04x", fixed[i].f,
              cs_float_to_half(fixed[i].f), fixed[i].h);
    uint16_t nan = cs_float_to_half(NAN);
    CHECK((nan & 0x7c00) == 0x7c00 && (nan & 0x3ff), "NaN gave 0x%04x", nan);
    for (int i = 0; i < 200000; i++) { /* every exponent a half has, and some beyond */
        float f = (float)ldexp(test_rand(rs) * 2 - 1, (int)(test_rand(rs) * 50) - 30);
        uint16_t h = cs_float_to_half(f);
        CHECK(nearest(f, h), "half of %.9g: 0x%04x (%.9g) is not the nearest", f, h, half_value(h));
    }
    return 0;
}

int test_view_model(void)
{
    uint64_t rs = test_seed() ^ 0x71e3;
    if (half_checks(&rs)) return 1;
    cs_splats s;
    const int n = 50, deg = 2, K = CS_SH_COEFFS(deg), texels = (3 * K + 3) / 4;
    CHECK_OK(cs_splats_alloc(&s, n, deg, 1));
    for (int i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) s.means[i * 3 + c] = (float)(test_rand(&rs) * 4 - 2);
        for (int c = 0; c < 3; c++) s.log_scales[i * 3 + c] = (float)(test_rand(&rs) * 4 - 5);
        for (int c = 0; c < 4; c++) s.quats[i * 4 + c] = (float)(test_rand(&rs) * 2 - 1);
        s.logit_opacity[i] = (float)(test_rand(&rs) * 8 - 4);
        s.filter_3d[i] = (float)(test_rand(&rs) * 0.05);
        for (int k = 0; k < K * 3; k++) s.sh[(size_t)i * K * 3 + k] = (float)(test_rand(&rs) * 2 - 1);
    }
    const int bad = (int)(test_rand(&rs) * n);
    s.sh[(size_t)bad * K * 3 + 4] = NAN; /* left out of the blob */
    cs_bytes b = {0};
    CHECK_OK(cs_view_model_encode(&s, 1234, &b));
    uint32_t h[8];
    memcpy(h, b.buf + 4, sizeof h - 4);
    CHECK(!memcmp(b.buf, "CSVM", 4) && h[0] == 1 && h[1] == (uint32_t)n - 1 && h[2] == (uint32_t)deg && h[3] == 1234 &&
              h[4] == (uint32_t)texels, "header: version %u, %u Gaussians, degree %u, iteration %u, %u texels", h[0], h[1],
          h[2], h[3], h[4]);
    CHECK(b.len == CS_VIEW_MODEL_HEADER + (size_t)(n - 1) * (48 + texels * 8), "%zu bytes", b.len);
    const float *geo = (const float *)(b.buf + CS_VIEW_MODEL_HEADER);
    const uint16_t *sh = (const uint16_t *)(b.buf + CS_VIEW_MODEL_HEADER + (size_t)(n - 1) * 48);
    for (int i = 0, row = 0; i < n; i++) {
        if (i == bad) continue;
        const float *g = geo + (size_t)row * 12, *q = s.quats + i * 4;
        double qn = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
        double w = q[0] / qn, x = q[1] / qn, y = q[2] / qn, z = q[3] / qn, f2 = (double)s.filter_3d[i] * s.filter_3d[i];
        double R[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                          {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                          {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
        double d[3], ratio = 1;
        for (int c = 0; c < 3; c++) {
            double s2 = exp(2.0 * s.log_scales[i * 3 + c]);
            d[c] = s2 + f2, ratio *= s2 / d[c];
        }
        double op = sqrt(ratio) / (1 + exp(-(double)s.logit_opacity[i]));
        CHECK(fabs(g[3] - op) <= 1e-5 * op + 1e-7, "row %d: opacity %.7g, want %.7g", i, g[3], op);
        for (int c = 0; c < 3; c++) CHECK(g[c] == s.means[i * 3 + c], "row %d: mean", i);
        static const int rc[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
        for (int e = 0; e < 6; e++) {
            double want = 0, scale = d[0] + d[1] + d[2];
            for (int k = 0; k < 3; k++) want += R[rc[e][0]][k] * R[rc[e][1]][k] * d[k];
            CHECK(fabs(g[4 + e] - want) <= 1e-5 * scale, "row %d: Sigma[%d] %.7g, want %.7g", i, e, g[4 + e], want);
        }
        CHECK(g[10] == 0.f && g[11] == 0.f, "row %d: padding", i);
        for (int k = 0; k < texels * 4; k++) {
            double want = k < 3 * K ? s.sh[(size_t)i * K * 3 + k] : 0.0, got = half_value(sh[(size_t)row * texels * 4 + k]);
            CHECK(fabs(got - want) <= fabs(want) * (1.0 / 2048) + 1e-7, "row %d: SH %d is %.6g, want %.6g", i, k, got, want);
        }
        row++;
    }
    cs_bytes_free(&b);
    cs_splats_free(&s);
    return 0;
}
