/* schedule: what the trainer does at one iteration, as a pure function of the settings and
 * the iteration (graphdeco train.py's inline conditions, gathered in one place). No device,
 * no state: the unit tests call it for any iteration without training. */
#ifndef CS_SCHEDULE_H
#define CS_SCHEDULE_H

#include <stdbool.h>

#include "config.h"

typedef struct {
    int active_sh;          /* SH degree the renderer uses */
    int res_factor;         /* the view is trained at 1/res_factor of its width and height */
    double position_lr;     /* Adam lr of the means (times the scene extent) */
    bool step_before;       /* Adam step before the densification work (gsplat's order) */
    bool densify_stats;     /* accumulate view-space gradient statistics */
    bool densify;           /* a refinement of the density strategy (clone / split / prune, or MCMC's) */
    int row_budget;         /* the Gaussians a refinement may leave (densify.budget's curve; 0: no limit) */
    double budget_line;     /* how far along densify.from .. densify.until (0-1): the share of a budget's target
                               a refinement may leave (densify.budget, densify.budget_momentum) */
    bool densify_check_size;/* with the screen / world size prune (after the first opacity reset) */
    bool filter3d;          /* recompute the mip 3D filter */
    bool prune_importance;  /* densify.prune_fraction's prune, after this iteration's refinement */
    bool step_after;        /* Adam step after the densification work (graphdeco's order) */
    bool reset_opacity;     /* opacity <- min(opacity, 0.01), after the marks that save and report */
    bool trim_pool;         /* release the scratch pools */
    bool log;               /* progress line and train_log.jsonl */
    bool histograms;        /* TensorBoard histograms (log.histogram_interval) */
    bool checkpoint;        /* an output.checkpoint_iterations mark: kept */
    bool checkpoint_periodic;/* output.checkpoint_interval: replaces the older periodic ones */
    bool evaluate;
    bool save;              /* PLY */
} cs_step_plan;

/* The plan of iteration ITER (1-based) of a run of LAST iterations over a scene of EXTENT. */
cs_step_plan cs_schedule_at(const cs_config *cfg, int iter, int last, double extent);
/* The iteration of densify.prune_fraction's prune in a run of LAST iterations (densify.prune_at,
   or densify.until when 0), or 0 when none: off, a strategy without it, or not before LAST. */
int cs_prune_iteration(const cs_config *cfg, int last);
/* The resolution schedule's factor at ITER of LAST (optim.res_schedule_*): the view is trained
   at 1/factor of its size; 1 when off or past the schedule. */
int cs_res_factor(const cs_optim_cfg *o, int iter, int last);
/* Training iterations on this device: optim.iterations_on_cpu on a CPU when set. */
int cs_schedule_iterations(const cs_config *cfg, int is_cpu);

/* The training view of each iteration: a shuffled order per epoch, a pure function of (seed,
 * epoch), so a resumed run continues it with no random state to checkpoint. */
typedef struct {
    int n, seed, epoch; /* epoch: the one in perm, -1 none */
    int *perm;
} cs_view_order;
/* An order over N training views. -1 with a message (out of memory, or N < 1). */
int cs_view_order_init(cs_view_order *o, int n, int seed);
/* The training view (0 .. n-1) of iteration ITER (1-based; ITER >= 1). */
int cs_view_for_iteration(cs_view_order *o, int iter);
/* Frees the permutation. */
void cs_view_order_free(cs_view_order *o);

#endif
