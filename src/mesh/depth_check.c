/* depth_check: rendered depths checked against the neighbouring views' (depth_check.h). */
#include "depth_check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* the camera centre and optical axis (world) of V */
static void centre_axis(const cs_view *v, float o[3], float a[3])
{
    for (int i = 0; i < 3; i++) o[i] = v->cam.s[12 + i], a[i] = v->cam.s[6 + i];
}

/* C's neighbours of view K: the nearest centres among the views whose axes are within 60
   degrees of K's */
static void pick_neighbours(cs_depth_check *c, int k)
{
    float ok[3], ak[3];
    double dist[CS_DCHECK_NEIGHBOURS];
    int *nb = c->nb + (size_t)k * CS_DCHECK_NEIGHBOURS, m = 0;
    centre_axis(&c->view[k], ok, ak);
    for (int j = 0; j < c->n; j++) {
        float oj[3], aj[3];
        centre_axis(&c->view[j], oj, aj);
        if (j == k || ak[0] * aj[0] + ak[1] * aj[1] + ak[2] * aj[2] < 0.5f) continue;
        float d = (oj[0] - ok[0]) * (oj[0] - ok[0]) + (oj[1] - ok[1]) * (oj[1] - ok[1]) + (oj[2] - ok[2]) * (oj[2] - ok[2]);
        m = cs_nearest_insert(dist, nb, m, CS_DCHECK_NEIGHBOURS, d, j);
    }
    for (int i = m; i < CS_DCHECK_NEIGHBOURS; i++) nb[i] = -1;
}

int cs_depth_check_init(cs_depth_check *c, const cs_view *v, int n, int min_agree, size_t host_bytes)
{
    memset(c, 0, sizeof *c);
    c->n = n, c->min_agree = min_agree;
    size_t px = 0;
    for (int k = 0; k < n; k++) px += (size_t)v[k].width * v[k].height;
    c->stride = 1;
    while (px * sizeof(float) / ((size_t)c->stride * c->stride) > host_bytes) c->stride++;
    c->view = malloc(sizeof *c->view * (n ? n : 1));
    c->sw = malloc(sizeof(int) * (n ? n : 1)), c->sh = malloc(sizeof(int) * (n ? n : 1));
    c->depth = calloc(n ? n : 1, sizeof(float *));
    c->nb = malloc(sizeof(int) * CS_DCHECK_NEIGHBOURS * (n ? n : 1));
    if (!c->view || !c->sw || !c->sh || !c->depth || !c->nb) {
        cs_depth_check_free(c);
        return cs_fail("out of host memory (the depth check of %d views)", n);
    }
    memcpy(c->view, v, sizeof *v * n);
    for (int k = 0; k < n; k++) {
        c->sw[k] = (v[k].width + c->stride - 1) / c->stride, c->sh[k] = (v[k].height + c->stride - 1) / c->stride;
        pick_neighbours(c, k);
    }
    return 0;
}

int cs_depth_check_store(cs_depth_check *c, int k, const float *depth)
{
    int s = c->stride, W = c->view[k].width;
    float *d = malloc(sizeof(float) * ((size_t)c->sw[k] * c->sh[k] + 1));
    if (!d) return cs_fail("out of host memory (view %d's depth for the depth check)", k);
    for (int y = 0; y < c->sh[k]; y++)
        for (int x = 0; x < c->sw[k]; x++) d[(size_t)y * c->sw[k] + x] = depth[(size_t)y * s * W + (size_t)x * s];
    free(c->depth[k]);
    c->depth[k] = d;
    return 0;
}

/* does stored view J see a surface at world point P (within CS_DCHECK_TOL of its depth there)? */
static int agrees(const cs_depth_check *c, int j, const float p[3])
{
    const cs_view *v = &c->view[j];
    const float *m = v->cam.s;
    float x = m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[9];
    float y = m[3] * p[0] + m[4] * p[1] + m[5] * p[2] + m[10];
    float z = m[6] * p[0] + m[7] * p[1] + m[8] * p[2] + m[11];
    if (!(z > 1e-6f) || !c->depth[j]) return 0;
    float u = (v->intr.s[0] * x / z + v->intr.s[2]) / (float)c->stride;
    float w = (v->intr.s[1] * y / z + v->intr.s[3]) / (float)c->stride;
    if (!(u > -0.5f && w > -0.5f && u < (float)c->sw[j] - 0.5f && w < (float)c->sh[j] - 0.5f)) return 0;
    float d = c->depth[j][(size_t)(int)(w + 0.5f) * c->sw[j] + (int)(u + 0.5f)];
    if (!(d > 0.f)) return 0;
    return fabsf(d - z) <= CS_DCHECK_TOL * z;
}

/* the world point of view V's pixel (X, Y) at camera depth D */
static void unproject(const cs_view *v, int x, int y, float d, float p[3])
{
    const float *m = v->cam.s;
    float c[3] = {((float)x - v->intr.s[2]) / v->intr.s[0] * d - m[9], ((float)y - v->intr.s[3]) / v->intr.s[1] * d - m[10],
                  d - m[11]};
    for (int i = 0; i < 3; i++) p[i] = m[i] * c[0] + m[3 + i] * c[1] + m[6 + i] * c[2];
}

/* does the check drop view K's pixel (X, Y) at depth D (> 0)? P: its world point */
static int drops(const cs_depth_check *c, int k, int x, int y, float d, float p[3])
{
    const int *nb = c->nb + (size_t)k * CS_DCHECK_NEIGHBOURS;
    int have = 0;
    while (have < CS_DCHECK_NEIGHBOURS && nb[have] >= 0) have++;
    int need = c->min_agree < have ? c->min_agree : have, agree = 0;
    unproject(&c->view[k], x, y, d, p);
    for (int i = 0; i < have && agree < need; i++) agree += agrees(c, nb[i], p);
    return agree < need;
}

long cs_depth_check_filter(const cs_depth_check *c, int k, float *depth, long *seen)
{
    const cs_view *v = &c->view[k];
    long dropped = 0;
    *seen = 0;
    for (int y = 0; y < v->height; y++)
        for (int x = 0; x < v->width; x++) {
            float *d = depth + (size_t)y * v->width + x, p[3];
            if (!(*d > 0.f)) continue;
            (*seen)++;
            if (drops(c, k, x, y, *d, p)) *d = c->carve_dropped ? -*d : 0.f, dropped++;
        }
    return dropped;
}

void cs_depth_check_points(const cs_depth_check *c, int k, int every, cs_dcheck_point_fn fn, void *arg)
{
    const float *m = c->depth[k];
    every = every < 1 ? 1 : every;
    for (int y = 0; m && y < c->sh[k]; y += every)
        for (int x = 0; x < c->sw[k]; x += every) {
            float d = m[(size_t)y * c->sw[k] + x], p[3];
            if (d > 0.f) {
                int dropped = drops(c, k, x * c->stride, y * c->stride, d, p);
                fn(arg, k, p, d, dropped);
            }
        }
}

void cs_depth_check_free(cs_depth_check *c)
{
    for (int k = 0; c->depth && k < c->n; k++) free(c->depth[k]);
    free(c->view), free(c->sw), free(c->sh), free(c->depth), free(c->nb);
    memset(c, 0, sizeof *c);
}
