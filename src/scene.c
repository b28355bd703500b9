/* scene: picks the reader for a dataset folder (COLMAP, Blender, nerfstudio) and decodes a
 * camera's image at the training resolution. */
#include "scene.h"

#include <stdio.h>
#include <string.h>

#include "readers.h"
#include "util.h"

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
