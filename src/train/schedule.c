/* schedule: the per-iteration plan of graphdeco's training loop (with gsplat's Adam-step
 * order as an option), a pure function of the settings and the iteration. */
#include "schedule.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "density.h"
#include "optim.h"
#include "util.h"

int cs_schedule_iterations(const cs_config *cfg, int is_cpu)
{
    return is_cpu && cfg->optim.iterations_on_cpu > 0 ? cfg->optim.iterations_on_cpu : cfg->optim.iterations;
}

int cs_res_factor(const cs_optim_cfg *o, int iter, int last)
{
    double until = o->res_schedule_until * last;
    if (o->res_schedule_start <= 1 || iter >= until) return 1;
    /* the scale falls geometrically from the start factor to 1 (the pixel count grows by a
       constant ratio); the factor is the next integer up, so 1 is reached at UNTIL */
    int f = (int)ceil(pow(o->res_schedule_start, 1.0 - iter / until) - 1e-9);
    return f < 1 ? 1 : f;
}

int cs_prune_iteration(const cs_config *cfg, int last)
{
    /* once, before the last iteration (whose model is the result); it scores as the error
       views do, so a strategy without those (MCMC, whose relocation keeps every row in use)
       has none */
    const cs_densify_cfg *d = &cfg->densify;
    int at = d->prune_at > 0 ? d->prune_at : d->until;
    return d->prune_fraction > 0 && cs_density_ops_of(d->strategy)->scores_errors && at > 0 && at < last ? at : 0;
}

cs_step_plan cs_schedule_at(const cs_config *cfg, int iter, int last, double extent)
{
    const cs_optim_cfg *o = &cfg->optim;
    const cs_densify_cfg *d = &cfg->densify;
    cs_step_plan p = {0};
    p.active_sh = (iter - 1) / o->sh_increase_interval;
    if (p.active_sh > cfg->model.sh_degree) p.active_sh = cfg->model.sh_degree;
    p.res_factor = cs_res_factor(o, iter, last);
    p.position_lr = cs_lr_expon(o->position_lr_init * extent, o->position_lr_final * extent, o->position_lr_delay_mult,
                                0, o->position_lr_max_steps, iter);
    /* the strategy's facts (density.c): MCMC (the paper's train.py, gsplat's MCMCStrategy)
       refines at the same iterations with no gradient statistics, no size prune and no
       opacity reset */
    const cs_density_ops *ops = cs_density_ops_of(d->strategy);
    if (iter < d->until) {
        p.densify_stats = ops->uses_stats;
        p.densify = iter > d->from && iter % d->interval == 0;
        /* the budget's line: linear from densify.from to densify.until */
        double u = d->until > d->from ? (double)(iter - d->from) / (d->until - d->from) : 1.0;
        p.budget_line = u < 0 ? 0 : u > 1 ? 1 : u;
        p.row_budget = cs_budget_rows(d->budget, p.budget_line);
        p.densify_check_size = ops->prunes_by_size && p.densify && iter > d->opacity_reset_interval;
        p.filter3d = p.densify && cfg->model.filter_3d;
        p.reset_opacity = ops->resets_opacity && (iter % d->opacity_reset_interval == 0 ||
                                                  (cfg->data.white_background && iter == d->from));
    } else {
        p.filter3d = cfg->model.filter_3d && iter % 100 == 0 && iter < last - 100;
    }
    /* a prune keeps each row's 3D filter, which depends on the row alone */
    p.prune_importance = iter == cs_prune_iteration(cfg, last);
    /* gsplat steps Adam on every iteration, then densifies the stepped parameters; graphdeco
       replaces its tensors before the step, so it takes no step on densification iterations
       (optim.step_on_densify false). H100, south_building 7k: 22.11 dB over 35 seeds with the
       step, 22.01 over 45 without. graphdeco resets opacity before the step and skips the step
       for the new opacity tensor; resetting after the step gives the same min(o, 0.01) and zero
       moments. */
    p.step_before = ops->adam_before_refine && o->step_on_densify;
    /* MCMC: both references replace every parameter tensor when they relocate, which drops
       its gradient, so no Adam step is taken on refinement iterations */
    p.step_after = !p.step_before && !p.densify;
    p.trim_pool = p.densify || p.prune_importance || iter % cfg->memory.flush_interval == 0;
    bool is_last = iter == last;
    p.log = iter % cfg->log.interval == 0 || is_last;
    p.histograms = cfg->log.histogram_interval > 0 && iter % cfg->log.histogram_interval == 0;
    p.checkpoint = cs_config_has_mark(cfg->output.checkpoint_iterations, cfg->output.n_checkpoint_iterations, iter);
    p.checkpoint_periodic = !p.checkpoint && !is_last && cfg->output.checkpoint_interval > 0 &&
                            iter % cfg->output.checkpoint_interval == 0;
    p.evaluate = is_last || cs_config_has_mark(cfg->eval.test_iterations, cfg->eval.n_test_iterations, iter);
    p.save = is_last || cs_config_has_mark(cfg->output.save_iterations, cfg->output.n_save_iterations, iter);
    return p;
}

int cs_view_order_init(cs_view_order *o, int n, int seed)
{
    memset(o, 0, sizeof *o);
    if (n < 1) return cs_fail("no training views");
    o->perm = malloc(sizeof(int) * (size_t)n);
    if (!o->perm) return cs_fail("out of host memory (%d views)", n);
    o->n = n, o->seed = seed, o->epoch = -1;
    return 0;
}

int cs_view_for_iteration(cs_view_order *o, int iter)
{
    int epoch = (iter - 1) / o->n, pos = (iter - 1) % o->n;
    if (epoch != o->epoch) {
        for (int i = 0; i < o->n; i++) o->perm[i] = i;
        for (int i = o->n - 1; i > 0; i--) {
            int j = (int)(cs_rand_uniform(((uint64_t)o->seed << 32) ^ (uint64_t)epoch, (uint64_t)i) * (i + 1));
            if (j > i) j = i;
            int tmp = o->perm[i];
            o->perm[i] = o->perm[j];
            o->perm[j] = tmp;
        }
        o->epoch = epoch;
    }
    return o->perm[pos];
}

void cs_view_order_free(cs_view_order *o)
{
    free(o->perm);
    memset(o, 0, sizeof *o);
}
