/* optim: Adam over all parameter groups and graphdeco's learning-rate schedules. */
#ifndef CS_OPTIM_H
#define CS_OPTIM_H

#include "config.h"
#include "model.h"

/* graphdeco get_expon_lr_func: log-linear from init to final over max_steps, with delay. */
double cs_lr_expon(double init, double final, double delay_mult, int delay_steps, int max_steps, int step);
/* One Adam step on every group; the position lr is already scaled by the scene extent. */
int cs_adam_step(cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_config *cfg, double lr_mean);

#endif
