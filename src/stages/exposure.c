/* exposure: launchers for exposure_fwd / exposure_bwd / exposure_adam / exposure_center and the
 * per-view rows. */
#include "exposure.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outputs.h"
#include "util.h"

static const float IDENTITY[CS_EXPOSURE_W] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};

int cs_exposure_open(cs_exposure *e, cs_cl *cl, const cs_kernels *k, int n_views)
{
    memset(e, 0, sizeof *e);
    e->cl = cl, e->k = k, e->n_views = n_views;
    size_t bytes = (size_t)n_views * CS_EXPOSURE_W * sizeof(float);
    float zero = 0.f;
    e->steps = calloc(n_views > 0 ? (size_t)n_views : 1, sizeof(int));
    if (!e->steps) return cs_fail("out of host memory (exposure steps)");
    if (n_views < 1) return cs_fail("internal: exposure for %d views", n_views);
    if (cs_buf_alloc(cl, &e->rows, CS_MEM_PARAMS, bytes, "exposure rows") ||
        cs_buf_alloc(cl, &e->m, CS_MEM_OPTIMIZER, bytes, "exposure Adam m") ||
        cs_buf_alloc(cl, &e->v, CS_MEM_OPTIMIZER, bytes, "exposure Adam v") ||
        cs_buf_fill(cl, &e->m, 0, bytes, &zero, sizeof zero) || cs_buf_fill(cl, &e->v, 0, bytes, &zero, sizeof zero))
        return -1;
    for (int i = 0; i < n_views; i++)
        if (cs_buf_write(cl, &e->rows, (size_t)i * sizeof IDENTITY, sizeof IDENTITY, IDENTITY)) return -1;
    return 0;
}

void cs_exposure_free(cs_exposure *e)
{
    if (!e->cl) return;
    cs_buf_free(e->cl, &e->rows);
    cs_buf_free(e->cl, &e->m);
    cs_buf_free(e->cl, &e->v);
    cs_buf_free(e->cl, &e->out);
    cs_buf_free(e->cl, &e->partials);
    free(e->steps);
    e->steps = NULL;
}

void cs_exposure_trim(cs_exposure *e) { cs_buf_free(e->cl, &e->out); }

void cs_exposure_select(cs_exposure *e, int row) { e->row = row; }

size_t cs_exposure_bytes_per_pixel(void)
{
    /* the exposed render (3 floats) and a 16 x 16 group's partials (48 bytes: under 1 a pixel) */
    return 3 * sizeof(float) + 1;
}

static void grid(int W, int H, size_t g[2], size_t l[2])
{
    l[0] = l[1] = CS_EXPOSURE_T;
    g[0] = (size_t)(W + CS_EXPOSURE_T - 1) / CS_EXPOSURE_T * CS_EXPOSURE_T;
    g[1] = (size_t)(H + CS_EXPOSURE_T - 1) / CS_EXPOSURE_T * CS_EXPOSURE_T;
}

int cs_exposure_forward(cs_exposure *e, const cs_buf *img, int W, int H)
{
    size_t g[2], l[2];
    grid(W, H, g, l);
    cl_uint row = (cl_uint)e->row;
    if (cs_buf_reserve(e->cl, &e->out, (size_t)3 * W * H * sizeof(float), 0, "exposed render")) return -1;
    return cs_cl_run(e->cl, e->k->exposure_fwd, CS_STAGE_LOSS, 2, g, l, CS_ARG(img->mem), CS_ARG(e->rows.mem),
                     CS_ARG(row), CS_ARG(W), CS_ARG(H), CS_ARG(e->out.mem));
}

int cs_exposure_backward(cs_exposure *e, const cs_buf *img, cs_buf *v_img, int W, int H)
{
    size_t g[2], l[2];
    grid(W, H, g, l);
    cl_uint row = (cl_uint)e->row;
    e->n_groups = (unsigned)(g[0] / l[0] * (g[1] / l[1]));
    if (cs_buf_reserve(e->cl, &e->partials, (size_t)e->n_groups * CS_EXPOSURE_W * sizeof(float), 0,
                       "exposure gradient partials"))
        return -1;
    return cs_cl_run(e->cl, e->k->exposure_bwd, CS_STAGE_LOSS, 2, g, l, CS_ARG(img->mem), CS_ARG(e->rows.mem),
                     CS_ARG(row), CS_ARG(W), CS_ARG(H), CS_ARG(v_img->mem), CS_ARG(e->partials.mem));
}

int cs_exposure_step(cs_exposure *e, double lr)
{
    if (!e->n_groups) return cs_fail("internal: an exposure step before any backward");
    int t = ++e->steps[e->row];
    float b1 = 0.9f, b2 = 0.999f, eps = 1e-15f, flr = (float)lr;
    float bc1 = (float)(1.0 - pow(0.9, t)), bc2 = (float)(1.0 - pow(0.999, t));
    size_t one = 256;
    cl_uint row = (cl_uint)e->row, ng = e->n_groups, nv = (cl_uint)e->n_views;
    return cs_cl_run(e->cl, e->k->exposure_adam, CS_STAGE_ADAM, 1, &one, &one, CS_ARG(e->partials.mem), CS_ARG(ng),
                     CS_ARG(e->rows.mem), CS_ARG(e->m.mem), CS_ARG(e->v.mem), CS_ARG(row), CS_ARG(flr), CS_ARG(b1),
                     CS_ARG(b2), CS_ARG(eps), CS_ARG(bc1), CS_ARG(bc2)) ||
           cs_cl_run(e->cl, e->k->exposure_center, CS_STAGE_ADAM, 1, &one, &one, CS_ARG(e->rows.mem), CS_ARG(nv));
}

int cs_exposure_read(cs_exposure *e, float *out)
{
    return cs_buf_read(e->cl, &e->rows, 0, (size_t)e->n_views * CS_EXPOSURE_W * sizeof(float), out);
}

int cs_exposure_save(cs_exposure *e, const char *path, const char *const *names)
{
    float *rows = malloc((size_t)e->n_views * CS_EXPOSURE_W * sizeof(float));
    if (!rows) return cs_fail("out of host memory (exposure rows)");
    if (cs_exposure_read(e, rows)) {
        free(rows);
        return -1;
    }
    json_t *o = json_object();
    for (int i = 0; i < e->n_views; i++) {
        json_t *m = json_array();
        for (int c = 0; c < 3; c++) {
            const float *r = rows + (size_t)i * CS_EXPOSURE_W + 4 * c;
            json_array_append_new(m, json_pack("[ffff]", (double)r[0], (double)r[1], (double)r[2], (double)r[3]));
        }
        json_object_set_new(o, names[i], m);
    }
    free(rows);
    int r = cs_write_json(path, o);
    json_decref(o);
    return r;
}
