/* pass: forward, loss and backward of one training view, redone on a pair overflow. */
#include "pass.h"

int cs_train_pass(cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v, int active_degree, const float bg[3],
                  cs_buf *gt, unsigned gt_off, float lambda)
{
    for (;;) {
        if (cs_render_forward(r, m, v, active_degree, bg) ||
            cs_loss_forward_backward(l, r, gt, gt_off, v->width, v->height, lambda, 0) ||
            cs_render_backward(r, m, v, active_degree, bg))
            return -1;
        int over = cs_render_confirm(r);
        if (over <= 0) return over;
    }
}
