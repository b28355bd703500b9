/* view_model: the viewer's model blob and its holder (view_model.h). */
#include "view_model.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "ply.h"
#include "run_dir.h"

static void put_u32(cs_bytes *b, uint32_t v) { cs_bytes_append(b, &v, 4); }

static int row_finite(const cs_splats *s, int i, int K)
{
    float v = s->logit_opacity[i] + (s->filter_3d ? s->filter_3d[i] : 0.f);
    for (int c = 0; c < 3; c++) v += s->means[i * 3 + c] + s->log_scales[i * 3 + c];
    for (int c = 0; c < 4; c++) v += s->quats[i * 4 + c];
    for (int k = 0; k < K * 3; k++) v += s->sh[(size_t)i * K * 3 + k];
    return isfinite(v);
}

/* x y z opacity | Sigma's upper triangle | 0 0 of row I */
static void geometry_row(const cs_splats *s, int i, float g[CS_VIEW_MODEL_GEO_FLOATS])
{
    float ls[3], lo;
    cs_splats_baked_row(s, i, ls, &lo);
    const float *q = s->quats + (size_t)i * 4;
    double n = sqrt((double)q[0] * q[0] + (double)q[1] * q[1] + (double)q[2] * q[2] + (double)q[3] * q[3]);
    double w = n > 0 ? q[0] / n : 1, x = n > 0 ? q[1] / n : 0, y = n > 0 ? q[2] / n : 0, z = n > 0 ? q[3] / n : 0;
    double R[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                   2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
    double d[3];
    for (int c = 0; c < 3; c++) d[c] = exp(2.0 * ls[c]);
    static const int rc[6][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 1}, {1, 2}, {2, 2}};
    for (int c = 0; c < 3; c++) g[c] = s->means[i * 3 + c];
    g[3] = (float)(1.0 / (1.0 + exp(-(double)lo)));
    for (int e = 0; e < 6; e++) {
        const double *a = R + 3 * rc[e][0], *b = R + 3 * rc[e][1];
        g[4 + e] = (float)(a[0] * b[0] * d[0] + a[1] * b[1] * d[1] + a[2] * b[2] * d[2]);
    }
    g[10] = g[11] = 0.f;
}

int cs_view_model_encode(const cs_splats *s, int iteration, cs_bytes *out)
{
    cs_bytes_free(out);
    int K = CS_SH_COEFFS(s->sh_degree), texels = (3 * K + 3) / 4, n = 0;
    for (int i = 0; i < s->n; i++) n += row_finite(s, i, K);
    cs_bytes_append(out, "CSVM", 4);
    put_u32(out, 1), put_u32(out, (uint32_t)n), put_u32(out, (uint32_t)s->sh_degree);
    put_u32(out, (uint32_t)iteration), put_u32(out, (uint32_t)texels), put_u32(out, 0), put_u32(out, 0);
    for (int i = 0; i < s->n; i++) {
        if (!row_finite(s, i, K)) continue;
        float g[CS_VIEW_MODEL_GEO_FLOATS];
        geometry_row(s, i, g);
        cs_bytes_append(out, g, sizeof g);
    }
    uint16_t h[64]; /* 4 x 12 texels at degree 3 */
    for (int i = 0; i < s->n; i++) {
        if (!row_finite(s, i, K)) continue;
        memset(h, 0, sizeof h);
        for (int k = 0; k < 3 * K; k++) h[k] = cs_float_to_half(s->sh[(size_t)i * K * 3 + k]);
        cs_bytes_append(out, h, (size_t)texels * 4 * sizeof h[0]);
    }
    if (out->oom) {
        cs_bytes_free(out);
        return cs_fail("out of host memory for the viewer's model of %d Gaussians", s->n);
    }
    return 0;
}

struct cs_view_model {
    pthread_mutex_t lock;
    char dir[1024];
    cs_bytes blob;     /* empty: none yet */
    int iteration, count;
    int live;          /* a snapshot was published: the PLYs are not read */
    cs_splats pending; /* a published snapshot not encoded yet (pending_n >= 0) */
    int pending_it, has_pending;
    double asked;      /* cs_now() of the last request for the model; 0: none */
};

cs_view_model *cs_view_model_new(const char *run_dir)
{
    cs_view_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    pthread_mutex_init(&m->lock, NULL);
    snprintf(m->dir, sizeof m->dir, "%s", run_dir);
    m->iteration = -1;
    return m;
}

/* under the lock: replaces the blob with S's */
static int set_blob(cs_view_model *m, const cs_splats *s, int iteration)
{
    cs_bytes b = {0};
    if (cs_view_model_encode(s, iteration, &b)) return -1;
    cs_bytes_free(&m->blob);
    m->blob = b;
    m->iteration = iteration;
    memcpy(&m->count, b.buf + 8, 4);
    return 0;
}

/* under the lock: reads the newest saved PLY when it is newer than the blob */
static int refresh_from_folder(cs_view_model *m)
{
    char ply[4400];
    int it;
    if (cs_run_dir_latest_ply(m->dir, ply, sizeof ply, &it)) return m->blob.len ? 0 : -1;
    if (m->blob.len && it == m->iteration) return 0;
    cs_splats s;
    if (cs_ply_read(ply, &s)) return m->blob.len ? 0 : -1;
    int r = set_blob(m, &s, it);
    cs_splats_free(&s);
    return r;
}

void cs_view_model_publish(cs_view_model *m, cs_splats *s, int iteration)
{
    pthread_mutex_lock(&m->lock);
    m->live = 1;
    if (m->has_pending) cs_splats_free(&m->pending);
    m->pending = *s, m->pending_it = iteration, m->has_pending = 1;
    memset(s, 0, sizeof *s);
    pthread_mutex_unlock(&m->lock);
}

/* under the lock: the blob of the newest model, encoded here (a server thread), not by the
   trainer; marks the model as asked for */
static int refresh(cs_view_model *m)
{
    m->asked = cs_now();
    if (!m->live) return refresh_from_folder(m);
    if (!m->has_pending) return 0;
    int r = set_blob(m, &m->pending, m->pending_it);
    cs_splats_free(&m->pending);
    m->has_pending = 0;
    return r;
}

bool cs_view_model_watched(cs_view_model *m, double seconds)
{
    pthread_mutex_lock(&m->lock);
    bool w = m->asked > 0 && cs_now() - m->asked < seconds;
    pthread_mutex_unlock(&m->lock);
    return w;
}

int cs_view_model_get(cs_view_model *m, char **data, size_t *n, int *iteration)
{
    pthread_mutex_lock(&m->lock);
    int r = refresh(m);
    if (!r && !m->blob.len) r = cs_fail("no model yet: the run has published no snapshot");
    char *d = r ? NULL : malloc(m->blob.len);
    if (!r && !d) r = cs_fail("out of host memory for a copy of the viewer's model");
    if (!r) {
        memcpy(d, m->blob.buf, m->blob.len);
        *data = d, *n = m->blob.len, *iteration = m->iteration;
    }
    pthread_mutex_unlock(&m->lock);
    return r;
}

void cs_view_model_peek(cs_view_model *m, int *iteration, int *count)
{
    pthread_mutex_lock(&m->lock);
    (void)refresh(m);
    *iteration = m->blob.len ? m->iteration : -1;
    *count = m->blob.len ? m->count : 0;
    pthread_mutex_unlock(&m->lock);
}

void cs_view_model_free(cs_view_model *m)
{
    if (!m) return;
    cs_bytes_free(&m->blob);
    if (m->has_pending) cs_splats_free(&m->pending);
    pthread_mutex_destroy(&m->lock);
    free(m);
}
