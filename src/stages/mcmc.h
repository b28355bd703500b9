/* mcmc: the MCMC densification strategy (3DGS as Markov Chain Monte Carlo, Kheradmand et al.,
 * NeurIPS 2024; gsplat's MCMCStrategy) on the device, and the opacity / scale L1
 * regularisers' gradients. Every refinement relocates the dead rows (opacity <= min_opacity)
 * onto live rows drawn in proportion to opacity, then adds min(cap, 1.05 n) - n rows drawn
 * the same way; each drawn row and its copies share its opacity and scale by the paper's
 * correction, and every touched row's Adam moments are reset. The sampling scratch is sized
 * for the cap once (CS_MEM_DENSIFY); nothing grows during training. */
#ifndef CS_MCMC_H
#define CS_MCMC_H

#include "kernels.h"
#include "model.h"

typedef struct {
    cs_buf w, cdf, sums;     /* weights, their per-block inclusive scan, block totals (scanned) */
    cs_buf dead, offsets;    /* dead flags and their exclusive scan */
    cs_buf list, samples;    /* dead rows in order; drawn rows */
    cs_buf counts;           /* draws per row */
    cs_buf scan_tmp;         /* cs_scan's block sums */
    int rows;
} cs_mcmc;

/* Device bytes of the sampling scratch per row of the cap (for the memory plan). */
size_t cs_mcmc_bytes_per_row(void);
/* Allocates the scratch for CAP rows. -1 with a message. */
int cs_mcmc_init(cs_cl *cl, cs_mcmc *s, int cap);
/* One refinement of M (whose capacity must hold CAP rows): relocation, then growth towards CAP.
 * Blocks once to read the number of dead rows. RELOCATED and ADDED report what it did. */
int cs_mcmc_refine(cs_cl *cl, const cs_kernels *k, cs_mcmc *s, cs_model *m, int cap, double min_opacity,
                   unsigned seed, int *relocated, int *added);
/* Position noise: lr_position x noise_lr (SCALE) x the opacity gate x Sigma z. Enqueued. */
int cs_mcmc_noise(cs_cl *cl, const cs_kernels *k, cs_model *m, double scale, unsigned seed);
/* Adds the gradients of OPACITY_REG x mean opacity + SCALE_REG x mean scale (over the 3N
 * scale values) to the geometry gradients. Enqueued; a no-op when both are 0. */
int cs_regularize(cs_cl *cl, const cs_kernels *k, cs_model *m, double opacity_reg, double scale_reg);
/* The regularisers' value for the host (tests, logs): from parameters of N rows. */
double cs_regularizer_value(const float *logit_opacity, const float *log_scales, int n, double opacity_reg,
                            double scale_reg);
void cs_mcmc_free(cs_cl *cl, cs_mcmc *s);

#endif
