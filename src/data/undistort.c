/* undistort: ideal pinholes and undistortion maps of a scene's distorted cameras (undistort.h). */
#include "undistort.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* An earlier camera than CI with a map, the same lens and photo size, or NULL. */
static const cs_camera *same_lens_before(const cs_scene *s, int ci)
{
    const cs_camera *c = &s->cams[ci];
    for (int i = 0; i < ci; i++) {
        const cs_camera *o = &s->cams[i];
        if (o->map >= 0 && o->photo_width == c->photo_width && o->photo_height == c->photo_height &&
            !memcmp(&o->lens, &c->lens, sizeof c->lens))
            return o;
    }
    return NULL;
}

/* Whether pixel coordinates (X, Y) (centres at +0.5) lie on a W x H image. */
static int inside(float x, float y, int w, int h) { return x >= 0 && x <= w && y >= 0 && y <= h; }

/* The bilinear taps of pixel coordinates (X, Y) (centres at +0.5, clamped to the edge centres)
   on a W x H grid: pixel indices X0..X1, Y0..Y1 and the weights TX, TY of X1, Y1. */
static void bilinear_taps(float x, float y, int w, int h, int *x0, int *x1, int *y0, int *y1, float *tx, float *ty)
{
    float fx = x - 0.5f, fy = y - 0.5f;
    fx = fx < 0 ? 0 : fx > w - 1 ? (float)(w - 1) : fx;
    fy = fy < 0 ? 0 : fy > h - 1 ? (float)(h - 1) : fy;
    *x0 = (int)fx, *y0 = (int)fy;
    *x1 = *x0 + 1 < w ? *x0 + 1 : *x0, *y1 = *y0 + 1 < h ? *y0 + 1 : *y0;
    *tx = fx - *x0, *ty = fy - *y0;
}

/* A new map of camera C (already given its ideal pinhole) in S; its index, or -1. */
static int add_map(cs_scene *s, const cs_camera *c)
{
    cs_undistort_map *m = realloc(s->maps, sizeof *m * (size_t)(s->n_maps + 1));
    if (!m) return cs_fail("out of host memory (undistortion maps)");
    s->maps = m;
    float *xy = malloc(sizeof(float) * 2 * (size_t)c->width * c->height);
    if (!xy) return cs_fail("out of host memory (the %dx%d undistortion map of %s)", c->width, c->height, c->name);
    cs_lens_map(&c->lens, c->fx, c->fy, c->cx, c->cy, c->width, c->height, xy);
    s->maps[s->n_maps] = (cs_undistort_map){xy, c->width, c->height};
    return s->n_maps++;
}

/* Whether some pixel of map M lands outside a W x H photo. */
static int has_invalid(const cs_undistort_map *m, int w, int h)
{
    for (size_t p = 0; p < (size_t)m->width * m->height; p++)
        if (!inside(m->xy[2 * p], m->xy[2 * p + 1], w, h)) return 1;
    return 0;
}

int cs_undistort_prepare(cs_scene *s, int crop_full)
{
    for (int i = 0; i < s->n_cams; i++) {
        cs_camera *c = &s->cams[i];
        c->map = -1;
        c->photo_width = c->width, c->photo_height = c->height;
        c->lens.fx = c->fx, c->lens.fy = c->fy, c->lens.cx = c->cx, c->lens.cy = c->cy;
        if (cs_lens_is_pinhole(&c->lens)) continue;
        if (!cs_lens_supported(c->lens.model))
            return cs_fail("%s: the %s camera model is not supported (supported: the pinholes, SIMPLE_RADIAL, RADIAL, "
                           "OPENCV, FULL_OPENCV, OPENCV_FISHEYE, SIMPLE_RADIAL_FISHEYE, RADIAL_FISHEYE)",
                           c->name, cs_lens_model_name(c->lens.model));
        const cs_camera *o = same_lens_before(s, i);
        if (o) {
            c->fx = o->fx, c->fy = o->fy, c->cx = o->cx, c->cy = o->cy, c->width = o->width, c->height = o->height;
            c->map = o->map;
            continue;
        }
        if (cs_lens_ideal(&c->lens, c->photo_width, c->photo_height, crop_full, &c->fx, &c->fy, &c->cx, &c->cy,
                          &c->width, &c->height))
            return cs_fail_prefix("%s: cannot undistort its photo", c->name);
        if ((c->map = add_map(s, c)) < 0) return -1;
        if (crop_full && has_invalid(&s->maps[c->map], c->photo_width, c->photo_height)) s->weighted = 1;
    }
    return 0;
}

/* Map M at the fractional ideal pixel position (X, Y) (pixel units, centres at +0.5), bilinear
   between its pixel centres (the map is smooth), into *PX, *PY. */
static void map_at(const cs_undistort_map *m, float x, float y, float *px, float *py)
{
    int x0, x1, y0, y1;
    float tx, ty;
    bilinear_taps(x, y, m->width, m->height, &x0, &x1, &y0, &y1, &tx, &ty);
    for (int c = 0; c < 2; c++) {
        float a = m->xy[((size_t)y0 * m->width + x0) * 2 + c], b = m->xy[((size_t)y0 * m->width + x1) * 2 + c];
        float d = m->xy[((size_t)y1 * m->width + x0) * 2 + c], e = m->xy[((size_t)y1 * m->width + x1) * 2 + c];
        *(c ? py : px) = (a + (b - a) * tx) * (1 - ty) + (d + (e - d) * tx) * ty;
    }
}

/* Adds SRC bilinear at pixel coordinates (X, Y) (centres at +0.5) to ACC; 0 when outside. */
static void sample_bilinear(const cs_image *src, float x, float y, float *acc)
{
    int W = src->width, H = src->height, ch = src->channels, x0, x1, y0, y1;
    if (!inside(x, y, W, H)) return;
    float tx, ty;
    bilinear_taps(x, y, W, H, &x0, &x1, &y0, &y1, &tx, &ty);
    const uint8_t *a = src->px + ((size_t)y0 * W + x0) * ch, *b = src->px + ((size_t)y0 * W + x1) * ch;
    const uint8_t *d = src->px + ((size_t)y1 * W + x0) * ch, *e = src->px + ((size_t)y1 * W + x1) * ch;
    for (int c = 0; c < ch; c++) acc[c] += (a[c] + (b[c] - a[c]) * tx) * (1 - ty) + (d[c] + (e[c] - d[c]) * tx) * ty;
}

/* A photo larger than the training resolution (IMG, K times or so): each ideal pixel averages
   K x K bilinear samples of the full photo at the points the map gives (the photo is never
   resampled twice, so fine detail survives). */
static int remap_supersampled(const cs_undistort_map *m, const cs_image *img, double sx, double sy, int k,
                              cs_image *out)
{
    int ch = img->channels;
    *out = (cs_image){m->width, m->height, ch, malloc((size_t)m->width * m->height * ch)};
    if (!out->px) return cs_fail("out of host memory (a %dx%d undistorted photo)", m->width, m->height);
    for (int y = 0; y < m->height; y++)
        for (int x = 0; x < m->width; x++) {
            float acc[4] = {0, 0, 0, 0};
            for (int j = 0; j < k; j++)
                for (int i = 0; i < k; i++) {
                    float px, py;
                    map_at(m, x + (i + 0.5f) / k, y + (j + 0.5f) / k, &px, &py);
                    sample_bilinear(img, (float)(px * sx), (float)(py * sy), acc);
                }
            for (int c = 0; c < ch; c++)
                out->px[((size_t)y * m->width + x) * ch + c] = (uint8_t)(acc[c] / (k * k) + 0.5f);
        }
    return 0;
}

int cs_undistort_image(const cs_scene *s, const cs_camera *c, cs_image *img)
{
    if (c->map < 0) return 0;
    if (img->width < c->photo_width || img->height < c->photo_height)
        return cs_fail("internal: %s is %dx%d, smaller than its %dx%d photo size", c->name, img->width, img->height,
                       c->photo_width, c->photo_height);
    const cs_undistort_map *m = &s->maps[c->map];
    double sx = (double)img->width / c->photo_width, sy = (double)img->height / c->photo_height;
    int k = (int)lround(sx > sy ? sx : sy);
    cs_image out;
    int r = sx == 1 && sy == 1 ? cs_image_remap(img, m->xy, m->width, m->height, &out, NULL)
                                         : remap_supersampled(m, img, sx, sy, k < 1 ? 1 : k > 8 ? 8 : k, &out);
    if (r) return -1;
    cs_image_free(img);
    *img = out;
    return 0;
}

size_t cs_undistort_bytes(const cs_scene *s)
{
    size_t b = 0;
    for (int i = 0; i < s->n_maps; i++) b += sizeof(float) * 2 * (size_t)s->maps[i].width * s->maps[i].height;
    return b;
}

int cs_undistort_count(const cs_scene *s)
{
    int n = 0;
    for (int i = 0; i < s->n_cams; i++) n += s->cams[i].map >= 0;
    return n;
}
