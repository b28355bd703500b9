/* model: device arrays of the Gaussians: create, download, grow, compact. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

uint16_t cs_float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t e = (x >> 23) & 0xff, man = x & 0x7fffffu;
    if (e == 0xff) return (uint16_t)(sign | 0x7c00u | (man ? 0x200u : 0));
    int ne = (int)e - 127 + 15;
    if (ne >= 31) return (uint16_t)(sign | 0x7c00u);
    if (ne <= 0) {
        if (ne < -10) return (uint16_t)sign;
        man |= 0x800000u;
        int shift = 14 - ne;
        uint32_t h = man >> shift, rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (h & 1))) h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)ne << 10) | (man >> 13), rem = man & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
    return (uint16_t)(sign | h);
}

float cs_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, man = h & 0x3ffu, x;
    if (e == 0) {
        if (!man) x = sign;
        else {
            e = 127 - 15 + 1;
            while (!(man & 0x400u)) man <<= 1, e--;
            x = sign | (e << 23) | ((man & 0x3ffu) << 13);
        }
    } else if (e == 31) {
        x = sign | 0x7f800000u | (man << 13);
    } else {
        x = sign | ((e - 15 + 127) << 23) | (man << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

size_t cs_model_moment_row(const cs_model *m, int sh)
{
    return cs_array_row_bytes(cs_schema_array(sh ? CS_ARRAY_m_sh : CS_ARRAY_m_geo), &m->layout);
}

int cs_model_arrays(cs_model *m, cs_model_array d[CS_SCHEMA_MAX])
{
    int n = 0;
    for (int i = 0; i < cs_schema_count(); i++) {
        const cs_array_desc *a = cs_schema_array(i);
        size_t row = cs_array_row_bytes(a, &m->layout);
        if (row) d[n++] = (cs_model_array){a, i, &m->array[i], row};
    }
    return n;
}

/* The extra parameter arrays (cs_schema_extend beyond the built-in ones, fp32 rows): the
   columns a host copy carries beside the Gaussian's own (splats.h), by name. */
static bool extra_param(const cs_array_desc *d) { return d->cat == CS_MEM_PARAMS && d->storage == CS_ST_F32; }

static int extras_upload(cs_cl *cl, cs_model *m, const cs_splats *s)
{
    for (int e = 0; e < s->n_extra; e++)
        for (int i = CS_ARRAY_BUILTIN; i < cs_schema_count(); i++) {
            const cs_array_desc *d = cs_schema_array(i);
            if (!extra_param(d) || strcmp(d->name, s->extra[e].name)) continue;
            if (cs_array_width(d, &m->layout) != s->extra[e].width)
                return cs_fail("Gaussian parameter %s: %d values a row given, the model has %d", d->name,
                               s->extra[e].width, cs_array_width(d, &m->layout));
            if (cs_buf_write(cl, &m->array[i], 0, (size_t)s->n * s->extra[e].width * 4, s->extra[e].values)) return -1;
        }
    return 0;
}

static int extras_download(cs_cl *cl, const cs_model *m, cs_splats *out)
{
    for (int i = CS_ARRAY_BUILTIN; i < cs_schema_count(); i++) {
        const cs_array_desc *d = cs_schema_array(i);
        if (!extra_param(d) || !cs_array_row_bytes(d, &m->layout)) continue;
        int w = cs_array_width(d, &m->layout);
        if (cs_splats_add_extra(out, d->name, w) ||
            (m->n && cs_buf_read(cl, &m->array[i], 0, (size_t)m->n * w * 4, out->extra[out->n_extra - 1].values)))
            return -1;
    }
    return 0;
}

int cs_model_create(cs_cl *cl, cs_model *m, const cs_splats *s, const cs_model_layout *layout, int capacity)
{
    int deg = layout->sh_degree, sh_half = layout->sh_half, has_filter = layout->filter_3d;
    memset(m, 0, sizeof *m);
    m->layout = *layout;
    if (s->sh_degree > deg)
        return cs_fail("the model has SH degree %d but the configuration allocates %d (model.sh_degree)", s->sh_degree,
                       deg);
    m->capacity = capacity > s->n ? capacity : s->n;
    if (m->capacity < 1) m->capacity = 1;
    cs_model_array d[CS_SCHEMA_MAX];
    int na = cs_model_arrays(m, d);
    for (int i = 0; i < na; i++)
        if (cs_buf_alloc(cl, d[i].buf, d[i].desc->cat, d[i].row_bytes * m->capacity, d[i].desc->what)) {
            cs_model_free(cl, m);
            return -1;
        }
    m->n = s->n;
    if (!s->n) return 0;
    /* geometry rows */
    float *geo = malloc((size_t)s->n * CS_GEO_W * 4);
    int K = CS_SH_COEFFS(deg), Ks = CS_SH_COEFFS(s->sh_degree);
    size_t shsz = (size_t)s->n * K * 3 * (sh_half ? 2 : 4);
    void *sh = calloc(1, shsz);
    if (!geo || !sh) {
        free(geo);
        free(sh);
        cs_model_free(cl, m);
        return cs_fail("out of host memory uploading %d Gaussians", s->n);
    }
    for (int i = 0; i < s->n; i++) {
        float *r = geo + (size_t)i * CS_GEO_W;
        memcpy(r + CS_GEO_MEAN, s->means + i * 3, 12);
        memcpy(r + CS_GEO_LOG_SCALE, s->log_scales + i * 3, 12);
        memcpy(r + CS_GEO_QUAT, s->quats + i * 4, 16);
        r[CS_GEO_LOGIT_OPACITY] = s->logit_opacity[i];
        for (int k = 0; k < Ks; k++)
            for (int c = 0; c < 3; c++) {
                float v = s->sh[((size_t)i * Ks + k) * 3 + c];
                size_t o = ((size_t)i * K + k) * 3 + c;
                if (sh_half) ((uint16_t *)sh)[o] = cs_float_to_half(v);
                else ((float *)sh)[o] = v;
            }
    }
    int r = cs_buf_write(cl, &m->geo, 0, (size_t)s->n * CS_GEO_W * 4, geo) || cs_buf_write(cl, &m->sh, 0, shsz, sh);
    if (!r && has_filter && s->filter_3d) r = cs_buf_write(cl, &m->filter3d, 0, (size_t)s->n * 4, s->filter_3d);
    if (!r) r = extras_upload(cl, m, s);
    free(geo);
    free(sh);
    if (r) {
        cs_model_free(cl, m);
        return -1;
    }
    return 0;
}

void cs_model_free(cs_cl *cl, cs_model *m)
{
    for (int i = 0; i < CS_SCHEMA_MAX; i++) cs_buf_free(cl, &m->array[i]);
    m->n = m->capacity = 0;
}

int cs_model_download(cs_cl *cl, const cs_model *m, cs_splats *out)
{
    if (cs_splats_alloc(out, m->n, m->layout.sh_degree, m->layout.filter_3d)) return -1;
    if (!m->n) return extras_download(cl, m, out);
    int K = CS_SH_COEFFS(m->layout.sh_degree);
    size_t shsz = (size_t)m->n * K * 3 * (m->layout.sh_half ? 2 : 4);
    float *geo = malloc((size_t)m->n * CS_GEO_W * 4);
    void *sh = malloc(shsz);
    int r = -1;
    if (!geo || !sh) {
        cs_fail("out of host memory downloading %d Gaussians", m->n);
        goto done;
    }
    if (cs_buf_read(cl, &m->geo, 0, (size_t)m->n * CS_GEO_W * 4, geo) || cs_buf_read(cl, &m->sh, 0, shsz, sh)) goto done;
    if (m->layout.filter_3d && cs_buf_read(cl, &m->filter3d, 0, (size_t)m->n * 4, out->filter_3d)) goto done;
    for (int i = 0; i < m->n; i++) {
        const float *g = geo + (size_t)i * CS_GEO_W;
        memcpy(out->means + i * 3, g + CS_GEO_MEAN, 12);
        memcpy(out->log_scales + i * 3, g + CS_GEO_LOG_SCALE, 12);
        memcpy(out->quats + i * 4, g + CS_GEO_QUAT, 16);
        out->logit_opacity[i] = g[CS_GEO_LOGIT_OPACITY];
    }
    size_t nsh = (size_t)m->n * K * 3;
    for (size_t j = 0; j < nsh; j++) out->sh[j] = m->layout.sh_half ? cs_half_to_float(((uint16_t *)sh)[j]) : ((float *)sh)[j];
    r = extras_download(cl, m, out);
done:
    free(geo);
    free(sh);
    if (r) cs_splats_free(out);
    return r;
}

static int set_capacity(cs_cl *cl, cs_model *m, int cap)
{
    cs_model_array d[CS_SCHEMA_MAX];
    int na = cs_model_arrays(m, d);
    for (int i = 0; i < na; i++)
        if (cs_buf_resize(cl, d[i].buf, d[i].row_bytes * (size_t)cap, 1, d[i].desc->what)) return -1;
    m->capacity = cap;
    return 0;
}

int cs_model_reserve(cs_cl *cl, cs_model *m, int rows)
{
    if (rows <= m->capacity) return 0;
    long cap = (long)m->capacity * 3 / 2;
    if (m->max_rows > 0 && cap > m->max_rows) cap = m->max_rows;
    if (cap < rows) cap = rows;
    if (cap > 2000000000L) cap = 2000000000L;
    return set_capacity(cl, m, (int)cap);
}

int cs_model_compact(cs_cl *cl, const cs_kernels *k, cs_model *m, cs_buf *keep, cs_buf *offsets, int new_n,
                     cs_buf *scratch)
{
    cs_model_array d[CS_SCHEMA_MAX];
    int na = cs_model_arrays(m, d);
    size_t maxrow = 0;
    for (int i = 0; i < na; i++)
        if (d[i].row_bytes > maxrow) maxrow = d[i].row_bytes;
    if (new_n > 0 && cs_buf_reserve(cl, scratch, maxrow * (size_t)new_n, 0, "compaction scratch")) return -1;
    int n = m->n;
    for (int i = 0; i < na && new_n > 0; i++) {
        int row_u16 = (int)(d[i].row_bytes / 2);
        size_t g = (size_t)n * row_u16, l = 256;
        if (cs_cl_run(cl, k->gather_rows, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(d[i].buf->mem),
                      CS_ARG(scratch->mem), CS_ARG(keep->mem), CS_ARG(offsets->mem), CS_ARG(row_u16)))
            return -1;
        CS_CHECK(clEnqueueCopyBuffer(cl->queue, scratch->mem, d[i].buf->mem, 0, 0, d[i].row_bytes * (size_t)new_n, 0,
                                     NULL, NULL));
    }
    m->n = new_n;
    /* shrink in place when the arrays are far larger than needed */
    if (m->capacity > 1024 && new_n < m->capacity / 2) {
        if (set_capacity(cl, m, new_n * 3 / 2 > 1024 ? new_n * 3 / 2 : 1024)) return -1;
    }
    return 0;
}

/* ---- rows that densification and MCMC make ------------------------------------------------ */

/* The schema's rule for COUNT rows (to[s] = FIRST + s, or dst_of[s] when FIRST < 0): COPY
   arrays from row src_of[s] when COPY is set, ZERO arrays zeroed (zero bits are zero in every
   storage, model.h), the rest left alone. */
static int apply_rows(cs_cl *cl, const cs_kernels *k, cs_model *m, int count, cs_buf *src_of, cs_buf *dst_of,
                      int first, bool copy)
{
    if (count <= 0) return 0;
    cs_model_array d[CS_SCHEMA_MAX];
    int na = cs_model_arrays(m, d);
    for (int i = 0; i < na; i++) {
        int row_u16 = (int)(d[i].row_bytes / 2);
        size_t g = (size_t)count * row_u16, l = 256;
        cs_on_new rule = d[i].desc->on_new;
        if (rule == CS_NEW_COPY && copy &&
            cs_cl_run(cl, k->rows_copy, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(count), CS_ARG(src_of->mem),
                      CS_ARG(dst_of->mem), CS_ARG(first), CS_ARG(d[i].buf->mem), CS_ARG(row_u16)))
            return -1;
        if (rule == CS_NEW_ZERO && cs_cl_run(cl, k->rows_zero, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(count),
                                             CS_ARG(dst_of->mem), CS_ARG(first), CS_ARG(d[i].buf->mem),
                                             CS_ARG(row_u16)))
            return -1;
    }
    return 0;
}

int cs_model_new_rows(cs_cl *cl, const cs_kernels *k, cs_model *m, int count, cs_buf *src_of, cs_buf *dst_of,
                      int first)
{
    return apply_rows(cl, k, m, count, src_of, dst_of, first, true);
}

int cs_model_reset_rows(cs_cl *cl, const cs_kernels *k, cs_model *m, int count, cs_buf *rows)
{
    return apply_rows(cl, k, m, count, NULL, rows, -1, false);
}

cs_buf *cs_model_state(cs_model *m, int param, cs_storage storage)
{
    for (int i = 0; i < cs_schema_count(); i++) {
        const cs_array_desc *d = cs_schema_array(i);
        if (d->of == param && d->cat == CS_MEM_OPTIMIZER && d->storage == storage) return &m->array[i];
    }
    return NULL;
}

int cs_model_zero_state_column(cs_cl *cl, const cs_kernels *k, cs_model *m, int param, int col)
{
    cs_model_array d[CS_SCHEMA_MAX];
    int na = cs_model_arrays(m, d);
    for (int i = 0; i < na && m->n > 0; i++) {
        if (d[i].desc->of != param || d[i].desc->cat != CS_MEM_OPTIMIZER) continue;
        int row_u16 = (int)(d[i].row_bytes / 2), width = cs_array_width(d[i].desc, &m->layout);
        int elem_u16 = row_u16 / width;
        size_t g = (size_t)m->n * elem_u16, l = 256;
        if (cs_cl_run(cl, k->column_zero, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(m->n), CS_ARG(d[i].buf->mem),
                      CS_ARG(row_u16), CS_ARG(col), CS_ARG(elem_u16)))
            return -1;
    }
    return 0;
}
