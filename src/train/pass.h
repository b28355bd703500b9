/* pass: one training view's forward, loss and backward, as the trainer and the benchmark run
 * it: the pair count is only waited for after the backward is queued, and the whole pass is
 * redone with larger pair buffers when the pairs overflowed them. */
#ifndef CS_PASS_H
#define CS_PASS_H

#include <stdbool.h>

#include "loss.h"

/* Enqueues the pass; gradients end in the model's v_geo / v_sh (r->v_2d for densification
 * statistics), the loss sums in slot 0 of L when WANT_LOSS. GT: 8-bit RGB at byte offset GT_OFF.
 * Blocks once, for the pair count (after the backward is queued), and again only when a pass is
 * redone. */
int cs_train_pass(cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v, int active_degree, const float bg[3],
                  cs_buf *gt, unsigned gt_off, float lambda, bool want_loss);

/* Times training iterations of one view as clsplat bench and the tuner measure them: REPS
 * timed runs after two untimed ones of the pass (with D-SSIM weight LAMBDA), densification
 * statistics and an Adam step at zero learning rates (full cost, the model stays as it is;
 * SPARSE_ADAM: over the rows the view sees, as optim.sparse_adam trains). MED gets each stage's median event time (ms), WALL_MED (or NULL) the median host time of an
 * iteration. Needs stage profiling on the queue. */
int cs_time_iterations(cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v, int active_degree, const float bg[3],
                       cs_buf *gt, unsigned gt_off, float lambda, bool sparse_adam, int reps,
                       double med[CS_STAGE_COUNT], double *wall_med);

#endif
