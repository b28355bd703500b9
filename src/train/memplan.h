/* memplan: the device memory a training run will need, planned before anything is allocated:
 * the budget, bytes per Gaussian (model rows plus the renderer's per-Gaussian and per-pair
 * scratch), the fixed part (per-pixel scratch of the largest view, resident images), the image
 * residency the budget allows, and so the largest Gaussian count. Sizes come from the modules
 * that own the buffers (model_layout, render, loss, image_store), never from copies. */
#ifndef CS_MEMPLAN_H
#define CS_MEMPLAN_H

#include <jansson.h>
#include <stdio.h>

#include "config.h"
#include "dataset.h"
#include "kernels.h"

/* Pairs per Gaussian the plan assumes. Calibrated on the H100 (south_building grown to 6M
 * Gaussians: 2.28 GB of scratch, 380 B per Gaussian); 8 made the plan 4% optimistic. */
#define CS_PLAN_PAIRS_PER_GAUSSIAN 14

typedef struct {
    size_t budget;                /* bytes the accounting allocator allows */
    cs_row_bytes rows;            /* the model's bytes per Gaussian by category */
    size_t bytes_per_gaussian;    /* sum of rows */
    size_t scratch_per_gaussian;  /* the renderer's, at CS_PLAN_PAIRS_PER_GAUSSIAN pairs */
    size_t fixed_bytes;           /* per-pixel scratch of the largest view + resident images + LPIPS */
    size_t lpips_bytes;           /* LPIPS's weights and scratch (0: no LPIPS in this run) */
    size_t max_pixels, max_tiles; /* the largest view's */
    size_t image_bytes;           /* the training images if all were on the device */
    int residency;                /* CS_RES_DEVICE / HOST / LAZY (auto resolved) */
    char residency_why[256];      /* the choice and its reason, for the user */
    int max_gaussians;
    int cap;                      /* densify.strategy mcmc: the Gaussian budget allocated at the start */
    size_t peak_bytes;            /* mcmc: the planned peak (fixed + cap x (rows + scratch)) */
} cs_mem_plan;

/* Plans the run of CFG (budget, cap; densify.strategy mcmc: every row and its scratch allocated
 * for the cap, no spare; residency; LPIPS's scratch when its weights are found and there are
 * views to evaluate) on SCENE's training views of SPLIT, with the kernels' options O, on a device
 * of DEVICE_BYTES. Residency auto: device when the decoded images take at most a third of the
 * budget, else host when they take at most half of the host memory available now
 * (/proc/meminfo), else lazy. */
void cs_mem_plan_make(const cs_config *cfg, const cs_kernel_opts *o, size_t device_bytes, const cs_scene *scene,
                      const cs_split *split, cs_mem_plan *p);
/* The pairs the plan reserves for the renderer of an MCMC run: the cap at
 * CS_PLAN_PAIRS_PER_GAUSSIAN with CS_PAIR_MARGIN. */
size_t cs_mem_plan_pairs(const cs_mem_plan *p);
/* Bytes of a run at GAUSSIANS under plan P: the fixed part, the rows with the model's x1.5
 * spare capacity, and the renderer's scratch (what max_gaussians is computed from). */
size_t cs_mem_plan_bytes_at(const cs_mem_plan *p, int gaussians);
/* Two lines for the user: the plan, and the images with their residency and its reason. */
void cs_mem_plan_print(const cs_mem_plan *p, FILE *out);
/* {"bytes_per_gaussian", "fixed_bytes", "max_gaussians", "budget_bytes"} for memory.json. */
json_t *cs_mem_plan_json(const cs_mem_plan *p);

#endif
