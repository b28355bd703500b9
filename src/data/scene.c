/* scene: picks the reader for a dataset folder (COLMAP, Blender, nerfstudio) and decodes a
 * camera's image at the training resolution. */
#include "scene.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backdrop.h"
#include "block_plan.h"
#include "masks.h"
#include "readers.h"
#include "undistort.h"
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
        for (int k = 0; k < CS_LENS_MAX_PARAMS; k++)
            if (!isfinite(c->lens.k[k]))
                return cs_fail("%s: the %s distortion of %s is not finite", root, cs_lens_model_name(c->lens.model),
                               c->name);
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
    int from_photos = cs_config_background(cfg, out->background);
    if (from_photos < 0) return -1;
    int r;
    cs_colmap_model_dir(root, p, sizeof p);
    int has_colmap = cs_dir_exists(p);
    snprintf(p, sizeof p, "%s/transforms_train.json", root);
    int has_blender = cs_file_exists(p);
    snprintf(p, sizeof p, "%s/transforms.json", root);
    int has_ns = cs_file_exists(p);
    if (has_colmap) r = cs_read_colmap(cfg, out);
    else if (has_blender) r = cs_read_blender(cfg, out);
    else if (has_ns) r = cs_read_nerfstudio(cfg, out);
    else
        return cs_fail("%s: not a dataset (expected sparse/0 or sparse/ with cameras.bin (COLMAP), transforms_train.json (Blender) or "
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
    if ((cfg->block_plan[0] || cfg->block >= 0) &&
        (!cfg->block_plan[0] || cfg->block < 0 ? cs_fail("data.block_plan and data.block go together")
                                                : cs_block_restrict(out, root, cfg->block_plan, cfg->block, cfg->block_mask))) {
        cs_scene_free(out);
        return -1;
    }
    if (validate(root, out) || cs_masks_find(out, cfg) ||
        (from_photos && cs_backdrop_colour(out, out->background, &out->background_photos)) ||
        cs_undistort_prepare(out, cfg->undistort_crop == CS_CROP_FULL)) {
        cs_scene_free(out);
        return -1;
    }
    return 0;
}

void cs_scene_describe(const cs_scene *s, FILE *out)
{
    int nd = cs_undistort_count(s), nm = 0;
    for (int i = 0; i < s->n_cams; i++) nm += s->cams[i].mask_path[0] != '\0';
    if (nd) {
        const cs_camera *c = NULL;
        for (int i = 0; i < s->n_cams && !c; i++)
            if (s->cams[i].map >= 0) c = &s->cams[i];
        fprintf(out, "lens distortion: %d of %d views (%s, ...) undistorted when loaded: %dx%d photo -> %dx%d pinhole "
                     "fx %.1f; %d map%s, %.1f MiB host\n",
                nd, s->n_cams, cs_lens_model_name(c->lens.model), c->photo_width, c->photo_height, c->width, c->height,
                c->fx, s->n_maps, s->n_maps == 1 ? "" : "s", cs_undistort_bytes(s) / 1048576.0);
    }
    int turned = 0, tagged = 0;
    for (int i = 0; i < s->n_cams; i++) {
        turned += s->cams[i].orientation > 1;
        tagged += s->cams[i].exif_orientation > 1 && s->cams[i].orientation <= 1;
    }
    if (turned || tagged)
        fprintf(out, "EXIF orientation: %d photos turned upright (their camera has the upright size), %d tagged photos "
                     "used as stored (their camera has the stored size, as COLMAP reads them)\n", turned, tagged);
    if (s->block_region.on)
        fprintf(out, "block mask: pixels whose surface (the nearest sparse point, else the ray) lies outside the "
                     "block's expanded region are left out\n");
    if (s->background_photos)
        fprintf(out, "background %.3f %.3f %.3f: the mean colour of %d training photos' outer %g%% (data.background "
                     "border)\n", s->background[0], s->background[1], s->background[2], s->background_photos,
                CS_BACKDROP_BAND * 100);
    if (s->weighted)
        fprintf(out, "masks: %d of %d views have a mask file%s%s; the ground truth carries a weight (4 bytes a pixel)\n",
                nm, s->n_cams, s->alpha_as_mask ? ", the photos' alpha is a mask" : "",
                s->invert_masks ? " (inverted: white = left out)" : "");
}

/* IMG (decoded at its file size) with the weight channel of a weighted scene. */
static int add_weight(const cs_scene *s, const cs_camera *cam, cs_image *img)
{
    uint8_t *w = NULL;
    int r = cs_masks_weight(s, cam, img, &w) || cs_image_composite(img, s->background) || cs_masks_attach(img, w);
    free(w);
    return r;
}

int cs_scene_read_alpha(const cs_camera *cam, uint8_t **alpha)
{
    *alpha = NULL;
    cs_image img, small;
    if (cs_image_load(cam->path, &img)) return -1;
    int rc = cs_image_orient(&img, cam->orientation) ? cs_fail_prefix("%s", cam->path) : 0;
    if (!rc && (img.channels != 4 || cam->map >= 0)) {
        cs_image_free(&img);
        return 0;
    }
    if (!rc && (img.width != cam->photo_width || img.height != cam->photo_height)) {
        rc = cs_image_resize_area(&img, cam->photo_width, cam->photo_height, &small);
        cs_image_free(&img);
        if (rc) return -1;
        img = small;
    }
    size_t n = (size_t)img.width * img.height;
    *alpha = rc ? NULL : malloc(n ? n : 1);
    if (!rc && !*alpha) rc = cs_fail("out of host memory (the alpha of %s)", cam->name);
    for (size_t p = 0; !rc && p < n; p++) (*alpha)[p] = img.px[4 * p + 3];
    cs_image_free(&img);
    return rc;
}

double cs_scene_camera_spread(const cs_scene *s, double centre[3])
{
    double c[3] = {0, 0, 0}, far = 0;
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->n_cams; i++) {
            if (s->cams[i].is_test) continue;
            double p[3];
            cs_camera_center(&s->cams[i], p);
            if (pass == 0) {
                for (int k = 0; k < 3; k++) c[k] += p[k];
                n++;
            } else {
                far = fmax(far, sqrt(pow(p[0] - c[0] / n, 2) + pow(p[1] - c[1] / n, 2) + pow(p[2] - c[2] / n, 2)));
            }
        }
    for (int k = 0; centre && k < 3; k++) centre[k] = n ? c[k] / n : 0;
    return n ? far : -1;
}

double cs_scene_far_depth(const cs_scene *s)
{
    double spread = cs_scene_camera_spread(s, NULL);
    return spread < 0 ? -1 : 2 * spread;
}

int cs_scene_read_image(const cs_scene *s, const cs_camera *cam, cs_image *out)
{
    cs_image img;
    if (cs_image_load(cam->path, &img)) return -1;
    if (cs_image_orient(&img, cam->orientation)) {
        cs_image_free(&img);
        return cs_fail_prefix("%s", cam->path);
    }
    if (img.width != cam->file_width || img.height != cam->file_height) {
        int w = img.width, h = img.height;
        cs_image_free(&img);
        return cs_fail("%s: image is %dx%d but the dataset expects %dx%d", cam->path, w, h, cam->file_width,
                       cam->file_height);
    }
    if (s->weighted ? add_weight(s, cam, &img) : cs_image_composite(&img, s->background)) {
        cs_image_free(&img);
        return -1;
    }
    /* a distorted photo is undistorted from its full size (undistort.h), others resized */
    if (cam->map < 0 && (img.width != cam->photo_width || img.height != cam->photo_height)) {
        cs_image small;
        int r = cs_image_resize_area(&img, cam->photo_width, cam->photo_height, &small);
        cs_image_free(&img);
        if (r) return -1;
        img = small;
    }
    if (cs_undistort_image(s, cam, &img) || cs_masks_region(s, cam, &img, NULL)) {
        cs_image_free(&img);
        return -1;
    }
    *out = img;
    return 0;
}
