/* tuning: the rasterizer tile size and per-group work-group sizes chosen for a device, as
 * stored in a small JSON file per device, driver, kernel sources and kernel options next to
 * the kernel binary cache (format CS_TUNING_FORMAT), and building the kernels with them.
 * This module only reads and writes choices; tune.h measures them. */
#ifndef CS_TUNING_H
#define CS_TUNING_H

#include <stdio.h>

#include "kernels.h"

#define CS_TUNING_FORMAT 1
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

/* Builds the kernels for O with the stored choice (POLICY CS_TUNE_CACHED) or the defaults
 * (CS_TUNE_OFF, or no usable file): 16x16 tiles (8x8 where loops stop early, cl_runtime.h),
 * CS_WG_DEFAULT groups. Never measures. The
 * choice lands in K and, when T is not NULL, in T. -1 with a message. */
int cs_kernels_build_stored(cs_cl *cl, const cs_kernel_opts *o, int policy, cs_kernels *k, cs_tuning *t);
/* The policy for a run that only renders (eval, render): never measures. */
static inline int cs_tune_readonly(int policy) { return policy == CS_TUNE_OFF ? CS_TUNE_OFF : CS_TUNE_CACHED; }

/* The tuning file for O on CL's device ("" when the kernel cache is off). -1 with a message. */
int cs_tuning_path(cs_cl *cl, const cs_kernel_opts *o, char *out, size_t n);
/* 0 with T's tile and sizes from PATH; 1 when absent or unusable (a warning says why). */
int cs_tuning_load(const char *path, cs_tuning *t);
/* Writes T (choice and measurements) to t->path atomically; a failure only warns. */
void cs_tuning_store(cs_cl *cl, const cs_tuning *t);
/* Builds the kernels for O with T's tile and work-group sizes (clamped to the device's
 * limits); with a default source T gets the defaults. -1 with a message. */
int cs_kernels_build_with(cs_cl *cl, const cs_kernel_opts *o, cs_tuning *t, cs_kernels *k);

/* One line: the choice and where it came from. */
void cs_tuning_summary(const cs_tuning *t, FILE *out);
/* The measurement table (candidates and medians), after a measurement. */
void cs_tuning_report(const cs_tuning *t, FILE *out);

#endif
