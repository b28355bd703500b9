/* model: the per-Gaussian arrays on the device, with a count and a capacity. Parameters,
 * gradients and both Adam moments share one row layout so the optimizer is a flat loop:
 *   geo  (cap, 11) float   means | log_scales | quat wxyz | logit_opacity
 *   sh   (cap, K*3) float or half   (K = (sh_degree+1)^2)
 *   filter3d (cap) float   (mip 3D filter only)
 *   v_geo, v_sh (grads, float), m/v for geo and sh (optimizer), stats (cap, 3) (densify) */
#ifndef CS_MODEL_H
#define CS_MODEL_H

#include "cl_runtime.h"
#include "kernels.h"
#include "splats.h"

typedef struct {
    int n, capacity;
    int sh_degree, sh_half, has_filter;
    int step;          /* Adam steps taken */
    cs_buf geo, sh, filter3d;
    cs_buf v_geo, v_sh;
    cs_buf m_geo, v2_geo, m_sh, v2_sh;
    cs_buf stats;
} cs_model;

/* Bytes per Gaussian for each category (params, grads, optimizer, densify). */
void cs_model_row_bytes(int sh_degree, int sh_half, int has_filter, size_t out[4]);
/* Allocates for CAPACITY rows and uploads S (its degree must not exceed SH_DEGREE; missing
 * bands are zero). Moments and stats start at zero. */
int cs_model_create(cs_cl *cl, cs_model *m, const cs_splats *s, int sh_degree, int sh_half, int has_filter,
                    int capacity);
void cs_model_free(cs_cl *cl, cs_model *m);
/* Copies parameters back to the host. */
int cs_model_download(cs_cl *cl, const cs_model *m, cs_splats *out);
/* Grows capacity to hold ROWS (x1.5 spare), one array at a time. */
int cs_model_reserve(cs_cl *cl, cs_model *m, int rows);
/* Keeps rows with keep[i] != 0, moving row i to offsets[i] (exclusive scan of keep), through
 * SCRATCH (one array at a time). Sets n = NEW_N; shrinks capacity when far too large. */
int cs_model_compact(cs_cl *cl, const cs_kernels *k, cs_model *m, cs_buf *keep, cs_buf *offsets, int new_n,
                     cs_buf *scratch);

/* host half <-> float, round to nearest even */
uint16_t cs_float_to_half(float f);
float cs_half_to_float(uint16_t h);

#endif
