/* loop_profile: train --profile. The device's time in each kernel over the training loop,
 * printed per phase of the resolution schedule against the loop's wall time, so the gap
 * between the two (the host, copies and fills, idle device) is seen as well as the kernels. */
#ifndef CS_LOOP_PROFILE_H
#define CS_LOOP_PROFILE_H

#include <stdbool.h>

#include "cl_runtime.h"

typedef struct {
    bool on;
    int from;       /* the phase's first iteration */
    int factor;     /* its resolution divisor */
    double t0;      /* its start (wall) */
    double skip0;   /* the caller's excluded seconds (evaluations) at its start */
    double launches0;
    /* the tables while an evaluation runs (cs_loop_profile_hold) */
    double held_ms[CS_PROF_MAX_STAGES];
    cs_prof_kernel held[CS_PROF_MAX_KERNELS];
    int n_held;
    unsigned long long held_launches;
} cs_loop_profile;

/* Starts the first phase at iteration FROM (divisor FACTOR); ON false: everything a no-op.
 * The kernel table is cleared (the tuner's passes are not the loop's). */
int cs_loop_profile_start(cs_loop_profile *lp, cs_cl *cl, bool on, int from, int factor, double skipped);

/* After iteration ITER: collects the device's events before they overflow, and prints and
 * restarts the phase when the next iteration's divisor NEXT_FACTOR differs or ITER is LAST.
 * SKIPPED: the seconds so far that are not the loop's (evaluations), left out of its wall. */
int cs_loop_profile_step(cs_loop_profile *lp, cs_cl *cl, int iter, int next_factor, int last, double skipped);

/* Around work that is not the loop's (an evaluation): HOLD keeps the tables as they are,
 * RESUME drops what the device ran since. */
int cs_loop_profile_hold(cs_loop_profile *lp, cs_cl *cl);
int cs_loop_profile_resume(cs_loop_profile *lp, cs_cl *cl);

#endif
