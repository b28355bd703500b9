/* density: the two density-control strategies as rows of one ops table. */
#include "density.h"

#include "util.h"

/* ---- graphdeco's adaptive density control -------------------------------------------------- */

static size_t no_scratch(void) { return 0; }

static int adc_start(cs_density *s, cs_cl *cl, cs_model *m, int cap)
{
    (void)s, (void)cl, (void)m, (void)cap;
    return 0;
}

static int adc_refine(cs_density *s, cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_refine_args *a)
{
    return cs_densify_step(cl, k, &s->d, m, a->cfg, a->extent, a->check_size, a->max_rows, a->seed);
}

/* ---- MCMC ---------------------------------------------------------------------------------- */

static int mcmc_start(cs_density *s, cs_cl *cl, cs_model *m, int cap)
{
    return cs_model_reserve(cl, m, cap) || cs_mcmc_init(cl, &s->mc, cap) ? -1 : 0;
}

static int mcmc_refine(cs_density *s, cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_refine_args *a)
{
    int relocated, added;
    return cs_mcmc_refine(cl, k, &s->mc, m, a->max_rows, a->cfg->min_opacity, a->seed, &relocated, &added);
}

static int mcmc_after_step(cs_density *s, cs_cl *cl, const cs_kernels *k, cs_model *m, double lr, double noise_lr,
                           unsigned seed)
{
    (void)s;
    return cs_mcmc_noise(cl, k, m, lr * noise_lr, seed);
}

/* ---- the table ----------------------------------------------------------------------------- */

static const cs_density_ops rows[] = {
    [CS_STRATEGY_DEFAULT] = {"graphdeco", 1, 1, 1, 1, 1, 1, 0, 0, no_scratch, adc_start, adc_refine, NULL},
    [CS_STRATEGY_MCMC] = {"mcmc", 0, 0, 0, 0, 0, 0, 1, CS_MCMC_MAX_ROWS, cs_mcmc_bytes_per_row, mcmc_start, mcmc_refine, mcmc_after_step},
};

const cs_density_ops *cs_density_ops_of(int strategy)
{
    return strategy == CS_STRATEGY_MCMC ? &rows[CS_STRATEGY_MCMC] : &rows[CS_STRATEGY_DEFAULT];
}

void cs_density_free(cs_density *s, cs_cl *cl)
{
    cs_densifier_free(cl, &s->d);
    cs_mcmc_free(cl, &s->mc);
}
