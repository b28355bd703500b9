/* optim: Adam over all parameter groups and graphdeco's learning-rate schedules. */
#ifndef CS_OPTIM_H
#define CS_OPTIM_H

#include "config.h"
#include "model.h"

/* graphdeco get_expon_lr_func: log-linear from init to final over max_steps, with delay. */
double cs_lr_expon(double init, double final, double delay_mult, int delay_steps, int max_steps, int step);
/* Adam learning rates of the parameter groups other than the means. */
typedef struct {
    double feature, feature_rest, opacity, scaling, rotation;
} cs_adam_lrs;
/* The learning rates the optimizer settings give. */
cs_adam_lrs cs_adam_lrs_of(const cs_optim_cfg *o);
/* Enqueues one Adam step on every group (does not block); LR_MEAN, the position lr, is
 * already scaled by the scene extent. Increments m->step. VISIBLE: NULL steps every row (dense);
 * else the view's radii (one int a row, as the projection wrote them for these m->n rows) and
 * only rows with a positive radius are stepped, the others keep parameters and moments
 * (optim.sparse_adam). The bias correction follows m->step either way. */
int cs_adam_step(cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_adam_lrs *lrs, double lr_mean,
                 const cs_buf *visible);

#endif
