/* scene: picks the reader for a dataset folder (COLMAP, Blender, nerfstudio) and decodes a
 * camera's image at the training resolution. */
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "readers.h"
#include "util.h"

/* Geometry a reader produced that no render can use: non-finite or non-positive focal lengths,
   non-finite principal points, poses or initial points. */
static int validate(const char *root, const cs_scene *s)
{
    for (int i = 0; i < s->n_cams; i++) {
        const cs_camera *c = &s->cams[i];
        int ok = isfinite(c->fx) && isfinite(c->fy) && c->fx > 0 && c->fy > 0 && isfinite(c->cx) && isfinite(c->cy) &&
                 c->width >= 1 && c->height >= 1;
        if (!ok)
            return cs_fail("%s: camera of %s has intrinsics fx %g fy %g cx %g cy %g at %dx%d: focal lengths must be "
                           "positive and all finite", root, c->name, c->fx, c->fy, c->cx, c->cy, c->width, c->height);
        for (int k = 0; k < 12; k++)
            if (!isfinite(k < 9 ? c->R[k] : c->t[k - 9]))
                return cs_fail("%s: the pose of %s is not finite", root, c->name);
    }
    long bad = 0;
    for (int i = 0; i < s->n_points * 3; i += 3)
        bad += !isfinite(s->points[i]) || !isfinite(s->points[i + 1]) || !isfinite(s->points[i + 2]);
    if (bad) return cs_fail("%s: %ld of the %d initial points are not finite", root, bad, s->n_points);
    return 0;
}

int cs_scene_load(const cs_data_cfg *cfg, cs_scene *out)
{
    memset(out, 0, sizeof *out);
    const char *root = cfg->path;
    if (!root[0]) return cs_fail("no dataset: set data.path in the config or pass -s DIR");
    if (!cs_dir_exists(root)) return cs_fail("dataset folder %s does not exist", root);
    char p[4200];
    float bg = cfg->white_background ? 1.0f : 0.0f;
    out->background[0] = out->background[1] = out->background[2] = bg;
    int r;
    snprintf(p, sizeof p, "%s/sparse/0", root);
    int has_colmap = cs_dir_exists(p);
    snprintf(p, sizeof p, "%s/transforms_train.json", root);
    int has_blender = cs_file_exists(p);
    snprintf(p, sizeof p, "%s/transforms.json", root);
    int has_ns = cs_file_exists(p);
    if (has_colmap) r = cs_read_colmap(cfg, out);
    else if (has_blender) r = cs_read_blender(cfg, out);
    else if (has_ns) r = cs_read_nerfstudio(cfg, out);
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
    if (validate(root, out)) {
        cs_scene_free(out);
        return -1;
    }
    return 0;
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
