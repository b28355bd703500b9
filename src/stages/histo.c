/* histo: device histograms of the model's per-Gaussian quantities (histo.h). */
#include "histo.h"

#include <math.h>
#include <string.h>

#include "util.h"

const char *const cs_histo_names[CS_HISTO_COUNT] = {"opacity", "scale_max", "sh_rest_norm", "densify_grad"};

#define PART_RANGE_FLOATS (CS_HISTO_GROUPS * 4)
#define PART_BYTES (sizeof(float) * PART_RANGE_FLOATS + sizeof(cl_uint) * CS_HISTO_GROUPS * CS_HISTO_BUCKETS)

/* min, max, sum and sum of squares over the groups' partials */
static int range(cs_cl *cl, const cs_kernels *k, const cs_model *m, int q, cs_buf *part, cs_histo *h)
{
    size_t g = CS_HISTO_GROUPS * CS_HISTO_WG, l = CS_HISTO_WG;
    float p[PART_RANGE_FLOATS];
    int n = m->n;
    if (cs_cl_run(cl, k->histo_range, -1, 1, &g, &l, CS_ARG(n), CS_ARG(q), CS_ARG(m->geo.mem), CS_ARG(m->sh.mem),
                  CS_ARG(m->stats.mem), CS_ARG(part->mem)) ||
        cs_buf_read(cl, part, 0, sizeof p, p))
        return -1;
    h->min = INFINITY, h->max = -INFINITY, h->sum = 0, h->sum_squares = 0;
    for (int i = 0; i < CS_HISTO_GROUPS; i++) {
        h->min = fmin(h->min, p[i * 4]), h->max = fmax(h->max, p[i * 4 + 1]);
        h->sum += p[i * 4 + 2], h->sum_squares += p[i * 4 + 3];
    }
    return 0;
}

int cs_histo_compute(cs_cl *cl, const cs_kernels *k, const cs_model *m, int q, cs_buf *part, cs_histo *h)
{
    memset(h, 0, sizeof *h);
    h->n = m->n;
    if (!part->mem && cs_buf_alloc(cl, part, CS_MEM_OTHER, PART_BYTES, "histogram partials")) return -1;
    if (m->n == 0) return 0;
    if (range(cl, k, m, q, part, h)) return -1;
    if (!isfinite(h->min) || !isfinite(h->max))
        return cs_fail("histogram of %s: values are not finite (min %g, max %g)", cs_histo_names[q], h->min, h->max);
    h->log_spaced = q == CS_HISTO_SCALE && h->min > 0;
    double lo = h->log_spaced ? log(h->min) : h->min, hi = h->log_spaced ? log(h->max) : h->max;
    if (!(hi > lo)) hi = lo + 1e-6 * fmax(1.0, fabs(lo)); /* all equal: one narrow range */
    float flo = (float)lo, fhi = (float)hi;
    int n = m->n, ls = h->log_spaced;
    size_t g = CS_HISTO_GROUPS * CS_HISTO_WG, l = CS_HISTO_WG;
    cl_uint c[CS_HISTO_GROUPS * CS_HISTO_BUCKETS];
    if (cs_cl_run(cl, k->histo_count, -1, 1, &g, &l, CS_ARG(n), CS_ARG(q), CS_ARG(flo), CS_ARG(fhi), CS_ARG(ls),
                  CS_ARG(m->geo.mem), CS_ARG(m->sh.mem), CS_ARG(m->stats.mem), CS_ARG(part->mem)) ||
        cs_buf_read(cl, part, sizeof(float) * PART_RANGE_FLOATS, sizeof c, c))
        return -1;
    for (int b = 0; b < CS_HISTO_BUCKETS; b++) {
        double t = lo + (hi - lo) * (b + 1) / CS_HISTO_BUCKETS;
        h->limit[b] = ls ? exp(t) : t;
        for (int i = 0; i < CS_HISTO_GROUPS; i++) h->count[b] += c[i * CS_HISTO_BUCKETS + b];
    }
    return 0;
}
