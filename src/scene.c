/* scene: format detection, resolution rules, splits, image reading, extent. */
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int cs_scene_load(const cs_config *cfg, cs_scene *out)
{
    memset(out, 0, sizeof *out);
    const char *root = cfg->data.path;
    if (!root[0]) return cs_fail("no dataset: set data.path in the config or pass -s DIR");
    if (!cs_dir_exists(root)) return cs_fail("dataset folder %s does not exist", root);
    char p[4200];
    float bg = cfg->data.white_background ? 1.0f : 0.0f;
    out->background[0] = out->background[1] = out->background[2] = bg;
    int r;
    snprintf(p, sizeof p, "%s/sparse/0", root);
    int has_colmap = cs_dir_exists(p);
    snprintf(p, sizeof p, "%s/transforms_train.json", root);
    int has_blender = cs_file_exists(p);
    snprintf(p, sizeof p, "%s/transforms.json", root);
    int has_ns = cs_file_exists(p);
    if (has_colmap) r = cs_scene_load_colmap(cfg, out);
    else if (has_blender) r = cs_scene_load_blender(cfg, out);
    else if (has_ns) r = cs_scene_load_nerfstudio(cfg, out);
    else
        return cs_fail("%s: not a dataset (expected sparse/0 (COLMAP), transforms_train.json (Blender) or "
                       "transforms.json (nerfstudio))", root);
    if (r) {
        cs_scene_free(out);
        return -1;
    }
    if (out->n_cams == 0) {
        cs_scene_free(out);
        return cs_fail("%s: the dataset has no cameras", root);
    }
    if (cs_scene_count(out, 0) == 0) {
        cs_scene_free(out);
        return cs_fail("%s: the dataset has no training cameras", root);
    }
    return 0;
}

void cs_scene_free(cs_scene *s)
{
    free(s->cams);
    free(s->points);
    free(s->colors);
    memset(s, 0, sizeof *s);
}

void cs_camera_stem(const cs_camera *c, char *out, size_t n)
{
    snprintf(out, n, "%s", c->name);
    char *dot = strrchr(out, '.');
    if (dot) *dot = '\0';
}

int cs_scene_count(const cs_scene *s, int test)
{
    int n = 0;
    for (int i = 0; i < s->n_cams; i++) n += (s->cams[i].is_test != 0) == (test != 0);
    return n;
}

/* graphdeco's rule: 1,2,4,8 divide and round; -1 caps the width at 1600; else a target width. */
int cs_camera_apply_resolution(cs_camera *c, int res)
{
    int w0 = c->file_width, h0 = c->file_height, w, h;
    if (res == 1 || res == 2 || res == 4 || res == 8) {
        w = (int)lround((double)w0 / res);
        h = (int)lround((double)h0 / res);
    } else {
        double down = res == -1 ? (w0 > 1600 ? w0 / 1600.0 : 1.0) : (double)w0 / res;
        w = (int)(w0 / down);
        h = (int)(h0 / down);
    }
    if (w < 1 || h < 1) return cs_fail("image %s: resolution %d gives an empty image", c->name, res);
    double sx = (double)w / w0, sy = (double)h / h0;
    c->fx *= sx;
    c->cx *= sx;
    c->fy *= sy;
    c->cy *= sy;
    c->width = w;
    c->height = h;
    return 0;
}

void cs_quat_to_rot(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double n = sqrt(w * w + x * x + y * y + z * z);
    if (n > 0) w /= n, x /= n, y /= n, z /= n;
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

void cs_camera_from_gl_c2w(cs_camera *c, const double m[16])
{
    /* flip the y and z camera axes (OpenGL -> OpenCV), then invert the rigid transform */
    double Rc[9], tc[3];
    for (int r = 0; r < 3; r++) {
        Rc[r * 3 + 0] = m[r * 4 + 0];
        Rc[r * 3 + 1] = -m[r * 4 + 1];
        Rc[r * 3 + 2] = -m[r * 4 + 2];
        tc[r] = m[r * 4 + 3];
    }
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) c->R[r * 3 + k] = Rc[k * 3 + r];
    for (int r = 0; r < 3; r++) c->t[r] = -(c->R[r * 3] * tc[0] + c->R[r * 3 + 1] * tc[1] + c->R[r * 3 + 2] * tc[2]);
}

void cs_camera_center(const cs_camera *c, double o[3])
{
    for (int k = 0; k < 3; k++) o[k] = -(c->R[0 * 3 + k] * c->t[0] + c->R[1 * 3 + k] * c->t[1] + c->R[2 * 3 + k] * c->t[2]);
}

static int cmp_cam_name(const void *a, const void *b)
{
    return strcmp(((const cs_camera *)a)->name, ((const cs_camera *)b)->name);
}

void cs_scene_split_every8(cs_scene *s, int eval)
{
    qsort(s->cams, s->n_cams, sizeof *s->cams, cmp_cam_name);
    for (int i = 0; i < s->n_cams; i++) s->cams[i].is_test = eval && i % 8 == 0;
}

double cs_scene_extent(const cs_scene *s)
{
    double mean[3] = {0, 0, 0}, c[3];
    int n = 0;
    for (int i = 0; i < s->n_cams; i++) {
        if (s->cams[i].is_test) continue;
        cs_camera_center(&s->cams[i], c);
        for (int k = 0; k < 3; k++) mean[k] += c[k];
        n++;
    }
    if (!n) return 1.0;
    for (int k = 0; k < 3; k++) mean[k] /= n;
    double maxd = 0;
    for (int i = 0; i < s->n_cams; i++) {
        if (s->cams[i].is_test) continue;
        cs_camera_center(&s->cams[i], c);
        double d = sqrt((c[0] - mean[0]) * (c[0] - mean[0]) + (c[1] - mean[1]) * (c[1] - mean[1]) +
                        (c[2] - mean[2]) * (c[2] - mean[2]));
        if (d > maxd) maxd = d;
    }
    return maxd * 1.1 > 0 ? maxd * 1.1 : 1.0;
}

int cs_scene_read_image(const cs_scene *s, const cs_camera *cam, cs_image *out)
{
    cs_image img;
    if (cs_image_load(cam->path, &img)) return -1;
    if (img.width != cam->file_width || img.height != cam->file_height) {
        int w = img.width, h = img.height;
        cs_image_free(&img);
        return cs_fail("%s: image is %dx%d but the dataset expects %dx%d", cam->path, w, h, cam->file_width,
                       cam->file_height);
    }
    if (cs_image_composite(&img, s->background)) {
        cs_image_free(&img);
        return -1;
    }
    if (img.width == cam->width && img.height == cam->height) {
        *out = img;
        return 0;
    }
    int r = cs_image_resize_area(&img, cam->width, cam->height, out);
    cs_image_free(&img);
    return r;
}
