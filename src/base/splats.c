/* splats: the host-side Gaussian scene's storage (splats.h). */
#include "splats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const NAMES[CS_FMT_COUNT] = {"ply", "spz", "splat", "compressed-ply"};
static const char *const EXTS[CS_FMT_COUNT] = {".ply", ".spz", ".splat", ".compressed.ply"};

const char *cs_splat_format_name(cs_splat_format f) { return NAMES[f]; }
const char *cs_splat_format_ext(cs_splat_format f) { return EXTS[f]; }

int cs_splat_format_parse(const char *name, cs_splat_format *out)
{
    for (int f = 0; f < CS_FMT_COUNT; f++)
        if (!strcmp(name, NAMES[f])) return *out = (cs_splat_format)f, 0;
    return cs_fail("'%s' is not a format (ply, spz, splat, compressed-ply)", name);
}

int cs_splats_alloc(cs_splats *s, int n, int deg, int with_filter)
{
    memset(s, 0, sizeof *s);
    size_t N = n > 0 ? (size_t)n : 1;
    int K = CS_SH_COEFFS(deg);
    s->n = n;
    s->sh_degree = deg;
    s->means = calloc(N * 3, sizeof(float));
    s->log_scales = calloc(N * 3, sizeof(float));
    s->quats = calloc(N * 4, sizeof(float));
    s->logit_opacity = calloc(N, sizeof(float));
    s->sh = calloc(N * K * 3, sizeof(float));
    if (with_filter) s->filter_3d = calloc(N, sizeof(float));
    if (!s->means || !s->log_scales || !s->quats || !s->logit_opacity || !s->sh || (with_filter && !s->filter_3d)) {
        cs_splats_free(s);
        return cs_fail("out of host memory for %d Gaussians", n);
    }
    return 0;
}

int cs_splats_add_extra(cs_splats *s, const char *name, int width)
{
    if (s->n_extra >= CS_SPLATS_MAX_EXTRA) return cs_fail("more than %d extra Gaussian parameters", CS_SPLATS_MAX_EXTRA);
    if (width < 1 || strlen(name) >= sizeof s->extra[0].name) return cs_fail("extra Gaussian parameter '%s' of width %d", name, width);
    float *v = calloc((size_t)(s->n > 0 ? s->n : 1) * width, sizeof(float));
    if (!v) return cs_fail("out of host memory for %d Gaussians' %s", s->n, name);
    snprintf(s->extra[s->n_extra].name, sizeof s->extra[0].name, "%s", name);
    s->extra[s->n_extra].width = width;
    s->extra[s->n_extra++].values = v;
    return 0;
}

long cs_splats_count_nonfinite(const cs_splats *s, int *first)
{
    long bad = 0;
    int K3 = CS_SH_COEFFS(s->sh_degree) * 3;
    *first = -1;
    for (int i = 0; i < s->n; i++) {
        int ok = isfinite(s->logit_opacity[i]) && (!s->filter_3d || isfinite(s->filter_3d[i]));
        for (int k = 0; k < 3 && ok; k++) ok = isfinite(s->means[i * 3 + k]) && isfinite(s->log_scales[i * 3 + k]);
        for (int k = 0; k < 4 && ok; k++) ok = isfinite(s->quats[i * 4 + k]);
        for (int k = 0; k < K3 && ok; k++) ok = isfinite(s->sh[(size_t)i * K3 + k]);
        if (!ok && !bad++) *first = i;
    }
    return bad;
}

void cs_splats_free(cs_splats *s)
{
    free(s->means);
    free(s->log_scales);
    free(s->quats);
    free(s->logit_opacity);
    free(s->sh);
    free(s->filter_3d);
    for (int e = 0; e < s->n_extra; e++) free(s->extra[e].values);
    memset(s, 0, sizeof *s);
}

void cs_splats_baked_row(const cs_splats *s, int i, float log_scales[3], float *logit_opacity)
{
    float op = s->logit_opacity[i];
    for (int c = 0; c < 3; c++) log_scales[c] = s->log_scales[i * 3 + c];
    if (s->filter_3d) {
        /* mip-splatting's fused export: s' = sqrt(s^2 + f^2), o' = o * sqrt(prod s^2 / prod s'^2) */
        double f2 = (double)s->filter_3d[i] * s->filter_3d[i], ratio = 1.0;
        for (int c = 0; c < 3; c++) {
            double s2 = exp(2.0 * log_scales[c]);
            ratio *= s2 / (s2 + f2);
            log_scales[c] = (float)(0.5 * log(s2 + f2));
        }
        double o = 1.0 / (1.0 + exp(-(double)op)) * sqrt(ratio);
        o = o < 1e-12 ? 1e-12 : o > 1 - 1e-7 ? 1 - 1e-7 : o;
        op = (float)log(o / (1.0 - o));
    }
    *logit_opacity = op;
}

uint8_t cs_u8_round(float x)
{
    float r = roundf(x);
    return (uint8_t)(r < 0 ? 0 : r > 255 ? 255 : r);
}

float cs_logit_u8(int v)
{
    float a = v / 255.0f;
    const float eps = 0.5f / 255.0f;
    a = a < eps ? eps : a > 1 - eps ? 1 - eps : a;
    return logf(a / (1 - a));
}
