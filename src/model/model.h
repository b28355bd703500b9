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
    cs_model_layout layout; /* how the arrays are stored */
    int step;          /* Adam steps taken */
    int target;        /* the density control's Gaussian target when the run derives it (densify.budget_momentum,
                          train/budget.h; 0: none): state a checkpoint keeps */
    /* the arrays of the schema (model_layout.h), by name or by index; an array the layout
       does not have is an empty buffer */
    union {
        struct {
#define CS_MODEL_FIELD(name, what, width, storage, present, cat, ckpt, of, on_new) cs_buf name;
            CS_MODEL_ARRAYS(CS_MODEL_FIELD)
#undef CS_MODEL_FIELD
        };
        cs_buf array[CS_SCHEMA_MAX];
    };
} cs_model;

/* One device array of the model: its schema entry and index, buffer and bytes a row. */
typedef struct {
    const cs_array_desc *desc;
    int index;
    cs_buf *buf;
    size_t row_bytes;
} cs_model_array;
/* The arrays the model's layout has, in the schema's order (the checkpoint order too); returns
   the count. */
int cs_model_arrays(cs_model *m, cs_model_array out[CS_SCHEMA_MAX]);

/* Allocates for CAPACITY rows in LAYOUT (SH degree and storage, 3D filter, optimizer
 * storage) and uploads S (its degree must not exceed the layout's; missing bands are zero);
 * blocks until the upload is done. Moments and stats start at zero. S's extra columns fill the
 * schema's extra parameter arrays of the same name. */
int cs_model_create(cs_cl *cl, cs_model *m, const cs_splats *s, const cs_model_layout *layout, int capacity);
/* Bytes of one row of the moments of geometry / SH. */
size_t cs_model_moment_row(const cs_model *m, int sh);
/* Frees every array; safe on an empty M. */
void cs_model_free(cs_cl *cl, cs_model *m);
/* Copies the parameters of the first m->n rows back to the host (blocks), the schema's extra
 * parameter arrays as OUT's extra columns (which the PLY export writes). */
int cs_model_download(cs_cl *cl, const cs_model *m, cs_splats *out);
/* Grows capacity to hold ROWS (x1.5 spare, at most max_rows unless ROWS needs more), one
 * array at a time. */
int cs_model_reserve(cs_cl *cl, cs_model *m, int rows);
/* Keeps rows with keep[i] != 0, moving row i to offsets[i] (exclusive scan of keep), through
 * SCRATCH (one array at a time). Sets n = NEW_N; shrinks capacity when far too large. */
int cs_model_compact(cs_cl *cl, const cs_kernels *k, cs_model *m, cs_buf *keep, cs_buf *offsets, int new_n,
                     cs_buf *scratch);

/* Fills COUNT new rows: row s (FIRST + s, or dst_of[s] when FIRST < 0) from row src_of[s], as
 * the schema says: COPY arrays copy the source row, ZERO arrays are zeroed, KEEP arrays are
 * left to their owner. The strategy's own rule (a split child's mean and scale, MCMC's opacity
 * and scale correction) is applied by the caller. */
int cs_model_new_rows(cs_cl *cl, const cs_kernels *k, cs_model *m, int count, cs_buf *src_of, cs_buf *dst_of,
                      int first);
/* Zeroes the ZERO arrays (optimizer state) of the COUNT rows listed in ROWS (repeats allowed):
 * a row whose parameters a strategy rewrote in place. */
int cs_model_reset_rows(cs_cl *cl, const cs_kernels *k, cs_model *m, int count, cs_buf *rows);
/* The optimizer-state array of STORAGE (CS_ST_MOM_M, CS_ST_MOM_V) that the schema gives the
   parameter array PARAM (CS_ARRAY_geo, ...); NULL when it has none. */
cs_buf *cs_model_state(cs_model *m, int param, cs_storage storage);
/* Zeroes column COL of every optimizer-state array of parameter array PARAM, for all rows (a
   parameter the trainer rewrote, such as graphdeco's opacity reset). */
int cs_model_zero_state_column(cs_cl *cl, const cs_kernels *k, cs_model *m, int param, int col);

/* host half <-> float, round to nearest even */
uint16_t cs_float_to_half(float f);
float cs_half_to_float(uint16_t h);

#endif
