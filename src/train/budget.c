/* budget: densify.budget_momentum's target (see budget.h). */
#include "budget.h"

#include <math.h>

#include "outputs.h"

static int capped(const cs_densify_cfg *d, double target, int max_rows)
{
    if (d->budget > 0 && target > d->budget) target = d->budget;
    if (max_rows > 0 && target > max_rows) target = max_rows;
    /* and what a checkpoint's header may hold, so a run's checkpoints always read back */
    return target > CS_CKPT_MAX_GAUSSIANS ? CS_CKPT_MAX_GAUSSIANS : (int)target;
}

int cs_budget_start(const cs_densify_cfg *d, int initial, int max_rows)
{
    if (!(d->budget_momentum > 0) || d->strategy != CS_STRATEGY_DEFAULT || initial < 1) return 0;
    return capped(d, floor((double)initial * (1.0 + d->budget_momentum)), max_rows);
}

int cs_budget_update(const cs_densify_cfg *d, int target, long wanted, int max_rows)
{
    if (target <= 0) return 0;
    double w = wanted < 0 ? 0 : wanted > target ? target : (double)wanted;
    double next = floor(CS_BUDGET_KEEP * target + w);
    return capped(d, next > target ? next : target, max_rows);
}

int cs_budget_rows(int target, double fraction)
{
    if (target <= 0) return 0;
    double f = fraction < 0 ? 0 : fraction > 1 ? 1 : fraction;
    return (int)ceil(target * f);
}
