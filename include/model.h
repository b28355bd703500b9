/* model: the per-Gaussian arrays on the device, with a count and a capacity. Parameters,
 * gradients and both Adam moments share one row layout so the optimizer is a flat loop:
 *   geo  (cap, CS_GEO_W) float   the geometry row of cl/layout.h (CS_GEO_*)
 *   sh   (cap, K*3) float or half   (K = (sh_degree+1)^2)
 *   filter3d (cap) float   (mip 3D filter only)
 *   v_geo, v_sh (grads, float), m/v for geo and sh (optimizer), stats (cap, 3) (densify)
 * With opt_half the moments take 16 bits each: v as sqrt(v) in an unsigned float with 6
 * exponent bits (2^-54 .. 2^9) and 10 mantissa bits, stochastically rounded (Adam's
 * per-step decay of v, 0.05% in sqrt(v), is below one step of 10 bits, so rounding to
 * nearest would freeze it); m as m / sqrt(v) in IEEE half, which keeps m's precision
 * relative to its own scale whatever the gradient magnitude (|m| <= ~3 sqrt(v) for
 * Adam's betas). Zero bits are zero moments in both. */
#ifndef CS_MODEL_H
#define CS_MODEL_H

#include "cl_mem.h"
#include "cl_runtime.h"
#include "kernels.h"
#include "layout.h"
#include "model_layout.h"
#include "splats.h"

typedef struct {
    int n, capacity;
    int max_rows;      /* growth never reserves more rows than this (0: no limit) */
    int sh_degree, sh_half, has_filter, opt_half;
    int step;          /* Adam steps taken */
    cs_buf geo, sh, filter3d;
    cs_buf v_geo, v_sh;
    cs_buf m_geo, v2_geo, m_sh, v2_sh;
    cs_buf stats;
} cs_model;

/* One device array of the model: its buffer, bytes a row, accounting category, name, and
 * whether checkpoints keep it (gradients are recomputed, so they are not kept). */
typedef struct {
    cs_buf *buf;
    size_t row_bytes;
    cs_mem_cat cat;
    const char *what;
    int in_checkpoint;
} cs_model_array;
#define CS_MODEL_MAX_ARRAYS 12
/* The model's arrays in their one fixed order (the checkpoint order too); returns the count. */
int cs_model_arrays(cs_model *m, cs_model_array out[CS_MODEL_MAX_ARRAYS]);
/* The layout M was created with. */
cs_model_layout cs_model_layout_of(const cs_model *m);

/* Allocates for CAPACITY rows in LAYOUT (SH degree and storage, 3D filter, optimizer
 * storage) and uploads S (its degree must not exceed the layout's; missing bands are zero);
 * blocks until the upload is done. Moments and stats start at zero. */
int cs_model_create(cs_cl *cl, cs_model *m, const cs_splats *s, const cs_model_layout *layout, int capacity);
/* Bytes of one row of the moments of geometry / SH. */
size_t cs_model_moment_row(const cs_model *m, int sh);
/* Frees every array; safe on an empty M. */
void cs_model_free(cs_cl *cl, cs_model *m);
/* Copies the parameters of the first m->n rows back to the host (blocks). */
int cs_model_download(cs_cl *cl, const cs_model *m, cs_splats *out);
/* Grows capacity to hold ROWS (x1.5 spare, at most max_rows unless ROWS needs more), one
 * array at a time. */
int cs_model_reserve(cs_cl *cl, cs_model *m, int rows);
/* Keeps rows with keep[i] != 0, moving row i to offsets[i] (exclusive scan of keep), through
 * SCRATCH (one array at a time). Sets n = NEW_N; shrinks capacity when far too large. */
int cs_model_compact(cs_cl *cl, const cs_kernels *k, cs_model *m, cs_buf *keep, cs_buf *offsets, int new_n,
                     cs_buf *scratch);

/* host half <-> float, round to nearest even */
uint16_t cs_float_to_half(float f);
float cs_half_to_float(uint16_t h);

#endif
