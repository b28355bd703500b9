/* masks: mask files and the weight channel of the ground truth (masks.h). */
#include "masks.h"

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
