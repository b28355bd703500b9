/* tune: measures the rasterizer tile size and the work-group size of each group of
 * per-Gaussian kernels for a device, by timing training passes on a synthetic view, and
 * stores the choice through tuning.h (device.tune: auto | off | force). */
#ifndef CS_TUNE_H
#define CS_TUNE_H

#include "tuning.h"

/* Builds the kernels for O with the tile and work-group sizes POLICY (CS_TUNE_*) gives: the
 * defaults (OFF), the cache or else the defaults (CACHED), the cache or else a measurement
 * that is then stored (AUTO), a new measurement (FORCE). The choice lands in K (k->opts.tile,
 * k->wg) and, when T is not NULL, in T. Blocks for the measurement. -1 with a message. */
int cs_kernels_build_tuned(cs_cl *cl, const cs_kernel_opts *o, int policy, cs_kernels *k, cs_tuning *t);

#endif
