/* tune: the rasterizer tile size and the work-group size of each group of per-Gaussian
 * kernels, chosen per device by timing training passes on a synthetic view, and kept in a
 * small JSON file per device, driver, kernel sources and kernel options next to the kernel
 * binary cache (device.tune: auto | off | force). */
#ifndef CS_TUNE_H
#define CS_TUNE_H

#include <stdio.h>

#include "kernels.h"

#define CS_TUNE_TILES 2
#define CS_TUNE_WGS 4

typedef struct {
    int tile;
    size_t wg[CS_WG_COUNT];
    /* what the choice came from: measured now (with the medians below), the cache, or the
       built-in defaults */
    enum { CS_TUNED_DEFAULT, CS_TUNED_CACHE, CS_TUNED_MEASURED } source;
    char path[1200];                         /* the cache file ("" without a cache) */
    int tiles[CS_TUNE_TILES];                /* candidates, 0 where unused */
    double tile_ms[CS_TUNE_TILES];           /* median pass time per candidate, < 0: cannot run */
    size_t wgs[CS_TUNE_WGS];                 /* work-group candidates */
    double wg_ms[CS_WG_COUNT][CS_TUNE_WGS];  /* median stage time, < 0: over the device limit */
    int n_gaussians, width, height, reps;    /* the synthetic workload */
    double seconds;                          /* spent measuring */
} cs_tuning;

/* Builds the kernels for O with the tile and work-group sizes POLICY (CS_TUNE_*) gives: the
 * defaults (OFF), the cache or else the defaults (CACHED), the cache or else a measurement
 * that is then stored (AUTO), a new measurement (FORCE). The choice lands in K (k->opts.tile,
 * k->wg) and, when T is not NULL, in T. -1 with a message. */
int cs_kernels_build_tuned(cs_cl *cl, const cs_kernel_opts *o, int policy, cs_kernels *k, cs_tuning *t);
/* The policy for a run that only renders (eval, render): never measures. */
static inline int cs_tune_readonly(int policy) { return policy == CS_TUNE_OFF ? CS_TUNE_OFF : CS_TUNE_CACHED; }
/* One line: the choice and where it came from. */
void cs_tuning_summary(const cs_tuning *t, FILE *out);
/* The measurement table (candidates and medians), after a measurement. */
void cs_tuning_report(const cs_tuning *t, FILE *out);

#endif
