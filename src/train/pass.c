/* pass: forward, loss and backward of one training view, redone on a pair overflow, and
 * the timing of whole iterations for the benchmark and the tuner. */
#include "pass.h"

#include <stdlib.h>
#include <string.h>

#include "densify.h"
#include "optim.h"
#include "util.h"

int cs_train_pass(cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v, int active_degree, const float bg[3],
                  cs_buf *gt, unsigned gt_off, float lambda, bool want_loss)
{
    for (;;) {
        if (cs_render_forward(r, m, v, active_degree, bg) ||
            cs_loss_forward_backward(l, &r->img, gt, gt_off, v->width, v->height, lambda, want_loss ? 0 : -1) ||
            cs_render_backward(r, m, v, active_degree, bg, &l->v_img))
            return -1;
        int over = cs_render_confirm(r);
        if (over <= 0) return over;
    }
}

int cs_time_iterations(cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v, int active_degree, const float bg[3],
                       cs_buf *gt, unsigned gt_off, float lambda, bool sparse_adam, int reps,
                       double med[CS_STAGE_COUNT], double *wall_med)
{
    cs_cl *cl = r->cl;
    const cs_adam_lrs frozen = {0, 0, 0, 0, 0}; /* full cost, the model stays as it is */
    double *ms = calloc((size_t)reps * (CS_STAGE_COUNT + 1), sizeof(double)), *wall = ms + (size_t)reps * CS_STAGE_COUNT;
    if (!ms) return cs_fail("out of host memory (timings)");
    for (int i = -2; i < reps; i++) {
        memset(cl->prof.ms, 0, sizeof cl->prof.ms);
        double t0 = cs_now();
        if (cs_train_pass(r, l, m, v, active_degree, bg, gt, gt_off, lambda, false) ||
            cs_densify_stats(cl, r->k, m, r, v->width, v->height) || cs_adam_step(cl, r->k, m, &frozen, 0.0, sparse_adam ? &r->radii : NULL) ||
            cs_prof_collect(cl)) {
            free(ms);
            return -1;
        }
        if (i < 0) {
            cl->prof.n_kernels = 0; /* the per-kernel table counts the timed passes only */
            continue;
        }
        wall[i] = (cs_now() - t0) * 1e3;
        for (int st = 0; st < CS_STAGE_COUNT; st++) ms[st * reps + i] = cl->prof.ms[st];
    }
    for (int st = 0; st < CS_STAGE_COUNT; st++) med[st] = cs_median(ms + st * reps, reps);
    if (wall_med) *wall_med = cs_median(wall, reps);
    free(ms);
    return 0;
}
