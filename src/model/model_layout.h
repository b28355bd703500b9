/* model_layout: the model's schema on the host: the arrays cl/layout.h's CS_MODEL_ARRAYS
 * describes (plus any a caller declares with cs_schema_extend), how a layout stores them (SH
 * degree and storage, 3D filter, optimizer-moment storage) and what a row costs. The model
 * allocates, grows, compacts and checkpoints by it, densification and MCMC make rows by it,
 * the memory plan sizes by it; the program is built for the layout (it is part of the kernel
 * options) and checkpoints record it. */
#ifndef CS_MODEL_LAYOUT_H
#define CS_MODEL_LAYOUT_H

#include <stddef.h>

#include "cl_runtime.h"
#include "layout.h"

typedef struct {
    int sh_degree; /* allocated SH degree 0..3 */
    int sh_half;   /* SH coefficients stored as half */
    int filter_3d; /* a mip-splatting 3D filter row */
    int opt_half;  /* Adam moments in 16 bits each (see model.h) */
} cs_model_layout;

/* the columns of CS_MODEL_ARRAYS, as values */
typedef enum { CS_ST_F32, CS_ST_SH, CS_ST_MOM_M, CS_ST_MOM_V } cs_storage;
typedef enum { CS_IF_ALWAYS, CS_IF_FILTER_3D } cs_presence;
typedef enum { CS_NEW_COPY, CS_NEW_ZERO, CS_NEW_KEEP } cs_on_new;

/* One per-Gaussian array. */
typedef struct {
    const char *name, *what;
    int width;            /* values a row, or CS_ROW_SH3 */
    cs_storage storage;
    cs_presence present;
    cs_mem_cat cat;
    int checkpointed;
    int of;               /* index of the parameter array it belongs to, or CS_ARRAY_NONE */
    cs_on_new on_new;
} cs_array_desc;

/* Indices of the built-in arrays: CS_ARRAY_geo, CS_ARRAY_sh, ... */
#define CS_ARRAY_INDEX(name, what, width, storage, present, cat, ckpt, of, on_new) CS_ARRAY_##name,
enum { CS_ARRAY_NONE = -1, CS_MODEL_ARRAYS(CS_ARRAY_INDEX) CS_ARRAY_BUILTIN };
#undef CS_ARRAY_INDEX
/* arrays cs_schema_extend may add after the built-in ones */
#define CS_SCHEMA_MAX_EXTRA 4
#define CS_SCHEMA_MAX (CS_ARRAY_BUILTIN + CS_SCHEMA_MAX_EXTRA)

/* Arrays in the schema now (built-in, then declared ones). */
int cs_schema_count(void);
/* Array I of the schema (0 <= I < cs_schema_count()). */
const cs_array_desc *cs_schema_array(int i);
/* Declares one more per-Gaussian array for models created from now on; its index, or -1 with
 * a message (schema full, a row of an odd number of bytes, a name already taken). Not
 * thread-safe: declare before any model is made. */
int cs_schema_extend(const cs_array_desc *d);
/* Drops every declared array (the built-in ones stay). */
void cs_schema_drop_extras(void);

/* Values a row of D holds under LAYOUT (CS_ROW_SH3 resolved). */
int cs_array_width(const cs_array_desc *d, const cs_model_layout *layout);
/* Bytes a row of D takes under LAYOUT; 0 when the layout has no such array. */
size_t cs_array_row_bytes(const cs_array_desc *d, const cs_model_layout *layout);

/* Bytes a Gaussian costs in each accounting category of the model's arrays. */
typedef struct {
    size_t params, grads, optimizer, densify;
} cs_row_bytes;

/* The model's bytes per Gaussian under LAYOUT (no spare capacity): the sum over the schema. */
cs_row_bytes cs_model_row_bytes(const cs_model_layout *layout);
/* Sum of the four categories. */
size_t cs_row_bytes_total(const cs_row_bytes *rb);

#endif
