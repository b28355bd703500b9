/* density: density control as one ops table, in the way redis's ae.c picks one backend:
 * graphdeco's adaptive density control (densify.h) and MCMC (mcmc.h) are its two rows, the
 * configuration picks one row once (cs_density_ops_of), and the schedule, the memory plan and
 * the trainer call through it or read its facts, never testing which one it is. */
#ifndef CS_DENSITY_H
#define CS_DENSITY_H

#include "densify.h"
#include "mcmc.h"

/* A strategy's state: its scratch (and, for either, the 3D filter's cameras in d). */
typedef struct cs_density {
    const struct cs_density_ops *ops;
    cs_densifier d;
    cs_mcmc mc;
} cs_density;

/* What a refinement needs to know. */
typedef struct {
    const cs_densify_cfg *cfg;
    double extent;       /* scene extent (graphdeco's clone / split scale and world-size prune) */
    int check_size;      /* graphdeco: screen and world size prune on */
    int max_rows;        /* graphdeco: the Gaussians the plan allows; MCMC: the cap */
    unsigned seed;
} cs_refine_args;

typedef struct cs_density_ops {
    const char *name;
    /* facts the schedule reads */
    int uses_stats;        /* gradient statistics after each backward */
    int resets_opacity;    /* opacity resets at densify.opacity_reset_interval */
    int prunes_by_size;    /* the screen / world size prune after the first reset */
    int adam_before_refine; /* optim.step_on_densify may step Adam before a refinement (graphdeco);
                              0: no step on a refinement iteration (MCMC replaces every tensor) */
    int refines_after_marks; /* the refinement of an evaluated or saved iteration comes after the
                              evaluation and the save (graphdeco's clones and splits change the
                              picture until the next steps settle them); 0: before them (MCMC's
                              relocation keeps the picture, and its noise follows it as in gsplat) */
    int scores_errors;     /* densify.error_views scores its candidates (cs_error_score_view) */
    /* the memory plan: FIXED_CAP: every row is allocated for the cap at the start, plus
       scratch_per_row bytes a row of the cap (0: rows grow as densification adds them) */
    int fixed_cap;
    int row_limit;         /* the most rows the strategy can handle (0: no limit of its own) */
    size_t (*scratch_per_row)(void);
    /* Allocates the strategy's scratch for a run whose model M may hold CAP rows (the plan's
       cap, or 0); -1 with a message. */
    int (*start)(cs_density *s, cs_cl *cl, cs_model *m, int cap);
    /* One refinement on a refinement iteration; -1 with a message. */
    int (*refine)(cs_density *s, cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_refine_args *a);
    /* After the optimizer's step (MCMC's position noise at LR x densify.noise_lr), or NULL. */
    int (*after_step)(cs_density *s, cs_cl *cl, const cs_kernels *k, cs_model *m, double lr, double noise_lr,
                      unsigned seed);
} cs_density_ops;

/* The row of densify.strategy STRATEGY (CS_STRATEGY_*). */
const cs_density_ops *cs_density_ops_of(int strategy);
/* Frees every strategy's scratch in S (either may be empty). */
void cs_density_free(cs_density *s, cs_cl *cl);

#endif
