/* mcmc: launchers for cl/mcmc.cl (see mcmc.h). */
#include "mcmc.h"

#include <math.h>
#include <string.h>

#include "sort.h"
#include "util.h"

#define WG 256

size_t cs_mcmc_bytes_per_row(void)
{
    /* w, cdf, dead, offsets, list, samples, counts: 4 bytes each (block sums are 1/1024) */
    return 7 * 4 + 1;
}

int cs_mcmc_init(cs_cl *cl, cs_mcmc *s, int cap)
{
    memset(s, 0, sizeof *s);
    if (cap > CS_MCMC_MAX_ROWS) return cs_fail("densify.cap_max %d is over the MCMC limit of %d", cap, CS_MCMC_MAX_ROWS);
    size_t n = (size_t)(cap > 0 ? cap : 1), nb = (n + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
    s->rows = (int)n;
    cs_buf *rows[] = {&s->w, &s->cdf, &s->dead, &s->offsets, &s->list, &s->samples, &s->counts};
    const char *names[] = {"mcmc weights", "mcmc cdf", "mcmc dead flags", "mcmc dead offsets", "mcmc dead list",
                           "mcmc samples", "mcmc draw counts"};
    for (int i = 0; i < 7; i++)
        if (cs_buf_alloc(cl, rows[i], CS_MEM_DENSIFY, n * 4, names[i])) return -1;
    size_t scan_need = 1; /* cs_scan's block sums of every level */
    for (size_t m = n;;) {
        size_t b = (m + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
        scan_need += b;
        if (b == 1) break;
        m = b;
    }
    s->scan_tmp.cat = CS_MEM_DENSIFY;
    return cs_buf_alloc(cl, &s->sums, CS_MEM_DENSIFY, nb * 4, "mcmc block sums") ||
                   cs_buf_reserve(cl, &s->scan_tmp, scan_need * 4, 0, "mcmc scan block sums")
               ? -1
               : 0;
}

/* Draws N_SAMPLES rows of the first N in proportion to s->w into s->samples, counting each
   row's draws in s->counts (zeroed first). */
static int draw(cs_cl *cl, const cs_kernels *k, cs_mcmc *s, int n, int n_samples, unsigned seed)
{
    int nb = (n + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
    size_t gb = (size_t)nb * CS_SORT_WG, lb = CS_SORT_WG, one = CS_SORT_WG, l = WG, gn = (size_t)n_samples;
    cl_uint z = 0;
    return cs_buf_fill(cl, &s->counts, 0, (size_t)n * 4, &z, 4) ||
           cs_cl_run(cl, k->mcmc_block_cdf, CS_STAGE_DENSIFY, 1, &gb, &lb, CS_ARG(n), CS_ARG(s->w.mem),
                     CS_ARG(s->cdf.mem), CS_ARG(s->sums.mem)) ||
           cs_cl_run(cl, k->mcmc_sums_cdf, CS_STAGE_DENSIFY, 1, &one, &lb, CS_ARG(nb), CS_ARG(s->sums.mem)) ||
           cs_cl_run(cl, k->mcmc_sample, CS_STAGE_DENSIFY, 1, &gn, &l, CS_ARG(n_samples), CS_ARG(seed), CS_ARG(n),
                     CS_ARG(s->w.mem), CS_ARG(s->cdf.mem), CS_ARG(s->sums.mem), CS_ARG(nb), CS_ARG(s->samples.mem), CS_ARG(s->counts.mem))
               ? -1
               : 0;
}

/* The drawn rows take the corrected opacity and scale; their copies go to the rows in s->list
   (FIRST_NEW < 0) or to FIRST_NEW onwards. */
static int spread(cs_cl *cl, const cs_kernels *k, cs_mcmc *s, cs_model *m, int n_rows, int n_samples, int first_new,
                  float min_op)
{
    size_t g = (size_t)n_rows, l = WG;
    cs_buf *dst = first_new >= 0 ? &s->samples : &s->list;
    return cs_cl_run(cl, k->mcmc_update_sources, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n_rows), CS_ARG(m->geo.mem),
                     CS_ARG(s->counts.mem), CS_ARG(min_op)) ||
                   cs_model_reset_rows(cl, k, m, n_samples, &s->samples) ||
                   cs_model_new_rows(cl, k, m, n_samples, &s->samples, dst, first_new)
               ? -1
               : 0;
}

/* Relocates the dead rows; *RELOCATED their count. */
static int relocate(cs_cl *cl, const cs_kernels *k, cs_mcmc *s, cs_model *m, float min_op, unsigned seed, int *relocated)
{
    int n = m->n;
    size_t g = (size_t)n, l = WG;
    int mark = 1;
    if (cs_cl_run(cl, k->mcmc_weights, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(m->geo.mem), CS_ARG(min_op),
                  CS_ARG(mark), CS_ARG(s->w.mem), CS_ARG(s->dead.mem)))
        return -1;
    CS_CHECK(clEnqueueCopyBuffer(cl->queue, s->dead.mem, s->offsets.mem, 0, 0, (size_t)n * 4, 0, NULL, NULL));
    cs_sort_scratch sc = {0};
    sc.tmp = s->scan_tmp;
    int r = cs_scan(cl, k, &sc, &s->offsets, (unsigned)n, CS_STAGE_DENSIFY);
    s->scan_tmp = sc.tmp;
    unsigned last_off = 0, last_dead = 0;
    if (r || cs_buf_read(cl, &s->offsets, (size_t)(n - 1) * 4, 4, &last_off) ||
        cs_buf_read(cl, &s->dead, (size_t)(n - 1) * 4, 4, &last_dead))
        return -1;
    int n_dead = (int)(last_off + last_dead);
    *relocated = n_dead;
    if (n_dead == 0 || n_dead == n) return 0; /* nothing dead, or nothing alive to copy */
    return cs_cl_run(cl, k->mcmc_list_dead, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(s->dead.mem),
                     CS_ARG(s->offsets.mem), CS_ARG(s->list.mem)) ||
                   draw(cl, k, s, n, n_dead, seed) || spread(cl, k, s, m, n, n_dead, -1, min_op)
               ? -1
               : 0;
}

int cs_mcmc_refine(cs_cl *cl, const cs_kernels *k, cs_mcmc *s, cs_model *m, int cap, double min_opacity,
                   unsigned seed, int *relocated, int *added)
{
    *relocated = *added = 0;
    if (m->n == 0) return 0;
    if (cap > m->capacity || cap > s->rows)
        return cs_fail("MCMC cap %d is past the model's capacity %d or the scratch's %d rows", cap, m->capacity, s->rows);
    float min_op = (float)min_opacity;
    if (relocate(cl, k, s, m, min_op, cs_hash_u32(seed ^ 0x52454cu), relocated)) return -1;
    int n = m->n, target = (int)fmin((double)cap, floor(1.05 * n));
    if (target <= n) return 0;
    size_t g = (size_t)n, l = WG;
    int mark = 0;
    if (cs_cl_run(cl, k->mcmc_weights, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(m->geo.mem), CS_ARG(min_op),
                  CS_ARG(mark), CS_ARG(s->w.mem), CS_ARG(s->dead.mem)) ||
        draw(cl, k, s, n, target - n, cs_hash_u32(seed ^ 0x414444u)) ||
        spread(cl, k, s, m, n, target - n, n, min_op))
        return -1;
    m->n = target;
    *added = target - n;
    return 0;
}

int cs_mcmc_noise(cs_cl *cl, const cs_kernels *k, cs_model *m, double scale, unsigned seed)
{
    if (m->n == 0 || scale == 0) return 0;
    size_t g = (size_t)m->n, l = WG;
    float sc = (float)scale;
    return cs_cl_run(cl, k->mcmc_noise, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(m->n), CS_ARG(m->geo.mem), CS_ARG(sc),
                     CS_ARG(seed));
}

int cs_regularize(cs_cl *cl, const cs_kernels *k, cs_model *m, double opacity_reg, double scale_reg)
{
    if (m->n == 0 || (opacity_reg == 0 && scale_reg == 0)) return 0;
    size_t g = (size_t)m->n, l = WG;
    float ow = (float)(opacity_reg / m->n), sw = (float)(scale_reg / (3.0 * m->n));
    return cs_cl_run(cl, k->regularize_grad, CS_STAGE_ADAM, 1, &g, &l, CS_ARG(m->n), CS_ARG(m->geo.mem),
                     CS_ARG(m->v_geo.mem), CS_ARG(ow), CS_ARG(sw));
}

double cs_regularizer_value(const float *logit_opacity, const float *log_scales, int n, double opacity_reg,
                            double scale_reg)
{
    double so = 0, ss = 0;
    for (int i = 0; i < n; i++) {
        so += 1.0 / (1.0 + exp(-(double)logit_opacity[i]));
        for (int a = 0; a < 3; a++) ss += exp((double)log_scales[i * 3 + a]);
    }
    return n ? opacity_reg * so / n + scale_reg * ss / (3.0 * n) : 0;
}

void cs_mcmc_free(cs_cl *cl, cs_mcmc *s)
{
    cs_buf *all[] = {&s->w, &s->cdf, &s->sums, &s->dead, &s->offsets, &s->list, &s->samples, &s->counts, &s->scan_tmp};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) cs_buf_free(cl, all[i]);
    s->rows = 0;
}
