/* outputs: JSON outputs and checkpoints. */
#include "outputs.h"

#include <errno.h>
#include <math.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int cs_write_json(const char *path, json_t *v)
{
    char *s = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8));
    if (!s) return cs_fail("cannot serialise %s", path);
    size_t n = strlen(s);
    s[n] = '\n';
    int r = cs_write_file_atomic(path, s, n + 1);
    free(s);
    return r;
}

int cs_write_cameras_json(const char *path, const cs_scene *s)
{
    json_t *arr = json_array();
    for (int i = 0; i < s->n_cams; i++) {
        const cs_camera *c = &s->cams[i];
        json_t *o = json_object();
        double ctr[3];
        cs_camera_center(c, ctr);
        json_object_set_new(o, "id", json_integer(i));
        char stem[256];
        cs_camera_stem(c, stem, sizeof stem);
        json_object_set_new(o, "img_name", json_string(stem));
        json_object_set_new(o, "width", json_integer(c->width));
        json_object_set_new(o, "height", json_integer(c->height));
        json_t *pos = json_array(), *rot = json_array();
        for (int k = 0; k < 3; k++) {
            json_array_append_new(pos, json_real(ctr[k]));
            json_t *row = json_array();
            for (int j = 0; j < 3; j++) json_array_append_new(row, json_real(c->R[j * 3 + k])); /* c2w = R^T */
            json_array_append_new(rot, row);
        }
        json_object_set_new(o, "position", pos);
        json_object_set_new(o, "rotation", rot);
        json_object_set_new(o, "fy", json_real(c->fy));
        json_object_set_new(o, "fx", json_real(c->fx));
        /* beyond graphdeco's keys: the principal point (clsplat view draws off-centre views) */
        json_object_set_new(o, "cx", json_real(c->cx));
        json_object_set_new(o, "cy", json_real(c->cy));
        json_array_append_new(arr, o);
    }
    int r = cs_write_json(path, arr);
    json_decref(arr);
    return r;
}

/* Python's repr of a str: single quotes, backslash and quote escaped */
static void py_repr(const char *s, char *out, size_t n)
{
    size_t k = 0;
    if (n < 3) return;
    out[k++] = '\'';
    for (; *s && k + 3 < n; s++) {
        if (*s == '\\' || *s == '\'') out[k++] = '\\';
        out[k++] = *s;
    }
    out[k++] = '\'';
    out[k] = '\0';
}

int cs_write_cfg_args(const char *path, const cs_config *cfg)
{
    char src[4200], model[2200], images[600], text[8192], abs[4096];
    py_repr(realpath(cfg->data.path, abs) ? abs : cfg->data.path, src, sizeof src);
    py_repr(cfg->output.dir, model, sizeof model);
    py_repr(cfg->data.images, images, sizeof images);
    /* str(Namespace(**vars(ModelParams))): argparse prints the keys sorted */
    int n = snprintf(text, sizeof text,
                     "Namespace(data_device='cuda', depths='', eval=%s, images=%s, model_path=%s, resolution=%d, "
                     "sh_degree=%d, source_path=%s, train_test_exp=False, white_background=%s)",
                     cfg->data.eval ? "True" : "False", images, model, cfg->data.resolution, cfg->model.sh_degree, src,
                     cfg->data.white_background ? "True" : "False");
    return cs_write_file_atomic(path, text, (size_t)n);
}

json_t *cs_mem_json(const cs_cl *cl)
{
    json_t *o = json_object(), *cur = json_object(), *peak = json_object();
    json_object_set_new(cur, "total", json_integer((json_int_t)cl->mem.cur_total));
    json_object_set_new(peak, "total", json_integer((json_int_t)cl->mem.peak_total));
    for (int c = 0; c < CS_MEM_NCAT; c++) {
        json_object_set_new(cur, cs_mem_cat_names[c], json_integer((json_int_t)cl->mem.cur[c]));
        json_object_set_new(peak, cs_mem_cat_names[c], json_integer((json_int_t)cl->mem.peak[c]));
    }
    json_object_set_new(o, "current_bytes", cur);
    json_object_set_new(o, "peak_bytes", peak);
    return o;
}

/* ---- checkpoints ------------------------------------------------------------------------ */

size_t cs_checkpoint_header_bytes(const cs_ckpt_header *h) { return h->version == 1 ? CS_CKPT_V1_BYTES : sizeof *h; }

int cs_checkpoint_header(const void *data, size_t len, const char *path, cs_ckpt_header *h)
{
    memset(h, 0, sizeof *h);
    if (!data || len < CS_CKPT_V1_BYTES || (memcpy(h, data, CS_CKPT_V1_BYTES), memcmp(h->magic, "CSCKPT1", 8) != 0))
        return cs_fail("%s: not a clsplat checkpoint", path);
    if (h->version != 1 && h->version != CS_CKPT_VERSION)
        return cs_fail("%s: checkpoint version %d; this clsplat reads versions 1 to %d", path, h->version, CS_CKPT_VERSION);
    if (len < cs_checkpoint_header_bytes(h)) return cs_fail("%s: truncated checkpoint header", path);
    memcpy(h, data, cs_checkpoint_header_bytes(h));
    if (h->iteration < 0 || h->iteration > CS_CKPT_MAX_ITERATION || h->step < 0 || h->step > CS_CKPT_MAX_ITERATION ||
        h->n < 0 || h->n > CS_CKPT_MAX_GAUSSIANS || h->sh_degree < 0 || h->sh_degree > 3 || h->target < 0 ||
        h->target > CS_CKPT_MAX_GAUSSIANS)
        return cs_fail("%s: corrupt checkpoint header (iteration %d, Adam step %d, %d Gaussians, SH degree %d, target %d)",
                       path, h->iteration, h->step, h->n, h->sh_degree, h->target);
    return 0;
}

/* rows of the geometry array (the first a checkpoint keeps) with a NaN or Inf */
static long nonfinite_rows(const char *geo, int n)
{
    long bad = 0;
    for (int i = 0; i < n; i++) {
        float r[CS_GEO_W];
        memcpy(r, geo + (size_t)i * sizeof r, sizeof r);
        for (int k = 0; k < CS_GEO_W; k++)
            if (!isfinite(r[k])) {
                bad++;
                break;
            }
    }
    return bad;
}

/* the arrays a checkpoint keeps, in the model's order */
static int ckpt_arrays(cs_model *m, cs_buf **bufs, size_t *rows)
{
    cs_model_array d[CS_SCHEMA_MAX];
    int na = cs_model_arrays(m, d), n = 0;
    for (int i = 0; i < na; i++)
        if (d[i].desc->checkpointed) bufs[n] = d[i].buf, rows[n++] = d[i].row_bytes;
    return n;
}

int cs_checkpoint_save(cs_cl *cl, const cs_model *mc, int iteration, const char *path)
{
    cs_model *m = (cs_model *)mc;
    cs_ckpt_header h = {"CSCKPT1", CS_CKPT_VERSION, iteration, m->n, m->layout.sh_degree, m->layout.sh_half,
                        m->layout.filter_3d, m->step, m->layout.opt_half, m->target};
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return -1;
    int ok = fwrite(&h, sizeof h, 1, af.f) == 1;
    cs_buf *bufs[CS_SCHEMA_MAX];
    size_t rows[CS_SCHEMA_MAX];
    int na = ckpt_arrays(m, bufs, rows);
    for (int i = 0; i < na && ok; i++) {
        size_t bytes = rows[i] * (size_t)m->n;
        void *tmp = malloc(bytes ? bytes : 1);
        if (!tmp || cs_buf_read(cl, bufs[i], 0, bytes, tmp)) {
            free(tmp);
            cs_atomic_abort(&af);
            return tmp ? -1 : cs_fail("out of host memory writing %s", path);
        }
        ok = fwrite(tmp, 1, bytes, af.f) == bytes;
        free(tmp);
    }
    if (!ok) {
        cs_atomic_abort(&af);
        return cs_fail("writing %s failed: %s", path, strerror(errno));
    }
    return cs_atomic_commit(&af);
}

int cs_checkpoint_check(const void *data, size_t len, const char *path, const cs_model_layout *layout,
                        cs_ckpt_header *hp)
{
    int deg = layout->sh_degree, sh_half = layout->sh_half, has_filter = layout->filter_3d, opt_half = layout->opt_half;
    cs_ckpt_header h;
    if (cs_checkpoint_header(data, len, path, &h)) return -1;
    if (h.sh_degree != deg || h.sh_half != sh_half || h.has_filter != has_filter ||
        h.opt_half != opt_half)
        return cs_fail("%s: checkpoint (version %d, SH degree %d, %s SH, filter %d, %s optimizer) does not match the "
                       "configuration (SH degree %d, %s SH, filter %d, %s optimizer)",
                       path, h.version, h.sh_degree, h.sh_half ? "fp16" : "fp32", h.has_filter,
                       h.opt_half ? "fp16" : "fp32", deg, sh_half ? "fp16" : "fp32", has_filter,
                       opt_half ? "fp16" : "fp32");
    /* the file must hold exactly the rows its header claims, before anything is allocated */
    cs_model shape = {0};
    shape.layout = *layout;
    cs_buf *bufs[CS_SCHEMA_MAX];
    size_t rows[CS_SCHEMA_MAX], want = cs_checkpoint_header_bytes(&h);
    int na = ckpt_arrays(&shape, bufs, rows);
    for (int i = 0; i < na; i++) want += rows[i] * (size_t)h.n;
    if (want != len)
        return cs_fail("%s: %s checkpoint: %zu bytes for %d Gaussians, the header needs %zu", path,
                       len < want ? "truncated" : "oversized", len, h.n, want);
    long bad = nonfinite_rows((const char *)data + cs_checkpoint_header_bytes(&h), h.n);
    if (bad) return cs_fail("%s: %ld Gaussians have NaN or Inf parameters", path, bad);
    *hp = h;
    return 0;
}

int cs_checkpoint_load(cs_cl *cl, cs_model *m, int *iteration, const char *path, const cs_model_layout *layout)
{
    size_t len;
    char *d = cs_read_file(path, &len);
    if (!d) return -1;
    cs_ckpt_header h;
    if (cs_checkpoint_check(d, len, path, layout, &h)) {
        free(d);
        return -1;
    }
    cs_buf *bufs[CS_SCHEMA_MAX];
    size_t rows[CS_SCHEMA_MAX];
    int na;
    cs_splats empty;
    memset(&empty, 0, sizeof empty);
    empty.sh_degree = layout->sh_degree;
    long cap = (long)h.n + h.n / 2 + 1;
    if (cs_model_create(cl, m, &empty, layout, cap > CS_CKPT_MAX_GAUSSIANS ? CS_CKPT_MAX_GAUSSIANS : (int)cap)) {
        free(d);
        return -1;
    }
    m->n = h.n;
    m->step = h.step;
    m->target = h.target;
    size_t off = cs_checkpoint_header_bytes(&h);
    na = ckpt_arrays(m, bufs, rows);
    for (int i = 0; i < na; i++) {
        size_t bytes = rows[i] * (size_t)h.n;
        if (cs_buf_write(cl, bufs[i], 0, bytes, d + off)) {
            free(d);
            cs_model_free(cl, m);
            return -1;
        }
        off += bytes;
    }
    free(d);
    *iteration = h.iteration;
    return 0;
}
