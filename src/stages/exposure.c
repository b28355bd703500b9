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

int cs_exposure_open(cs_exposure *e, cs_cl *cl, const cs_kernels *k, const cs_scene *scene, const int *cams,
                     int n_views)
{
    memset(e, 0, sizeof *e);
    e->cl = cl, e->k = k, e->scene = scene, e->cams = cams, e->n_views = n_views;
    size_t bytes = (size_t)n_views * CS_EXPOSURE_W * sizeof(float);
    float zero = 0.f;
    e->steps = calloc(n_views > 0 ? (size_t)n_views : 1, sizeof(int));
    if (!e->steps) return cs_fail("out of host memory (exposure steps)");
    if (n_views < 1) return cs_fail("internal: exposure for %d views", n_views);
    if (cs_buf_alloc(cl, &e->rows, CS_MEM_PARAMS, bytes + sizeof IDENTITY, "exposure rows") ||
        cs_buf_alloc(cl, &e->m, CS_MEM_OPTIMIZER, bytes, "exposure Adam m") ||
        cs_buf_alloc(cl, &e->v, CS_MEM_OPTIMIZER, bytes, "exposure Adam v") ||
        cs_buf_fill(cl, &e->m, 0, bytes, &zero, sizeof zero) || cs_buf_fill(cl, &e->v, 0, bytes, &zero, sizeof zero))
        return -1;
    for (int i = 0; i <= n_views; i++)
        if (cs_buf_write(cl, &e->rows, (size_t)i * sizeof IDENTITY, sizeof IDENTITY, IDENTITY)) return -1;
    return 0;
}

int cs_exposure_neighbours(const cs_scene *s, const int *train, int n, int cam, int k, int *rows, double *w)
{
    double c[3], sum = 0;
    cs_camera_center(&s->cams[cam], c);
    if (k > n) k = n;
    for (int j = 0; j < k; j++) { /* k is small: a selection pass each */
        double best = INFINITY;
        rows[j] = -1;
        for (int i = 0; i < n; i++) {
            int taken = 0;
            for (int q = 0; q < j; q++) taken |= rows[q] == i;
            double o[3];
            cs_camera_center(&s->cams[train[i]], o);
            double d = sqrt((o[0] - c[0]) * (o[0] - c[0]) + (o[1] - c[1]) * (o[1] - c[1]) + (o[2] - c[2]) * (o[2] - c[2]));
            if (!taken && d < best) best = d, rows[j] = i;
        }
        sum += w[j] = 1.0 / (best + 1e-9);
    }
    for (int j = 0; j < k; j++) w[j] /= sum;
    return k;
}

void cs_exposure_row_of(const cs_scene *s, const int *cams, int n, const float *rows, int cam, float out[CS_EXPOSURE_W])
{
    for (int i = 0; i < n; i++)
        if (cams[i] == cam) {
            memcpy(out, rows + (size_t)i * CS_EXPOSURE_W, sizeof(float) * CS_EXPOSURE_W);
            return;
        }
    int near[CS_EXPOSURE_NEAREST];
    double w[CS_EXPOSURE_NEAREST], blend[CS_EXPOSURE_W] = {0};
    int k = cs_exposure_neighbours(s, cams, n, cam, CS_EXPOSURE_NEAREST, near, w);
    for (int j = 0; j < k; j++)
        for (int q = 0; q < CS_EXPOSURE_W; q++) blend[q] += w[j] * rows[(size_t)near[j] * CS_EXPOSURE_W + q];
    for (int q = 0; q < CS_EXPOSURE_W; q++) out[q] = k ? (float)blend[q] : IDENTITY[q];
}

int cs_exposure_select_camera(cs_exposure *e, int cam)
{
    for (int i = 0; i < e->n_views; i++)
        if (e->cams[i] == cam) {
            e->row = i;
            return 0;
        }
    float *rows = malloc((size_t)e->n_views * sizeof IDENTITY), out[CS_EXPOSURE_W];
    if (!rows) return cs_fail("out of host memory (exposure rows)");
    int rc = cs_exposure_read(e, rows);
    if (!rc) cs_exposure_row_of(e->scene, e->cams, e->n_views, rows, cam, out);
    free(rows);
    e->row = e->n_views;
    return rc || cs_buf_write(e->cl, &e->rows, (size_t)e->n_views * sizeof out, sizeof out, out) ? -1 : 0;
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

int cs_exposure_apply(cs_exposure *e, cs_buf *img, int W, int H)
{
    size_t g[2], l[2];
    grid(W, H, g, l);
    cl_uint row = (cl_uint)e->row;
    /* in place: each work-item reads its pixel's three values before writing them */
    return cs_cl_run(e->cl, e->k->exposure_fwd, CS_STAGE_LOSS, 2, g, l, CS_ARG(img->mem), CS_ARG(e->rows.mem),
                     CS_ARG(row), CS_ARG(W), CS_ARG(H), CS_ARG(img->mem));
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

int cs_exposure_parse(const char *path, const cs_scene *s, const int *cams, int n, float *rows, int *found)
{
    json_error_t err;
    json_t *o = json_load_file(path, 0, &err);
    if (!o) return cs_fail("%s: line %d: %s", path, err.line, err.text);
    *found = 0;
    int rc = json_is_object(o) ? 0 : cs_fail("%s: not an object of views' 3 x 4 matrices", path);
    for (int i = 0; i < n && !rc; i++) {
        float *r = rows + (size_t)i * CS_EXPOSURE_W;
        memcpy(r, IDENTITY, sizeof IDENTITY);
        json_t *m = json_object_get(o, s->cams[cams[i]].name);
        if (!m) continue;
        for (int q = 0; q < CS_EXPOSURE_W && !rc; q++) {
            json_t *v = json_array_get(json_array_get(m, (size_t)q / 4), (size_t)q % 4);
            if (!json_is_number(v) || json_array_size(m) != 3 || json_array_size(json_array_get(m, (size_t)q / 4)) != 4)
                rc = cs_fail("%s: view %s is not a 3 x 4 matrix of numbers", path, s->cams[cams[i]].name);
            else
                r[q] = (float)json_number_value(v);
        }
        *found += !rc;
    }
    json_decref(o);
    return rc;
}

int cs_exposure_write(cs_exposure *e, const float *rows)
{
    return cs_buf_write(e->cl, &e->rows, 0, (size_t)e->n_views * sizeof IDENTITY, rows);
}

int cs_exposure_load(cs_exposure *e, const char *path, int *found)
{
    float *rows = malloc((size_t)e->n_views * sizeof IDENTITY);
    if (!rows) return cs_fail("out of host memory (exposure rows)");
    int rc = cs_exposure_parse(path, e->scene, e->cams, e->n_views, rows, found) || cs_exposure_write(e, rows) ? -1 : 0;
    free(rows);
    return rc;
}
