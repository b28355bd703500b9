/* model_layout: how the model stores its per-Gaussian arrays (SH degree and storage, 3D
 * filter, optimizer-moment storage) and what a row costs. The model allocates by it, the
 * program is built for it (it is part of the kernel options), checkpoints record it. */
#ifndef CS_MODEL_LAYOUT_H
#define CS_MODEL_LAYOUT_H

#include <stddef.h>

typedef struct {
    int sh_degree; /* allocated SH degree 0..3 */
    int sh_half;   /* SH coefficients stored as half */
    int filter_3d; /* a mip-splatting 3D filter row */
    int opt_half;  /* Adam moments in 16 bits each (see model.h) */
} cs_model_layout;

/* Bytes a Gaussian costs in each accounting category of the model's arrays. */
typedef struct {
    size_t params, grads, optimizer, densify;
} cs_row_bytes;

/* The model's bytes per Gaussian under LAYOUT (no spare capacity). */
cs_row_bytes cs_model_row_bytes(const cs_model_layout *layout);
/* Sum of the four categories. */
size_t cs_row_bytes_total(const cs_row_bytes *rb);

#endif
