/* bench: `clsplat bench`: per-stage medians of one training iteration on one view (profiling
 * events), with the bandwidth each stage achieves on the least bytes it must move. */
#ifndef CS_BENCH_H
#define CS_BENCH_H

#include "cl_runtime.h"
#include "config.h"
#include "dataset.h"
#include "splats.h"

/* Times ITERS iterations of S on camera VIEW of SCENE (0 <= VIEW < n_cams) and prints the
 * table. CL must have been opened with stage profiling. Blocks. -1 with a message. */
int cs_bench(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, int view, int iters);

#endif
