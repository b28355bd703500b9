/* scene_blender: NeRF-synthetic transforms_{train,test}.json and nerfstudio transforms.json
 * (with its lens distortion, masks and initial point cloud). */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "ply.h"
#include "readers.h"
#include "util.h"

static int read_matrix(json_t *frame, const char *path, size_t idx, double m[16])
{
    json_t *tm = json_object_get(frame, "transform_matrix");
    if (!json_is_array(tm) || json_array_size(tm) < 3)
        return cs_fail("%s: frame %zu: transform_matrix must be a 4x4 array", path, idx);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            json_t *row = json_array_get(tm, r);
            json_t *v = row ? json_array_get(row, c) : NULL;
            if (r == 3 && !row) {
                m[12 + c] = c == 3;
                continue;
            }
            if (!json_is_number(v)) return cs_fail("%s: frame %zu: transform_matrix[%d][%d] is not a number", path, idx, r, c);
            m[r * 4 + c] = json_number_value(v);
        }
    return 0;
}

static int grow(cs_scene *s, int *cap)
{
    if (s->n_cams < *cap) return 0;
    *cap = *cap ? *cap * 2 : 128;
    cs_camera *nc = realloc(s->cams, sizeof *nc * *cap);
    if (!nc) return cs_fail("out of host memory");
    s->cams = nc;
    return 0;
}

/* Resolves a frame's file path; Blender omits the extension (.png, or a JPEG's). 1 (with the
   message set) when no such photo exists, -1 on other errors. */
static int resolve_image(const char *root, const char *rel, char *out, size_t n)
{
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".PNG", ".JPG", ".JPEG"};
    if (cs_path_join(out, n, root, rel)) return -1;
    if (cs_file_exists(out)) return 0;
    char tmp[4200];
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
        snprintf(tmp, sizeof tmp, "%s%s", out, exts[i]);
        if (cs_file_exists(tmp) && strlen(tmp) < n) {
            strcpy(out, tmp);
            return 0;
        }
    }
    cs_fail("%s: image file does not exist (also tried .png, .jpg and .jpeg after it; data.skip_missing_images=true "
            "leaves such frames out)", out);
    return 1;
}

/* A frame's photo into C->path: 0 found, 1 missing and skipped (data.skip_missing_images, counted
   in M), -1 refused. */
static int frame_image(const cs_data_cfg *cfg, const char *rel, cs_camera *c, cs_missing *m)
{
    int r = resolve_image(cfg->path, rel, c->path, sizeof c->path);
    if (r <= 0) return r;
    if (!cfg->skip_missing_images) return -1;
    cs_missing_add(m, c->path);
    return 1;
}

static int load_split(const cs_data_cfg *cfg, cs_scene *s, int *cap, const char *file, int is_test)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", cfg->path, file);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) return cs_fail("%s: line %d: %s", path, err.line, err.text);
    int ret = -1;
    json_t *fov = json_object_get(root, "camera_angle_x");
    json_t *frames = json_object_get(root, "frames");
    if (!json_is_number(fov)) {
        cs_fail("%s: missing number 'camera_angle_x'", path);
        goto done;
    }
    if (!(json_number_value(fov) > 0 && json_number_value(fov) < M_PI)) {
        cs_fail("%s: camera_angle_x %g is not a field of view in (0, pi)", path, json_number_value(fov));
        goto done;
    }
    if (!json_is_array(frames)) {
        cs_fail("%s: missing array 'frames'", path);
        goto done;
    }
    double fovx = json_number_value(fov);
    cs_missing missing = {0};
    size_t i;
    json_t *fr;
    json_array_foreach(frames, i, fr)
    {
        json_t *fp = json_object_get(fr, "file_path");
        if (!json_is_string(fp)) {
            cs_fail("%s: frame %zu: missing 'file_path'", path, i);
            goto done;
        }
        if (grow(s, cap)) goto done;
        cs_camera *c = &s->cams[s->n_cams];
        memset(c, 0, sizeof *c);
        int found = frame_image(cfg, json_string_value(fp), c, &missing);
        if (found < 0) goto done;
        if (found) continue;
        const char *base = strrchr(c->path, '/');
        snprintf(c->name, sizeof c->name, "%s", base ? base + 1 : c->path);
        double m[16];
        if (read_matrix(fr, path, i, m)) goto done;
        cs_camera_from_gl_c2w(c, m);
        if (cs_image_size(c->path, &c->file_width, &c->file_height)) goto done;
        /* graphdeco: fy from fovy = focal2fov(fov2focal(fovx, W), H), i.e. fy = fx */
        c->fx = c->fy = c->file_width / (2.0 * tan(fovx / 2.0));
        c->cx = c->file_width / 2.0;
        c->cy = c->file_height / 2.0;
        if (cs_camera_apply_resolution(c, cfg->resolution)) goto done;
        c->is_test = is_test;
        s->n_cams++;
    }
    cs_missing_note(&missing, (int)json_array_size(frames), path);
    ret = 0;
done:
    json_decref(root);
    return ret;
}

int cs_read_blender(const cs_data_cfg *cfg, cs_scene *s)
{
    s->kind = CS_SCENE_BLENDER;
    int cap = 0;
    if (load_split(cfg, s, &cap, "transforms_train.json", 0)) return -1;
    char p[4200];
    snprintf(p, sizeof p, "%s/transforms_test.json", cfg->path);
    /* graphdeco: without eval the test views are trained on too */
    if (cs_file_exists(p) && load_split(cfg, s, &cap, "transforms_test.json", cfg->eval ? 1 : 0)) return -1;
    return 0;
}

static double num_or(json_t *o, json_t *fallback, const char *key, double def, int *found)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v) && fallback) v = json_object_get(fallback, key);
    if (json_is_number(v)) {
        if (found) *found = 1;
        return json_number_value(v);
    }
    if (found) *found = 0;
    return def;
}

/* -1 with a message when a camera key of the frame or the file has the wrong JSON type: a
   number written as a string ("k1": "0.3") would otherwise be dropped and the lens taken for a
   pinhole without a word */
static int ns_check_types(json_t *fr, json_t *root, const char *path, size_t i)
{
    static const char *const nums[] = {"fl_x", "fl_y", "cx", "cy", "w", "h", "k1", "k2", "k3", "k4", "p1", "p2"};
    json_t *objs[2] = {fr, root};
    for (int o = 0; o < 2; o++) {
        char where[64] = "";
        if (!o) snprintf(where, sizeof where, "frame %zu: ", i);
        for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
            json_t *v = json_object_get(objs[o], nums[k]);
            if (v && !json_is_number(v))
                return cs_fail("%s: %s'%s' is not a number (write it without quotes)", path, where, nums[k]);
        }
        json_t *cm = json_object_get(objs[o], "camera_model");
        if (cm && !json_is_string(cm))
            return cs_fail("%s: %s'camera_model' is not a name (OPENCV, OPENCV_FISHEYE, PINHOLE)", path, where);
    }
    return 0;
}

/* A frame's lens: nerfstudio's camera_model (the frame's, else the file's; OPENCV when absent)
   and distortion k1..k4, p1, p2 (OPENCV: 1 + k1 r^2 + k2 r^4 + k3 r^6 + k4 r^8 and tangential;
   OPENCV_FISHEYE: k1..k4 of the angle). */
static int ns_lens(json_t *fr, json_t *root, const char *path, size_t i, cs_lens *l)
{
    json_t *cm = json_object_get(fr, "camera_model");
    if (!json_is_string(cm)) cm = json_object_get(root, "camera_model");
    const char *model = json_is_string(cm) ? json_string_value(cm) : "OPENCV";
    static const char *const names[6] = {"k1", "k2", "k3", "k4", "p1", "p2"};
    double k[6];
    for (int j = 0; j < 6; j++) k[j] = num_or(fr, root, names[j], 0, NULL);
    memset(l, 0, sizeof *l);
    if (!strcmp(model, "OPENCV_FISHEYE")) {
        if (k[4] != 0 || k[5] != 0)
            return cs_fail("%s: frame %zu: OPENCV_FISHEYE has no tangential distortion (p1 %g, p2 %g)", path, i, k[4],
                           k[5]);
        l->model = CS_LENS_OPENCV_FISHEYE;
        for (int j = 0; j < 4; j++) l->k[j] = k[j];
        return 0;
    }
    if (strcmp(model, "OPENCV") && strcmp(model, "PINHOLE") && strcmp(model, "SIMPLE_PINHOLE") &&
        strcmp(model, "PERSPECTIVE"))
        return cs_fail("%s: frame %zu: camera_model '%s' is not supported (OPENCV, OPENCV_FISHEYE, PINHOLE)", path, i,
                       model);
    if (k[3] != 0)
        return cs_fail("%s: frame %zu: k4 %g (an r^8 radial term) is not supported for %s cameras", path, i, k[3],
                       model);
    /* COLMAP's order: k1 k2 p1 p2, then FULL_OPENCV's k3 */
    l->model = k[2] != 0 ? CS_LENS_FULL_OPENCV : CS_LENS_OPENCV;
    l->k[0] = k[0], l->k[1] = k[1], l->k[2] = k[4], l->k[3] = k[5], l->k[4] = k[2];
    return 0;
}

/* The frame's mask_path (relative to the dataset), if any, into C. */
static int ns_mask(json_t *fr, const char *root, const char *path, size_t i, cs_camera *c)
{
    json_t *mp = json_object_get(fr, "mask_path");
    if (!mp) return 0;
    if (!json_is_string(mp)) return cs_fail("%s: frame %zu: mask_path is not a string", path, i);
    return cs_path_join(c->mask_path, sizeof c->mask_path, root, json_string_value(mp));
}

/* nerfstudio's ply_file_path: the initial points. */
static int ns_points(json_t *root, const char *dir, const char *path, cs_scene *s)
{
    json_t *pp = json_object_get(root, "ply_file_path");
    if (!pp) return 0;
    char p[4200];
    if (!json_is_string(pp)) return cs_fail("%s: ply_file_path is not a string", path);
    if (cs_path_join(p, sizeof p, dir, json_string_value(pp))) return -1;
    if (!cs_file_exists(p)) return cs_fail("%s: the point cloud named by ply_file_path in %s does not exist", p, path);
    return cs_ply_read_points(p, &s->points, &s->colors, &s->n_points);
}

int cs_read_nerfstudio(const cs_data_cfg *cfg, cs_scene *s)
{
    s->kind = CS_SCENE_NERFSTUDIO;
    char path[4200];
    snprintf(path, sizeof path, "%s/transforms.json", cfg->path);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) return cs_fail("%s: line %d: %s", path, err.line, err.text);
    int ret = -1, cap = 0;
    json_t *frames = json_object_get(root, "frames");
    if (!json_is_array(frames)) {
        cs_fail("%s: missing array 'frames'", path);
        goto done;
    }
    cs_missing missing = {0};
    size_t i;
    json_t *fr;
    json_array_foreach(frames, i, fr)
    {
        json_t *fp = json_object_get(fr, "file_path");
        if (!json_is_string(fp)) {
            cs_fail("%s: frame %zu: missing 'file_path'", path, i);
            goto done;
        }
        if (grow(s, &cap) || ns_check_types(fr, root, path, i)) goto done;
        cs_camera *c = &s->cams[s->n_cams];
        memset(c, 0, sizeof *c);
        int found = frame_image(cfg, json_string_value(fp), c, &missing);
        if (found < 0) goto done;
        if (found) continue;
        const char *base = strrchr(c->path, '/');
        snprintf(c->name, sizeof c->name, "%s", base ? base + 1 : c->path);
        double m[16];
        if (read_matrix(fr, path, i, m)) goto done;
        cs_camera_from_gl_c2w(c, m);
        int orient;
        if (cs_image_probe(c->path, &c->file_width, &c->file_height, &orient)) goto done;
        c->exif_orientation = orient;
        int ffx, ffy, fw, fh;
        c->fx = num_or(fr, root, "fl_x", 0, &ffx);
        c->fy = num_or(fr, root, "fl_y", c->fx, &ffy);
        double wd = num_or(fr, root, "w", c->file_width, &fw), hd = num_or(fr, root, "h", c->file_height, &fh);
        if (!(wd >= 1 && wd <= CS_IMAGE_MAX_SIDE && hd >= 1 && hd <= CS_IMAGE_MAX_SIDE)) {
            cs_fail("%s: frame %zu: size %gx%g is outside 1..%d", path, i, wd, hd, CS_IMAGE_MAX_SIDE);
            goto done;
        }
        int w = (int)wd, h = (int)hd;
        if (fw && fh && cs_image_fit_orientation(c->file_width, c->file_height, orient, w, h, 0) >= 5) {
            c->orientation = orient; /* the frame's size is the upright photo's */
            c->file_width = w, c->file_height = h;
        }
        c->cx = num_or(fr, root, "cx", c->file_width / 2.0, NULL);
        c->cy = num_or(fr, root, "cy", c->file_height / 2.0, NULL);
        if (!ffx || c->fx <= 0) {
            cs_fail("%s: frame %zu: missing positive 'fl_x'", path, i);
            goto done;
        }
        if ((fw && w != c->file_width) || (fh && h != c->file_height)) {
            cs_fail("%s: image is %dx%d but %s says %dx%d", c->path, c->file_width, c->file_height, path, w, h);
            goto done;
        }
        if (ns_lens(fr, root, path, i, &c->lens) || ns_mask(fr, cfg->path, path, i, c) ||
            cs_camera_apply_resolution(c, cfg->resolution))
            goto done;
        s->n_cams++;
    }
    cs_missing_note(&missing, (int)json_array_size(frames), path);
    if (ns_points(root, cfg->path, path, s)) goto done;
    cs_scene_split_every8(s, cfg->eval);
    ret = 0;
done:
    json_decref(root);
    return ret;
}
