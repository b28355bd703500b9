/* loop_profile: each kernel's device time over phases of the training loop (train --profile). */
#include "loop_profile.h"

#include <stdio.h>
#include <string.h>

#include "kernels.h"
#include "util.h"

static void clear(cs_loop_profile *lp, cs_cl *cl, int from, double skipped)
{
    lp->skip0 = skipped;
    memset(cl->prof.ms, 0, sizeof cl->prof.ms);
    cl->prof.n_kernels = 0;
    cl->prof.gap_ms = cl->prof.starved_ms = 0;
    lp->from = from;
    lp->launches0 = (double)cl->launches;
    lp->t0 = cs_now();
}

int cs_loop_profile_start(cs_loop_profile *lp, cs_cl *cl, bool on, int from, int factor, double skipped)
{
    lp->on = on && cl->prof.enabled;
    if (!lp->on) return 0;
    if (cs_prof_collect(cl)) return -1;
    lp->factor = factor;
    clear(lp, cl, from, skipped);
    return 0;
}

/* The phase's table: per iteration, the loop's wall time and launches, the kernels' device time
   and the device's idle time between them, by stage and by kernel. */
static void print_phase(const cs_loop_profile *lp, const cs_cl *cl, int iter, double skipped)
{
    double n = iter - lp->from + 1, wall = (cs_now() - lp->t0 - (skipped - lp->skip0)) * 1e3 / n, dev = 0;
    for (int st = 0; st < CS_STAGE_COUNT; st++) dev += cl->prof.ms[st];
    printf("profile: iterations %d-%d at 1/%d size: wall %.3f ms an iteration, kernels %.3f ms (%.0f%%), %.1f "
           "launches;",
           lp->from, iter, lp->factor, wall, dev / n, wall > 0 ? 100.0 * dev / n / wall : 0.0,
           ((double)cl->launches - lp->launches0) / n);
    printf(" between kernels %.3f ms idle, %.3f of it before the next was submitted\n  by stage:",
           cl->prof.gap_ms / n, cl->prof.starved_ms / n);
    for (int st = 0; st < CS_STAGE_COUNT; st++)
        if (cl->prof.ms[st] > 0) printf(" %s %.3f", cs_stage_names[st], cl->prof.ms[st] / n);
    printf("\n");
    cs_prof_print_kernels(cl, n, "  by kernel (ms and launches an iteration):");
    fflush(stdout);
}

int cs_loop_profile_step(cs_loop_profile *lp, cs_cl *cl, int iter, int next_factor, int last, double skipped)
{
    if (!lp->on) return 0;
    bool ends = iter == last || next_factor != lp->factor;
    if (!ends && cl->prof.n < CS_PROF_MAX_EVENTS / 2) return 0;
    if (cs_prof_collect(cl)) return -1;
    if (!ends) return 0;
    print_phase(lp, cl, iter, skipped);
    lp->factor = next_factor;
    clear(lp, cl, iter + 1, skipped);
    return 0;
}

int cs_loop_profile_hold(cs_loop_profile *lp, cs_cl *cl)
{
    if (!lp->on) return 0;
    if (cs_prof_collect(cl)) return -1;
    memcpy(lp->held_ms, cl->prof.ms, sizeof lp->held_ms);
    memcpy(lp->held, cl->prof.by_kernel, sizeof lp->held);
    lp->n_held = cl->prof.n_kernels;
    lp->held_launches = cl->launches;
    return 0;
}

int cs_loop_profile_resume(cs_loop_profile *lp, cs_cl *cl)
{
    if (!lp->on) return 0;
    if (cs_prof_collect(cl)) return -1;
    memcpy(cl->prof.ms, lp->held_ms, sizeof lp->held_ms);
    memcpy(cl->prof.by_kernel, lp->held, sizeof lp->held);
    cl->prof.n_kernels = lp->n_held;
    lp->launches0 += (double)(cl->launches - lp->held_launches);
    return 0;
}
