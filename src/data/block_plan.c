/* block_plan: partition, the plan file, and one block's view of a scene (block_plan.h). */
#include "block_plan.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static double dot3(const double a[3], const double b[3]) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const double a[3], const double b[3], double o[3])
{
    o[0] = a[1] * b[2] - a[2] * b[1], o[1] = a[2] * b[0] - a[0] * b[2], o[2] = a[0] * b[1] - a[1] * b[0];
}
static int normalize3(double a[3])
{
    double l = sqrt(dot3(a, a));
    if (!(l > 1e-12)) return -1;
    for (int k = 0; k < 3; k++) a[k] /= l;
    return 0;
}

void cs_block_ground(const cs_block_plan *p, const double x[3], double uv[2])
{
    double d[3] = {x[0] - p->origin[0], x[1] - p->origin[1], x[2] - p->origin[2]};
    uv[0] = dot3(d, p->u), uv[1] = dot3(d, p->v);
}

int cs_block_inside(const double r[4], const double uv[2])
{
    return uv[0] >= r[0] && uv[0] < r[1] && uv[1] >= r[2] && uv[1] < r[3];
}

int cs_block_of(const cs_block_plan *p, const double x[3])
{
    double uv[2];
    cs_block_ground(p, x, uv);
    for (int b = 0; b < p->n; b++)
        if (cs_block_inside(p->blocks[b].core, uv)) return b;
    return -1; /* only for a non-finite point: the cores tile the plane */
}

/* The ground frame: up is the mean of the cameras' up directions (a camera's -y axis in the
 * world), u the points' widest direction across it, v = up x u, the origin their mean. */
static int ground_frame(const cs_scene *s, cs_block_plan *p)
{
    double up[3] = {0, 0, 0}, o[3] = {0, 0, 0};
    for (int i = 0; i < s->n_cams; i++)
        for (int k = 0; k < 3; k++) up[k] -= s->cams[i].R[3 + k];
    if (normalize3(up)) return cs_fail("partition: the cameras' up directions cancel out; no ground plane");
    for (int i = 0; i < s->n_points; i++)
        for (int k = 0; k < 3; k++) o[k] += s->points[3 * i + k] / s->n_points;
    double e1[3] = {1, 0, 0}, e2[3];
    if (fabs(up[0]) > 0.9) e1[0] = 0, e1[1] = 1;
    double t = dot3(e1, up);
    for (int k = 0; k < 3; k++) e1[k] -= t * up[k];
    normalize3(e1);
    cross3(up, e1, e2);
    double c11 = 0, c12 = 0, c22 = 0;
    for (int i = 0; i < s->n_points; i++) {
        double d[3] = {s->points[3 * i] - o[0], s->points[3 * i + 1] - o[1], s->points[3 * i + 2] - o[2]};
        double a = dot3(d, e1), b = dot3(d, e2);
        c11 += a * a, c12 += a * b, c22 += b * b;
    }
    double th = 0.5 * atan2(2 * c12, c11 - c22);
    for (int k = 0; k < 3; k++) {
        p->up[k] = up[k], p->origin[k] = o[k];
        p->u[k] = cos(th) * e1[k] + sin(th) * e2[k];
    }
    cross3(p->up, p->u, p->v);
    return 0;
}

typedef struct {
    double key;
    int i;
} keyed;
static int by_key(const void *a, const void *b)
{
    double x = ((const keyed *)a)->key, y = ((const keyed *)b)->key;
    return x < y ? -1 : x > y;
}

/* the value of UV's axis A (0: u, 1: v) at fraction Q of the points IDX (sorted copy) */
static double quantile(const double *uv, const int *idx, int m, int a, double q, keyed *tmp)
{
    for (int j = 0; j < m; j++) tmp[j].key = uv[2 * idx[j] + a], tmp[j].i = idx[j];
    qsort(tmp, (size_t)m, sizeof *tmp, by_key);
    int k = (int)(q * (m - 1) + 0.5);
    return tmp[k < 0 ? 0 : k >= m ? m - 1 : k].key;
}

/* Splits points IDX (M of them, inside RECT) into NB blocks appended to P. */
static int split(const double *uv, int *idx, int m, int nb, const double rect[4], cs_block_plan *p, keyed *tmp)
{
    if (nb == 1) {
        memcpy(p->blocks[p->n++].core, rect, sizeof(double) * 4);
        return 0;
    }
    if (m < 2 * nb) return cs_fail("partition: too few points (%d) for %d more blocks", m, nb);
    double su = quantile(uv, idx, m, 0, 0.95, tmp) - quantile(uv, idx, m, 0, 0.05, tmp);
    double sv = quantile(uv, idx, m, 1, 0.95, tmp) - quantile(uv, idx, m, 1, 0.05, tmp);
    int a = su >= sv ? 0 : 1, n1 = nb / 2;
    quantile(uv, idx, m, a, 0, tmp); /* sorts along A */
    int k = (int)((double)m * n1 / nb);
    double cut = 0.5 * (tmp[k - 1].key + tmp[k].key);
    int left = 0;
    for (int j = 0; j < m; j++) idx[j] = tmp[j].i;
    while (left < m && uv[2 * idx[left] + a] < cut) left++;
    double r1[4], r2[4];
    memcpy(r1, rect, sizeof r1), memcpy(r2, rect, sizeof r2);
    r1[2 * a + 1] = cut, r2[2 * a] = cut;
    return split(uv, idx, left, n1, r1, p, tmp) || split(uv, idx + left, m - left, nb - n1, r2, p, tmp + left);
}

/* The expanded regions: each inner side moves out by MARGIN x the core's size, the size of an
   open core taken within the points' 1st-99th percentile box. */
static void expand(cs_block_plan *p, const double box[4])
{
    for (int b = 0; b < p->n; b++) {
        cs_block *k = &p->blocks[b];
        for (int a = 0; a < 2; a++) {
            double lo = fmax(k->core[2 * a], box[2 * a]), hi = fmin(k->core[2 * a + 1], box[2 * a + 1]);
            double grow = p->margin * fmax(hi - lo, 0.0);
            k->expanded[2 * a] = isinf(k->core[2 * a]) ? k->core[2 * a] : k->core[2 * a] - grow;
            k->expanded[2 * a + 1] = isinf(k->core[2 * a + 1]) ? k->core[2 * a + 1] : k->core[2 * a + 1] + grow;
        }
    }
}

/* The share of SAMPLE's N points that camera C sees in its image (ignoring occlusion) */
static double seen_share(const cs_scene *s, const int *sample, int n, const cs_camera *c)
{
    int seen = 0;
    for (int j = 0; j < n; j++) {
        double px, py, z;
        if (!cs_camera_project(c, s->points + 3 * sample[j], &px, &py, &z)) continue;
        seen += px >= 0 && px < c->width && py >= 0 && py < c->height;
    }
    return n ? (double)seen / n : 0;
}

/* At most CORE_SAMPLE of a core's points (every k-th) stand for it in the cameras' shares, so
   a partition costs blocks x cameras x CORE_SAMPLE projections, not x the scene's points */
#define CORE_SAMPLE 4096

/* Block K's core points, every k-th of them up to CORE_SAMPLE, into SAMPLE; their count. */
static int core_sample(const cs_scene *s, const double *uv, const cs_block *k, int *sample)
{
    int stride = (k->n_core + CORE_SAMPLE - 1) / CORE_SAMPLE, n = 0, seen = 0;
    for (int i = 0; i < s->n_points; i++)
        if (cs_block_inside(k->core, uv + 2 * i) && seen++ % (stride ? stride : 1) == 0) sample[n++] = i;
    return n;
}

/* Assigns the cameras (those seeing min_share of a core's points, or standing in its expanded
   region) and counts each block's initial points. */
static int assign(const cs_scene *s, const double *uv, cs_block_plan *p)
{
    int *sample = malloc(sizeof(int) * CORE_SAMPLE);
    if (!sample) return cs_fail("out of host memory");
    for (int b = 0; b < p->n; b++) {
        cs_block *k = &p->blocks[b];
        k->cams = calloc((size_t)s->n_cams, sizeof *k->cams);
        if (!k->cams) {
            free(sample);
            return cs_fail("out of host memory");
        }
        for (int i = 0; i < s->n_points; i++)
            k->n_points += cs_block_inside(k->expanded, uv + 2 * i), k->n_core += cs_block_inside(k->core, uv + 2 * i);
        int ns = core_sample(s, uv, k, sample);
        for (int c = 0; c < s->n_cams; c++) {
            const cs_camera *cam = &s->cams[c];
            double cc[3], cuv[2];
            cs_camera_center(cam, cc);
            cs_block_ground(p, cc, cuv);
            if (!cs_block_inside(k->expanded, cuv) && !(ns > 0 && seen_share(s, sample, ns, cam) >= p->min_share)) continue;
            snprintf(k->cams[k->n_cams++], 256, "%s", cam->name);
            k->n_train += !cam->is_test;
        }
        if (k->n_train == 0) {
            free(sample);
            return cs_fail("partition: no training camera sees block %d; use fewer blocks", b);
        }
    }
    free(sample);
    return 0;
}

int cs_block_partition(const cs_scene *s, const char *source, int n, double margin, double min_share, cs_block_plan *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || n > CS_BLOCKS_MAX) return cs_fail("partition: --blocks must be 1 to %d (got %d)", CS_BLOCKS_MAX, n);
    if (s->n_points < 2 * n)
        return cs_fail("partition: the dataset has %d sparse points; blocks are balanced by them, so it needs at least %d",
                       s->n_points, 2 * n);
    snprintf(out->source, sizeof out->source, "%s", source);
    out->margin = margin, out->min_share = min_share;
    out->blocks = calloc((size_t)n, sizeof *out->blocks);
    double *uv = malloc(sizeof(double) * 2 * (size_t)s->n_points);
    int *idx = malloc(sizeof(int) * (size_t)s->n_points);
    keyed *tmp = malloc(sizeof(keyed) * (size_t)s->n_points);
    int rc = !out->blocks || !uv || !idx || !tmp ? cs_fail("out of host memory") : ground_frame(s, out);
    if (!rc) {
        for (int i = 0; i < s->n_points; i++) {
            double x[3] = {s->points[3 * i], s->points[3 * i + 1], s->points[3 * i + 2]};
            cs_block_ground(out, x, uv + 2 * i);
            idx[i] = i;
        }
        double box[4] = {quantile(uv, idx, s->n_points, 0, 0.01, tmp), quantile(uv, idx, s->n_points, 0, 0.99, tmp),
                         quantile(uv, idx, s->n_points, 1, 0.01, tmp), quantile(uv, idx, s->n_points, 1, 0.99, tmp)};
        const double all[4] = {-INFINITY, INFINITY, -INFINITY, INFINITY};
        rc = split(uv, idx, s->n_points, n, all, out, tmp);
        if (!rc) expand(out, box), rc = assign(s, uv, out);
    }
    free(uv), free(idx), free(tmp);
    if (rc) cs_block_plan_free(out);
    return rc;
}

void cs_block_plan_free(cs_block_plan *p)
{
    for (int b = 0; p->blocks && b < p->n; b++) free(p->blocks[b].cams);
    free(p->blocks);
    memset(p, 0, sizeof *p);
}

/* ---- the plan file ------------------------------------------------------------------------ */

static json_t *vec3(const double v[3]) { return json_pack("[f,f,f]", v[0], v[1], v[2]); }
/* a rectangle's sides, null for an open one */
static json_t *rect_json(const double r[4])
{
    json_t *a = json_array();
    for (int k = 0; k < 4; k++) json_array_append_new(a, isinf(r[k]) ? json_null() : json_real(r[k]));
    return a;
}

int cs_block_plan_write(const cs_block_plan *p, const char *path)
{
    json_t *blocks = json_array();
    for (int b = 0; b < p->n; b++) {
        const cs_block *k = &p->blocks[b];
        json_t *cams = json_array();
        for (int c = 0; c < k->n_cams; c++) json_array_append_new(cams, json_string(k->cams[c]));
        json_array_append_new(blocks, json_pack("{s:o,s:o,s:i,s:i,s:o}", "core", rect_json(k->core), "expanded",
                                                rect_json(k->expanded), "points", k->n_points, "training_views",
                                                k->n_train, "cameras", cams));
    }
    json_t *o = json_pack("{s:i,s:s,s:o,s:o,s:o,s:o,s:f,s:f,s:o}", "clsplat_block_plan", 1, "source", p->source, "origin",
                          vec3(p->origin), "up", vec3(p->up), "u", vec3(p->u), "v", vec3(p->v), "margin", p->margin,
                          "min_share", p->min_share, "blocks", blocks);
    char *text = o ? json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) : NULL;
    json_decref(o);
    int rc = text ? cs_write_file_atomic(path, text, strlen(text)) : cs_fail("out of host memory");
    free(text);
    return rc;
}

static int read_vec(json_t *o, const char *key, double v[3], const char *path)
{
    json_t *a = json_object_get(o, key);
    for (int k = 0; k < 3; k++) {
        json_t *x = json_array_get(a, (size_t)k);
        if (!json_is_number(x)) return cs_fail("%s: \"%s\" is not three numbers", path, key);
        v[k] = json_number_value(x);
    }
    return 0;
}

/* a rectangle: null is open (the lower sides -inf, the upper +inf) */
static int read_rect(json_t *a, double r[4], const char *path, int b)
{
    if (json_array_size(a) != 4) return cs_fail("%s: block %d: a rectangle is [u0, u1, v0, v1]", path, b);
    for (int k = 0; k < 4; k++) {
        json_t *x = json_array_get(a, (size_t)k);
        if (json_is_null(x)) r[k] = k % 2 ? INFINITY : -INFINITY;
        else if (json_is_number(x)) r[k] = json_number_value(x);
        else return cs_fail("%s: block %d: a rectangle side is a number or null", path, b);
    }
    return 0;
}

static int read_block(json_t *o, cs_block *k, const char *path, int b)
{
    json_t *cams = json_object_get(o, "cameras");
    if (!json_is_object(o) || read_rect(json_object_get(o, "core"), k->core, path, b) ||
        read_rect(json_object_get(o, "expanded"), k->expanded, path, b))
        return -1;
    if (!json_is_array(cams)) return cs_fail("%s: block %d has no \"cameras\" list", path, b);
    k->n_points = (int)json_integer_value(json_object_get(o, "points"));
    k->n_train = (int)json_integer_value(json_object_get(o, "training_views"));
    k->cams = calloc(json_array_size(cams) + 1, sizeof *k->cams);
    if (!k->cams) return cs_fail("out of host memory");
    for (size_t c = 0; c < json_array_size(cams); c++) {
        const char *name = json_string_value(json_array_get(cams, c));
        if (!name) return cs_fail("%s: block %d: camera %zu is not a name", path, b, c);
        snprintf(k->cams[k->n_cams++], 256, "%s", name);
    }
    return 0;
}

int cs_block_plan_read(const char *path, cs_block_plan *out)
{
    memset(out, 0, sizeof *out);
    json_error_t e;
    json_t *o = json_load_file(path, 0, &e);
    if (!o) return cs_fail("%s:%d: %s", path, e.line, e.text);
    json_t *blocks = json_object_get(o, "blocks");
    const char *src = json_string_value(json_object_get(o, "source"));
    int rc = 0;
    if (json_integer_value(json_object_get(o, "clsplat_block_plan")) != 1 || !src || !json_is_array(blocks) ||
        json_array_size(blocks) < 1 || json_array_size(blocks) > CS_BLOCKS_MAX)
        rc = cs_fail("%s: not a clsplat block plan (clsplat partition writes one)", path);
    if (!rc) {
        snprintf(out->source, sizeof out->source, "%s", src);
        out->margin = json_number_value(json_object_get(o, "margin"));
        out->min_share = json_number_value(json_object_get(o, "min_share"));
        rc = read_vec(o, "origin", out->origin, path) || read_vec(o, "up", out->up, path) ||
             read_vec(o, "u", out->u, path) || read_vec(o, "v", out->v, path);
    }
    if (!rc) {
        out->blocks = calloc(json_array_size(blocks), sizeof *out->blocks);
        rc = out->blocks ? 0 : cs_fail("out of host memory");
        for (size_t b = 0; !rc && b < json_array_size(blocks); b++, out->n++)
            rc = read_block(json_array_get(blocks, b), &out->blocks[b], path, (int)b);
    }
    json_decref(o);
    if (rc) cs_block_plan_free(out);
    return rc;
}

/* ---- one block's view of a scene ------------------------------------------------------------ */

static int has_name(const cs_block *k, const char *name)
{
    for (int c = 0; c < k->n_cams; c++)
        if (!strcmp(k->cams[c], name)) return 1;
    return 0;
}

static int same_folder(const char *a, const char *b)
{
    char ra[PATH_MAX], rb[PATH_MAX];
    return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

int cs_block_restrict(cs_scene *s, const char *data_path, const char *plan_path, int k, int mask)
{
    cs_block_plan p;
    if (cs_block_plan_read(plan_path, &p)) return -1;
    int rc = 0;
    if (k < 0 || k >= p.n) rc = cs_fail("data.block %d: %s has blocks 0 to %d", k, plan_path, p.n - 1);
    else if (!same_folder(p.source, data_path))
        rc = cs_fail("%s was made for the dataset %s, not %s", plan_path, p.source, data_path);
    if (rc) {
        cs_block_plan_free(&p);
        return -1;
    }
    const cs_block *b = &p.blocks[k];
    int nc = 0, np = 0;
    if (mask && s->n_points) {
        cs_ground_region *g = &s->block_region;
        g->points = malloc(sizeof(float) * 3 * s->n_points);
        if (!g->points) rc = cs_fail("out of host memory (block %d's mask)", k);
        else memcpy(g->points, s->points, sizeof(float) * 3 * s->n_points), g->n_points = s->n_points;
    }
    for (int i = 0; i < s->n_cams; i++)
        if (has_name(b, s->cams[i].name)) s->cams[nc++] = s->cams[i];
    for (int i = 0; i < s->n_points; i++) {
        double x[3] = {s->points[3 * i], s->points[3 * i + 1], s->points[3 * i + 2]}, uv[2];
        cs_block_ground(&p, x, uv);
        if (!cs_block_inside(b->expanded, uv)) continue;
        memmove(s->points + 3 * np, s->points + 3 * i, sizeof(float) * 3);
        memmove(s->colors + 3 * np, s->colors + 3 * i, 3);
        np++;
    }
    if (!rc && nc != b->n_cams)
        rc = cs_fail("%s: block %d names %d cameras, the dataset has %d of them", plan_path, k, b->n_cams, nc);
    else if (!rc && cs_scene_count(s, 0) == 0) rc = cs_fail("%s: block %d has no training view", plan_path, k);
    s->n_cams = nc, s->n_points = np;
    if (mask) {
        cs_ground_region *g = &s->block_region;
        g->on = 1, s->weighted = 1;
        memcpy(g->origin, p.origin, sizeof g->origin), memcpy(g->u, p.u, sizeof g->u), memcpy(g->v, p.v, sizeof g->v);
        memcpy(g->rect, b->expanded, sizeof g->rect);
    }
    cs_block_plan_free(&p);
    return rc;
}
