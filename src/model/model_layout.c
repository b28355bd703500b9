/* model_layout: the schema's table (built from CS_MODEL_ARRAYS, plus declared arrays) and the
 * bytes a row costs. */
#include "model_layout.h"

#include <string.h>

#include "splats.h"
#include "util.h"

#define CS_ARRAY_ROW(name, what, width, storage, present, cat, ckpt, of, on_new)                                    \
    {#name, what, width, CS_ST_##storage, CS_IF_##present, CS_MEM_##cat, ckpt, CS_ARRAY_##of, CS_NEW_##on_new},
static cs_array_desc schema[CS_SCHEMA_MAX] = {CS_MODEL_ARRAYS(CS_ARRAY_ROW)};
#undef CS_ARRAY_ROW
static int n_extra;

int cs_schema_count(void) { return CS_ARRAY_BUILTIN + n_extra; }

const cs_array_desc *cs_schema_array(int i) { return &schema[i]; }

int cs_schema_extend(const cs_array_desc *d)
{
    if (n_extra >= CS_SCHEMA_MAX_EXTRA)
        return cs_fail("model schema: no room for array %s (%d declared arrays at most)", d->name, CS_SCHEMA_MAX_EXTRA);
    if (!d->name || !d->what || d->width == 0 || d->width < CS_ROW_SH3 || d->of >= cs_schema_count() ||
        (d->cat != CS_MEM_PARAMS && d->cat != CS_MEM_GRADS && d->cat != CS_MEM_OPTIMIZER && d->cat != CS_MEM_DENSIFY))
        return cs_fail("model schema: array %s: no name, no width, an unknown parameter array or not a model category",
                       d->name ? d->name : "?");
    for (int i = 0; i < cs_schema_count(); i++)
        if (!strcmp(schema[i].name, d->name)) return cs_fail("model schema: array %s is declared twice", d->name);
    /* rows are moved in 16-bit words (model.c's gather and copy kernels) */
    cs_model_layout odd = {0, 1, 1, 1};
    if (cs_array_row_bytes(d, &odd) % 2) return cs_fail("model schema: array %s: rows of an odd number of bytes", d->name);
    schema[CS_ARRAY_BUILTIN + n_extra] = *d;
    return CS_ARRAY_BUILTIN + n_extra++;
}

void cs_schema_drop_extras(void) { n_extra = 0; }

int cs_array_width(const cs_array_desc *d, const cs_model_layout *l)
{
    return d->width == CS_ROW_SH3 ? CS_SH_COEFFS(l->sh_degree) * 3 : d->width;
}

size_t cs_array_row_bytes(const cs_array_desc *d, const cs_model_layout *l)
{
    if (d->present == CS_IF_FILTER_3D && !l->filter_3d) return 0;
    size_t values = (size_t)cs_array_width(d, l);
    int half = (d->storage == CS_ST_SH && l->sh_half) ||
               ((d->storage == CS_ST_MOM_M || d->storage == CS_ST_MOM_V) && l->opt_half);
    return values * (half ? 2 : 4);
}

cs_row_bytes cs_model_row_bytes(const cs_model_layout *l)
{
    cs_row_bytes rb = {0, 0, 0, 0};
    for (int i = 0; i < cs_schema_count(); i++) {
        size_t b = cs_array_row_bytes(&schema[i], l);
        switch (schema[i].cat) {
        case CS_MEM_PARAMS: rb.params += b; break;
        case CS_MEM_GRADS: rb.grads += b; break;
        case CS_MEM_OPTIMIZER: rb.optimizer += b; break;
        default: rb.densify += b; break;
        }
    }
    return rb;
}

size_t cs_row_bytes_total(const cs_row_bytes *rb) { return rb->params + rb->grads + rb->optimizer + rb->densify; }
