/* model_layout: bytes per Gaussian of each model array category. */
#include "model_layout.h"

#include "layout.h"
#include "splats.h"

cs_row_bytes cs_model_row_bytes(const cs_model_layout *o)
{
    size_t k3 = (size_t)CS_SH_COEFFS(o->sh_degree) * 3;
    cs_row_bytes rb;
    rb.params = CS_GEO_W * 4 + k3 * (o->sh_half ? 2 : 4) + (o->filter_3d ? 4 : 0);
    rb.grads = (CS_GEO_W + k3) * 4;
    rb.optimizer = 2 * (CS_GEO_W + k3) * (o->opt_half ? 2 : 4); /* m and v */
    rb.densify = 3 * 4;                                           /* grad norm sum, count, max radius */
    return rb;
}

size_t cs_row_bytes_total(const cs_row_bytes *rb) { return rb->params + rb->grads + rb->optimizer + rb->densify; }
