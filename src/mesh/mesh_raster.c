/* mesh_raster: the host rasterizer of clsplat mesh --eval. */
#include "mesh_raster.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "mesh_texture.h"
#include "util.h"

typedef struct {
    int W, H;
    int row0, row1; /* the band of rows this target draws: [row0, row1) */
    float *depth;   /* (H, W), +inf where nothing is drawn */
    int32_t *tri;   /* (H, W), -1 where nothing is drawn */
    float *w;       /* (H, W, 3) the corners' perspective-correct weights */
} target;

/* twice the signed area of (a, b, p) */
static float edge(const float *a, const float *b, float px, float py)
{
    return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]);
}

/* a pixel index in [0, n - 1] from a whole float of any size */
static int clamp_px(float f, int n)
{
    return f < 0.f ? 0 : f > (float)(n - 1) ? n - 1 : (int)f;
}

/* draws triangle T whose corners project to P (u, v, z each) */
static void draw_triangle(target *tg, int32_t t, const float *p[3])
{
    float area = edge(p[0], p[1], p[2][0], p[2][1]);
    if (area == 0.f || !isfinite(area)) return;
    float lo_u = fminf(p[0][0], fminf(p[1][0], p[2][0])), hi_u = fmaxf(p[0][0], fmaxf(p[1][0], p[2][0]));
    float lo_v = fminf(p[0][1], fminf(p[1][1], p[2][1])), hi_v = fmaxf(p[0][1], fmaxf(p[1][1], p[2][1]));
    /* pixel i covers [i, i + 1) with its centre at i + 0.5 */
    int x0 = clamp_px(ceilf(lo_u - 0.5f), tg->W), x1 = clamp_px(floorf(hi_u - 0.5f), tg->W);
    int y0 = clamp_px(ceilf(lo_v - 0.5f), tg->H), y1 = clamp_px(floorf(hi_v - 0.5f), tg->H);
    if (lo_u - 0.5f > tg->W - 1 || hi_u < 0.5f || lo_v - 0.5f > tg->H - 1 || hi_v < 0.5f) return;
    y0 = y0 > tg->row0 ? y0 : tg->row0, y1 = y1 < tg->row1 - 1 ? y1 : tg->row1 - 1;
    float iz[3] = {1.f / p[0][2], 1.f / p[1][2], 1.f / p[2][2]};
    for (int y = y0; y <= y1; y++) {
        float py = y + 0.5f;
        for (int x = x0; x <= x1; x++) {
            float px = x + 0.5f;
            float b0 = edge(p[1], p[2], px, py) / area, b1 = edge(p[2], p[0], px, py) / area, b2 = 1.f - b0 - b1;
            if (b0 < 0.f || b1 < 0.f || b2 < 0.f) continue;
            float w0 = b0 * iz[0], w1 = b1 * iz[1], w2 = b2 * iz[2], s = w0 + w1 + w2, z = 1.f / s;
            size_t i = (size_t)y * tg->W + x;
            if (!(z < tg->depth[i])) continue;
            tg->depth[i] = z, tg->tri[i] = t;
            tg->w[3 * i] = w0 * z, tg->w[3 * i + 1] = w1 * z, tg->w[3 * i + 2] = w2 * z;
        }
    }
}

/* every vertex in camera C's pixels and depth: (u, v, z), z <= NEAR marks one behind (its u, v NaN
   when it is not in front at all) */
static void project_vertices(const cs_mesh *m, const cs_camera *c, float *uvz)
{
    for (size_t i = 0; i < m->nv; i++) {
        float *o = uvz + 3 * i;
        double u, v, z;
        int front = cs_camera_project(c, m->pos + 3 * i, &u, &v, &z);
        o[0] = front ? (float)u : NAN, o[1] = front ? (float)v : NAN, o[2] = (float)z;
    }
}

typedef struct {
    const cs_mesh *m;
    const float *uvz;
    target tg;
    pthread_t th;
    int running; /* its thread started (else it is drawn on the caller's) */
} band;

/* every triangle drawn into the band's rows (a pixel belongs to one band: the same result as
   one thread drawing them all, in the same triangle order) */
static void *draw_band(void *arg)
{
    band *b = arg;
    for (size_t t = 0; t < b->m->nt; t++) {
        const uint32_t *v = b->m->tri + 3 * t;
        const float *p[3] = {b->uvz + 3 * v[0], b->uvz + 3 * v[1], b->uvz + 3 * v[2]};
        if (p[0][2] <= CS_MESH_RASTER_NEAR || p[1][2] <= CS_MESH_RASTER_NEAR || p[2][2] <= CS_MESH_RASTER_NEAR) continue;
        draw_triangle(&b->tg, (int32_t)t, p);
    }
    return NULL;
}

/* threads for a visibility buffer of H rows: THREADS (0: the cores, at most 16), at least 8
   rows each */
static int bands_for(int H, int threads)
{
    long cores = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
    int n = cores > 16 ? 16 : cores < 1 ? 1 : (int)cores;
    return n > H / 8 ? (H / 8 > 1 ? H / 8 : 1) : n;
}

int cs_mesh_visibility(const cs_mesh *m, const cs_camera *c, int threads, int32_t *tri, float *w)
{
    int W = c->width, H = c->height, nb = bands_for(c->height, threads);
    size_t n = (size_t)W * H;
    float *uvz = malloc(sizeof(float) * 3 * (m->nv ? m->nv : 1)), *depth = malloc(sizeof(float) * (n ? n : 1));
    band *b = calloc((size_t)nb, sizeof *b);
    if (!uvz || !depth || !b) {
        free(uvz), free(depth), free(b);
        return cs_fail("out of host memory rasterizing a mesh of %zu vertices at %dx%d", m->nv, W, H);
    }
    for (size_t i = 0; i < n; i++) depth[i] = INFINITY, tri[i] = -1;
    project_vertices(m, c, uvz);
    for (int k = 0; k < nb; k++)
        b[k] = (band){m, uvz, {W, H, (int)((long)H * k / nb), (int)((long)H * (k + 1) / nb), depth, tri, w}, 0, 0};
    for (int k = 1; k < nb; k++) b[k].running = pthread_create(&b[k].th, NULL, draw_band, &b[k]) == 0;
    draw_band(&b[0]);
    for (int k = 1; k < nb; k++) {
        if (b[k].running) pthread_join(b[k].th, NULL);
        else draw_band(&b[k]);
    }
    free(uvz), free(depth), free(b);
    return 0;
}

/* the colour of sample I of the visibility buffer (TRI, W) of M, BG where none (0-255); 1 when drawn */
static int sample_colour(const cs_mesh *m, const int32_t *tri, const float *w, size_t i, const float bg[3], float rgb[3])
{
    if (tri[i] < 0) {
        for (int ch = 0; ch < 3; ch++) rgb[ch] = bg[ch] * 255.f;
        return 0;
    }
    if (m->tex) {
        cs_mesh_tex_sample(m, (size_t)tri[i], w[3 * i + 1], w[3 * i + 2], rgb);
        return 1;
    }
    const uint32_t *v = m->tri + 3 * (size_t)tri[i];
    for (int ch = 0; ch < 3; ch++)
        rgb[ch] = w[3 * i] * m->rgb[3 * v[0] + ch] + w[3 * i + 1] * m->rgb[3 * v[1] + ch] +
                  w[3 * i + 2] * m->rgb[3 * v[2] + ch];
    return 1;
}

cs_camera cs_mesh_raster_camera(const cs_camera *c, int S)
{
    cs_camera hi = *c;
    hi.width *= S, hi.height *= S, hi.fx *= S, hi.fy *= S, hi.cx *= S, hi.cy *= S;
    return hi;
}

int cs_mesh_rasterize(const cs_mesh *m, const cs_camera *c, const float bg[3], int samples, cs_image *out,
                      double *covered, uint8_t *drawn)
{
    int S = samples > 1 ? samples : 1;
    cs_camera hi = cs_mesh_raster_camera(c, S);
    size_t n = (size_t)c->width * c->height, ns = n * S * S;
    int32_t *tri = malloc(sizeof(int32_t) * (ns ? ns : 1));
    float *w = malloc(sizeof(float) * 3 * (ns ? ns : 1));
    out->px = malloc(3 * (n ? n : 1));
    if (!tri || !w || !out->px) {
        free(tri), free(w), free(out->px);
        out->px = NULL;
        return cs_fail("out of host memory rasterizing a mesh of %zu vertices at %dx%d", m->nv, hi.width, hi.height);
    }
    out->width = c->width, out->height = c->height, out->channels = 3;
    if (cs_mesh_visibility(m, &hi, 1, tri, w)) { /* --psnr draws a view a thread already */
        free(tri), free(w), free(out->px);
        out->px = NULL;
        return -1;
    }
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        size_t x = i % (size_t)c->width, y = i / (size_t)c->width, k = 0;
        float sum[3] = {0, 0, 0}, rgb[3];
        for (int sy = 0; sy < S; sy++)
            for (int sx = 0; sx < S; sx++) {
                k += (size_t)sample_colour(m, tri, w, (y * S + sy) * (size_t)hi.width + x * S + sx, bg, rgb);
                for (int ch = 0; ch < 3; ch++) sum[ch] += rgb[ch];
            }
        if (drawn) drawn[i] = 2 * k >= (size_t)(S * S) && k > 0;
        count += k;
        for (int ch = 0; ch < 3; ch++) {
            float f = sum[ch] / (float)(S * S) + 0.5f;
            out->px[3 * i + ch] = (uint8_t)(f < 0.f ? 0.f : f > 255.f ? 255.f : f);
        }
    }
    if (covered) *covered = ns ? (double)count / ns : 0;
    free(tri), free(w);
    return 0;
}
