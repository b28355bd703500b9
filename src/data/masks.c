/* masks: mask files and the weight channel of the ground truth (masks.h). */
#include "masks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The mask of image NAME in DIR: <name>.png, <stem>.png or <name>; 1 when found (in OUT). */
static int find_mask(const char *dir, const char *name, char *out, size_t n)
{
    char stem[300];
    snprintf(stem, sizeof stem, "%s", name);
    char *dot = strrchr(stem, '.'), *slash = strrchr(stem, '/');
    if (dot && (!slash || dot > slash)) *dot = '\0';
    char cand[3][320];
    snprintf(cand[0], sizeof cand[0], "%s.png", name);
    snprintf(cand[1], sizeof cand[1], "%s.png", stem);
    snprintf(cand[2], sizeof cand[2], "%s", name);
    for (int i = 0; i < 3; i++)
        if (!cs_path_join(out, n, dir, cand[i]) && cs_file_exists(out)) return 1;
    out[0] = '\0';
    return 0;
}

int cs_masks_find(cs_scene *s, const cs_data_cfg *data)
{
    char dir[1400];
    int have_dir = data->masks[0] && !cs_path_join(dir, sizeof dir, data->path, data->masks) && cs_dir_exists(dir);
    int found = 0;
    for (int i = 0; i < s->n_cams; i++) {
        cs_camera *c = &s->cams[i];
        if (c->mask_path[0] && !cs_file_exists(c->mask_path))
            return cs_fail("%s: the mask of %s does not exist", c->mask_path, c->name);
        if (!c->mask_path[0] && have_dir) find_mask(dir, c->name, c->mask_path, sizeof c->mask_path);
        found += c->mask_path[0] != '\0';
    }
    s->alpha_as_mask = data->alpha_as_mask, s->invert_masks = data->invert_masks;
    if (found || s->alpha_as_mask) s->weighted = 1;
    return 0;
}

/* Mask file of camera C as weights of a W x H photo (resized when the mask's size differs but
   its aspect ratio agrees). */
static int mask_file_weight(const cs_camera *c, int invert, int w, int h, uint8_t *out)
{
    cs_image m, r;
    if (cs_image_load(c->mask_path, &m)) return -1;
    if (m.width != w || m.height != h) {
        double aspect = (double)m.width / m.height, want = (double)w / h;
        if (aspect / want > 1.01 || want / aspect > 1.01) {
            int mw = m.width, mh = m.height;
            cs_image_free(&m);
            return cs_fail("%s: mask is %dx%d but its photo %s is %dx%d (another aspect ratio)", c->mask_path, mw, mh,
                           c->name, w, h);
        }
        int rc = cs_image_resize_area(&m, w, h, &r);
        cs_image_free(&m);
        if (rc) return -1;
        m = r;
    }
    for (size_t p = 0; p < (size_t)w * h; p++) {
        const uint8_t *px = m.px + p * m.channels;
        int v = (px[0] + px[1] + px[2] + 1) / 3;
        out[p] = (uint8_t)(invert ? 255 - v : v);
    }
    cs_image_free(&m);
    return 0;
}

int cs_masks_weight(const cs_scene *s, const cs_camera *c, const cs_image *photo, uint8_t **w)
{
    size_t n = (size_t)photo->width * photo->height;
    uint8_t *out = malloc(n);
    if (!out) return cs_fail("out of host memory (the mask of %s)", c->name);
    memset(out, 255, n);
    if (c->mask_path[0] && mask_file_weight(c, s->invert_masks, photo->width, photo->height, out)) {
        free(out);
        return -1;
    }
    if (s->alpha_as_mask && photo->channels == 4)
        for (size_t p = 0; p < n; p++) {
            uint8_t a = photo->px[p * 4 + 3]; /* transparent: left out (data.invert_masks is for files) */
            if (a < out[p]) out[p] = a;
        }
    *w = out;
    return 0;
}

int cs_masks_attach(cs_image *img, const uint8_t *w)
{
    if (img->channels != 3) return cs_fail("internal: a weight goes onto an RGB image");
    size_t n = (size_t)img->width * img->height;
    uint8_t *px = malloc(n * 4);
    if (!px) return cs_fail("out of host memory (a %dx%d image with its mask)", img->width, img->height);
    for (size_t p = 0; p < n; p++) {
        memcpy(px + p * 4, img->px + p * 3, 3);
        px[p * 4 + 3] = w[p];
    }
    free(img->px);
    img->px = px;
    img->channels = 4;
    return 0;
}

/* the ray's parameters [*T0, *T1] inside the slab LO <= o + t d < HI of one ground axis */
static void slab(double o, double d, double lo, double hi, double *t0, double *t1)
{
    if (d == 0) {
        if (o < lo || o >= hi) *t0 = INFINITY, *t1 = -INFINITY;
        return;
    }
    double a = (lo - o) / d, b = (hi - o) / d; /* +-INFINITY bounds give +-INFINITY, never NaN */
    if (a > b) {
        double t = a;
        a = b, b = t;
    }
    *t0 = fmax(*t0, a), *t1 = fmin(*t1, b);
}

/* vector D (a point less the frame's origin, or a direction) along the ground frame's u and v */
static void ground_uv(const cs_ground_region *r, const double d[3], double uv[2])
{
    uv[0] = d[0] * r->u[0] + d[1] * r->u[1] + d[2] * r->u[2], uv[1] = d[0] * r->v[0] + d[1] * r->v[1] + d[2] * r->v[2];
}

int cs_ground_ray_hits(const cs_ground_region *r, const double o[3], const double d[3])
{
    double q[3] = {o[0] - r->origin[0], o[1] - r->origin[1], o[2] - r->origin[2]}, ouv[2], duv[2];
    ground_uv(r, q, ouv), ground_uv(r, d, duv);
    double t0 = 0, t1 = INFINITY;
    slab(ouv[0], duv[0], r->rect[0], r->rect[1], &t0, &t1);
    slab(ouv[1], duv[1], r->rect[2], r->rect[3], &t0, &t1);
    return t0 < t1;
}

#define REGION_CELL 16

/* per 16 x 16 cell of camera C's image: 1 when its nearest sparse point lies in R, 0 when
   outside, -1 when no point projects into it */
static signed char *nearest_inside(const cs_ground_region *r, const cs_camera *c, int gw, int gh)
{
    signed char *in = malloc((size_t)gw * gh);
    float *z = malloc(sizeof(float) * gw * gh);
    if (!in || !z) {
        free(in), free(z);
        return NULL;
    }
    memset(in, -1, (size_t)gw * gh);
    for (int p = 0; p < r->n_points; p++) {
        const float *x = r->points + 3 * p;
        double u, v, depth;
        if (!cs_camera_project(c, x, &u, &v, &depth) || !(u >= 0 && u < c->width && v >= 0 && v < c->height)) continue;
        int cell = (int)(v / REGION_CELL) * gw + (int)(u / REGION_CELL);
        if (in[cell] >= 0 && z[cell] <= depth) continue;
        double d[3] = {x[0] - r->origin[0], x[1] - r->origin[1], x[2] - r->origin[2]}, uv[2];
        ground_uv(r, d, uv);
        z[cell] = (float)depth;
        in[cell] = uv[0] >= r->rect[0] && uv[0] < r->rect[1] && uv[1] >= r->rect[2] && uv[1] < r->rect[3];
    }
    free(z);
    return in;
}

int cs_masks_region(const cs_scene *s, const cs_camera *c, cs_image *img, double *kept)
{
    if (kept) *kept = 1;
    const cs_ground_region *r = &s->block_region;
    if (!r->on) return 0;
    if (img->channels != 4 || img->width != c->width || img->height != c->height)
        return cs_fail("internal: %s: the block mask needs the %dx%d ground truth with its weight", c->name, c->width,
                       c->height);
    int gw = (c->width + REGION_CELL - 1) / REGION_CELL, gh = (c->height + REGION_CELL - 1) / REGION_CELL;
    signed char *in = nearest_inside(r, c, gw, gh);
    if (!in) return cs_fail("out of host memory (the block mask of %s)", c->name);
    double o[3];
    cs_camera_center(c, o);
    size_t n = 0;
    for (int j = 0; j < img->height; j++)
        for (int i = 0; i < img->width; i++) {
            int cell = in[(j / REGION_CELL) * gw + i / REGION_CELL], keep = cell;
            if (cell < 0) {
                double k[3] = {(i + 0.5 - c->cx) / c->fx, (j + 0.5 - c->cy) / c->fy, 1}, d[3];
                for (int a = 0; a < 3; a++) d[a] = c->R[a] * k[0] + c->R[3 + a] * k[1] + c->R[6 + a] * k[2];
                keep = cs_ground_ray_hits(r, o, d);
            }
            if (!keep) img->px[((size_t)j * img->width + i) * 4 + 3] = 0;
            n += keep != 0;
        }
    free(in);
    if (kept) *kept = (double)n / ((size_t)img->width * img->height);
    return 0;
}
