/* scene_colmap: COLMAP sparse/0 reader (cameras, images, points3D; .bin or .txt). Every camera
 * model is read; the distorted ones keep their coefficients for undistort.h, which refuses the
 * two it cannot undistort (FOV, THIN_PRISM_FISHEYE) by name. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "lens.h"
#include "readers.h"
#include "util.h"

typedef struct {
    int id;
    int width, height;
    cs_lens lens; /* intrinsics at the file's size and distortion */
} colmap_cam;

/* ---- a bounds-checked reader over a whole file ---------------------------------------- */
typedef struct {
    const unsigned char *p, *end;
    const char *path;
    int bad;
} breader;

static int br_get(breader *r, void *dst, size_t n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        if (!r->bad) cs_fail("%s: truncated file (needed %zu more bytes, %zu left)", r->path, n, (size_t)(r->end - r->p));
        r->bad = 1;
        memset(dst, 0, n);
        return -1;
    }
    memcpy(dst, r->p, n);
    r->p += n;
    return 0;
}
static uint64_t br_u64(breader *r) { uint64_t v; br_get(r, &v, 8); return v; }
static int32_t br_i32(breader *r) { int32_t v; br_get(r, &v, 4); return v; }
static double br_f64(breader *r) { double v; br_get(r, &v, 8); return v; }

static int set_intrinsics(colmap_cam *c, int model, const double *p, const char *path)
{
    cs_lens_from_params(&c->lens, (cs_lens_model)model, p);
    if (!cs_lens_supported((cs_lens_model)model) && !cs_lens_is_pinhole(&c->lens))
        return cs_fail("%s: camera %d uses the %s model, which clsplat does not undistort (supported: SIMPLE_PINHOLE, "
                       "PINHOLE, SIMPLE_RADIAL, RADIAL, OPENCV, FULL_OPENCV, OPENCV_FISHEYE, SIMPLE_RADIAL_FISHEYE, "
                       "RADIAL_FISHEYE); undistort the images first (colmap image_undistorter)",
                       path, c->id, cs_lens_model_name((cs_lens_model)model));
    return 0;
}

static int read_cameras_bin(const char *path, colmap_cam **out, int *n)
{
    size_t len;
    unsigned char *d = (unsigned char *)cs_read_file(path, &len);
    if (!d) return -1;
    breader r = {d, d + len, path, 0};
    uint64_t cnt = br_u64(&r);
    if (cnt > 1000000) {
        free(d);
        return cs_fail("%s: implausible camera count %llu", path, (unsigned long long)cnt);
    }
    colmap_cam *cams = calloc(cnt ? cnt : 1, sizeof *cams);
    for (uint64_t i = 0; i < cnt && !r.bad; i++) {
        cams[i].id = br_i32(&r);
        int model = br_i32(&r);
        uint64_t w = br_u64(&r), h = br_u64(&r);
        if (r.bad) break;
        if (w < 1 || h < 1 || w > CS_IMAGE_MAX_SIDE || h > CS_IMAGE_MAX_SIDE) {
            int id = cams[i].id;
            free(d);
            free(cams);
            return cs_fail("%s: camera %d has size %llux%llu (1 to %d a side)", path, id, (unsigned long long)w,
                           (unsigned long long)h, CS_IMAGE_MAX_SIDE);
        }
        cams[i].width = (int)w, cams[i].height = (int)h;
        if (model < 0 || model >= CS_LENS_NMODELS) {
            int id = cams[i].id;
            free(d);
            free(cams);
            return cs_fail("%s: camera %d has unknown model id %d", path, id, model);
        }
        double p[CS_LENS_MAX_PARAMS];
        for (int k = 0; k < cs_lens_model_params((cs_lens_model)model); k++) p[k] = br_f64(&r);
        if (r.bad) break;
        if (set_intrinsics(&cams[i], model, p, path)) {
            free(d);
            free(cams);
            return -1;
        }
    }
    free(d);
    if (r.bad) {
        free(cams);
        return -1;
    }
    *out = cams;
    *n = (int)cnt;
    return 0;
}

/* Returns the next line that is not a comment (may be empty), or NULL at the end. */
static char *next_line(char **cur, int *line_no)
{
    while (**cur) {
        char *s = *cur;
        char *nl = strchr(s, '\n');
        if (nl) {
            *nl = '\0';
            *cur = nl + 1;
        } else {
            *cur = s + strlen(s);
        }
        (*line_no)++;
        while (isspace((unsigned char)*s)) s++;
        if (*s == '#') continue;
        return s; /* may be empty: images.txt uses empty POINTS2D lines */
    }
    return NULL;
}

static int read_cameras_txt(const char *path, colmap_cam **out, int *n)
{
    char *text = cs_read_file(path, NULL);
    if (!text) return -1;
    int cap = 16, cnt = 0, ln = 0;
    colmap_cam *cams = malloc(sizeof *cams * cap);
    char *cur = text, *line;
    while ((line = next_line(&cur, &ln))) {
        if (!*line) continue;
        char model[64];
        colmap_cam c = {0};
        int used = 0;
        long id, w, h;
        if (sscanf(line, "%ld %63s %ld %ld%n", &id, model, &w, &h, &used) != 4 || id < 0 || id > 2147483647L ||
            w < 1 || h < 1 || w > CS_IMAGE_MAX_SIDE || h > CS_IMAGE_MAX_SIDE) {
            free(text);
            free(cams);
            return cs_fail("%s: line %d: expected CAMERA_ID MODEL WIDTH HEIGHT PARAMS... (sizes 1 to %d)", path, ln,
                           CS_IMAGE_MAX_SIDE);
        }
        c.id = (int)id, c.width = (int)w, c.height = (int)h;
        int m = cs_lens_model_by_name(model);
        double p[CS_LENS_MAX_PARAMS] = {0};
        char *s = line + used;
        for (int k = 0; m >= 0 && k < cs_lens_model_params((cs_lens_model)m); k++) {
            char *e;
            p[k] = strtod(s, &e);
            if (e == s) {
                free(text);
                free(cams);
                return cs_fail("%s: line %d: camera %d needs %d parameters", path, ln, c.id,
                               cs_lens_model_params((cs_lens_model)m));
            }
            s = e;
        }
        if (m < 0 || set_intrinsics(&c, m, p, path)) {
            if (m < 0) cs_fail("%s: line %d: unknown camera model '%s'", path, ln, model);
            free(text);
            free(cams);
            return -1;
        }
        if (cnt == cap) cams = realloc(cams, sizeof *cams * (cap *= 2));
        cams[cnt++] = c;
    }
    free(text);
    *out = cams;
    *n = cnt;
    return 0;
}

static const colmap_cam *find_cam(const colmap_cam *cams, int n, int id)
{
    for (int i = 0; i < n; i++)
        if (cams[i].id == id) return &cams[i];
    return NULL;
}

static int add_image(cs_scene *s, int *cap, const char *path, const colmap_cam *cams, int ncams, int cam_id,
                     const double q[4], const double t[3], const char *name)
{
    const colmap_cam *cc = find_cam(cams, ncams, cam_id);
    if (!cc) return cs_fail("%s: image '%s' refers to camera %d, which does not exist", path, name, cam_id);
    if (s->n_cams == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        cs_camera *nc = realloc(s->cams, sizeof *nc * *cap);
        if (!nc) return cs_fail("out of host memory");
        s->cams = nc;
    }
    cs_camera *c = &s->cams[s->n_cams++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    cs_quat_to_rot(q, c->R);
    memcpy(c->t, t, sizeof c->t);
    c->file_width = cc->width;
    c->file_height = cc->height;
    c->fx = cc->lens.fx;
    c->fy = cc->lens.fy;
    c->cx = cc->lens.cx;
    c->cy = cc->lens.cy;
    c->lens = cc->lens; /* its intrinsics are set again at the training resolution (undistort.h) */
    return 0;
}

static int read_images_bin(const char *path, cs_scene *s, const colmap_cam *cams, int ncams)
{
    size_t len;
    unsigned char *d = (unsigned char *)cs_read_file(path, &len);
    if (!d) return -1;
    breader r = {d, d + len, path, 0};
    uint64_t cnt = br_u64(&r);
    int cap = 0;
    for (uint64_t i = 0; i < cnt && !r.bad; i++) {
        br_i32(&r); /* image id */
        double q[4], t[3];
        for (int k = 0; k < 4; k++) q[k] = br_f64(&r);
        for (int k = 0; k < 3; k++) t[k] = br_f64(&r);
        int cam_id = br_i32(&r);
        char name[256];
        size_t nl = 0;
        for (;;) {
            char ch;
            if (br_get(&r, &ch, 1)) break;
            if (ch == '\0') break;
            if (nl + 1 < sizeof name) name[nl++] = ch;
        }
        name[nl] = '\0';
        uint64_t np = br_u64(&r);
        if (r.bad) break;
        if (np > (uint64_t)(r.end - r.p) / 24) {
            cs_fail("%s: truncated file (image '%s' claims %llu 2D points)", path, name, (unsigned long long)np);
            r.bad = 1;
            break;
        }
        r.p += np * 24;
        if (add_image(s, &cap, path, cams, ncams, cam_id, q, t, name)) {
            free(d);
            return -1;
        }
    }
    free(d);
    return r.bad ? -1 : 0;
}

static int read_images_txt(const char *path, cs_scene *s, const colmap_cam *cams, int ncams)
{
    char *text = cs_read_file(path, NULL);
    if (!text) return -1;
    char *cur = text, *line;
    int ln = 0, cap = 0;
    while ((line = next_line(&cur, &ln))) {
        if (!*line) continue;
        int id, cam_id;
        double q[4], t[3];
        char name[256];
        if (sscanf(line, "%d %lf %lf %lf %lf %lf %lf %lf %d %255s", &id, &q[0], &q[1], &q[2], &q[3], &t[0], &t[1],
                   &t[2], &cam_id, name) != 10) {
            free(text);
            return cs_fail("%s: line %d: expected IMAGE_ID QW QX QY QZ TX TY TZ CAMERA_ID NAME", path, ln);
        }
        if (add_image(s, &cap, path, cams, ncams, cam_id, q, t, name)) {
            free(text);
            return -1;
        }
        next_line(&cur, &ln); /* POINTS2D line */
    }
    free(text);
    return 0;
}

static int push_point(cs_scene *s, int *cap, const double xyz[3], const int rgb[3])
{
    if (s->n_points == *cap) {
        *cap = *cap ? *cap * 2 : 4096;
        float *np = realloc(s->points, sizeof(float) * 3 * *cap);
        if (!np) return cs_fail("out of host memory");
        s->points = np;
        uint8_t *nc = realloc(s->colors, 3 * (size_t)*cap);
        if (!nc) return cs_fail("out of host memory");
        s->colors = nc;
    }
    for (int k = 0; k < 3; k++) {
        s->points[s->n_points * 3 + k] = (float)xyz[k];
        s->colors[s->n_points * 3 + k] = (uint8_t)rgb[k];
    }
    s->n_points++;
    return 0;
}

static int read_points_bin(const char *path, cs_scene *s)
{
    size_t len;
    unsigned char *d = (unsigned char *)cs_read_file(path, &len);
    if (!d) return -1;
    breader r = {d, d + len, path, 0};
    uint64_t cnt = br_u64(&r);
    int cap = 0;
    for (uint64_t i = 0; i < cnt && !r.bad; i++) {
        br_u64(&r);
        double xyz[3];
        for (int k = 0; k < 3; k++) xyz[k] = br_f64(&r);
        unsigned char c3[3];
        br_get(&r, c3, 3);
        br_f64(&r);
        uint64_t tl = br_u64(&r);
        if (r.bad) break;
        if (tl > (uint64_t)(r.end - r.p) / 8) {
            cs_fail("%s: truncated file (point %llu claims a track of %llu)", path, (unsigned long long)i,
                    (unsigned long long)tl);
            r.bad = 1;
            break;
        }
        r.p += tl * 8;
        int rgb[3] = {c3[0], c3[1], c3[2]};
        if (push_point(s, &cap, xyz, rgb)) {
            r.bad = 1;
            break;
        }
    }
    free(d);
    return r.bad ? -1 : 0;
}

static int read_points_txt(const char *path, cs_scene *s)
{
    char *text = cs_read_file(path, NULL);
    if (!text) return -1;
    char *cur = text, *line;
    int ln = 0, cap = 0;
    while ((line = next_line(&cur, &ln))) {
        if (!*line) continue;
        long id;
        double xyz[3], err;
        int rgb[3];
        if (sscanf(line, "%ld %lf %lf %lf %d %d %d %lf", &id, &xyz[0], &xyz[1], &xyz[2], &rgb[0], &rgb[1], &rgb[2],
                   &err) != 8) {
            free(text);
            return cs_fail("%s: line %d: expected POINT3D_ID X Y Z R G B ERROR TRACK[]", path, ln);
        }
        if (push_point(s, &cap, xyz, rgb)) {
            free(text);
            return -1;
        }
    }
    free(text);
    return 0;
}

void cs_colmap_model_dir(const char *root, char *out, size_t n)
{
    snprintf(out, n, "%s/sparse/0", root);
    if (cs_dir_exists(out)) return;
    char p[4300];
    snprintf(p, sizeof p, "%s/sparse/cameras.bin", root);
    int flat = cs_file_exists(p);
    snprintf(p, sizeof p, "%s/sparse/cameras.txt", root);
    if (flat || cs_file_exists(p)) snprintf(out, n, "%s/sparse", root);
}

/* The photo of a listed NAME that is missing, under the same stem with another extension
   (images converted after the reconstruction: a.jpg listed, a.png on disk), into OUT. */
static int same_stem(const char *dir, const char *name, char *out, size_t n)
{
    static const char *const exts[] = {".png", ".jpg", ".jpeg", ".PNG", ".JPG", ".JPEG", ".tif", ".tiff"};
    char stem[4200];
    snprintf(stem, sizeof stem, "%s/%s", dir, name);
    char *dot = strrchr(stem, '.'), *slash = strrchr(stem, '/');
    if (dot && (!slash || dot > slash)) *dot = '\0';
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++)
        if (snprintf(out, n, "%s%s", stem, exts[i]) < (int)n && cs_file_exists(out)) return 1;
    return 0;
}

/* Camera I of S moved down to the next kept place. */
static void keep_camera(cs_scene *s, int *kept, int i)
{
    if (*kept != i) s->cams[*kept] = s->cams[i];
    (*kept)++;
}

/* Each camera's photo in DIR; a photo converted to another format since the reconstruction is
   taken under its stem (said once); missing ones are counted and named, and refused, or left out
   with SKIP (data.skip_missing_images). */
static int find_images(cs_scene *s, const char *dir, const char *list, int skip)
{
    int converted = 0, listed = s->n_cams, kept = 0;
    char alt[4200], example[4200] = "";
    cs_missing missing = {0};
    for (int i = 0; i < listed; i++) {
        cs_camera *c = &s->cams[i];
        if (cs_path_join(c->path, sizeof c->path, dir, c->name)) return -1;
        if (cs_file_exists(c->path)) {
            keep_camera(s, &kept, i);
            continue;
        }
        if (same_stem(dir, c->name, alt, sizeof alt) && strlen(alt) < sizeof c->path) {
            if (!converted++) snprintf(example, sizeof example, "%s for %s", alt, c->name);
            snprintf(c->path, sizeof c->path, "%s", alt);
            keep_camera(s, &kept, i);
            continue;
        }
        cs_missing_add(&missing, c->path);
    }
    if (missing.n && !skip)
        return cs_fail("%d of the %d images listed in %s are missing from %s (the first: %s)%s; "
                       "data.skip_missing_images=true leaves them out", missing.n, listed, list, dir, missing.first,
                       converted ? "; others were found converted under their names with another extension" : "");
    s->n_cams = kept;
    cs_missing_note(&missing, listed, list);
    if (converted)
        printf("note: %d of the %d images listed in %s exist only with another extension (converted after the "
               "reconstruction; e.g. %s): using those\n", converted, s->n_cams, list, example);
    return 0;
}

int cs_read_colmap(const cs_data_cfg *cfg, cs_scene *s)
{
    s->kind = CS_SCENE_COLMAP;
    const char *root = cfg->path;
    char p[4200], model[4200];
    cs_colmap_model_dir(root, model, sizeof model);
    colmap_cam *cams = NULL;
    int ncams = 0, r;
    snprintf(p, sizeof p, "%s/cameras.bin", model);
    int bin = cs_file_exists(p);
    if (!bin) snprintf(p, sizeof p, "%s/cameras.txt", model);
    if (!cs_file_exists(p)) return cs_fail("%s: neither cameras.bin nor cameras.txt exists", model);
    r = bin ? read_cameras_bin(p, &cams, &ncams) : read_cameras_txt(p, &cams, &ncams);
    if (r) return -1;
    snprintf(p, sizeof p, "%s/images.%s", model, bin ? "bin" : "txt");
    if (!cs_file_exists(p)) {
        free(cams);
        return cs_fail("%s: missing (cameras.%s exists)", p, bin ? "bin" : "txt");
    }
    r = bin ? read_images_bin(p, s, cams, ncams) : read_images_txt(p, s, cams, ncams);
    free(cams);
    if (r) return -1;
    snprintf(p, sizeof p, "%s/points3D.%s", model, bin ? "bin" : "txt");
    if (cs_file_exists(p)) {
        if (bin ? read_points_bin(p, s) : read_points_txt(p, s)) return -1;
    }
    /* image folder: images_N when it exists for resolution N, else data.images */
    int res = cfg->resolution, use_n = 0;
    char dir[4200];
    if (res == 2 || res == 4 || res == 8) {
        snprintf(dir, sizeof dir, "%s/%s_%d", root, cfg->images, res);
        use_n = cs_dir_exists(dir);
    }
    if (!use_n) snprintf(dir, sizeof dir, "%s/%s", root, cfg->images);
    if (!cs_dir_exists(dir)) return cs_fail("%s: image folder does not exist (data.images)", dir);
    if (find_images(s, dir, bin ? "images.bin" : "images.txt", cfg->skip_missing_images)) return -1;
    for (int i = 0; i < s->n_cams; i++) {
        cs_camera *c = &s->cams[i];
        int w, h, o;
        if (cs_image_probe(c->path, &w, &h, &o)) return -1;
        int ew = use_n ? (int)((c->file_width + res / 2) / res) : c->file_width;
        int eh = use_n ? (int)((c->file_height + res / 2) / res) : c->file_height;
        c->exif_orientation = o;
        c->orientation = cs_image_fit_orientation(w, h, o, ew, eh, use_n ? 1 : 0);
        if (!c->orientation)
            return cs_fail("%s: image is %dx%d%s but its COLMAP camera is %dx%d%s", c->path, w, h,
                           o > 1 ? " (EXIF orientation set, also not upright)" : "", c->file_width, c->file_height,
                           use_n ? " (downscaled folder)" : "");
        if (c->orientation >= 5) {
            int t = w;
            w = h, h = t;
        }
        if (use_n) {
            /* the folder already holds the downscaled images: use them as they are */
            double sx = (double)w / c->file_width, sy = (double)h / c->file_height;
            c->fx *= sx, c->cx *= sx, c->fy *= sy, c->cy *= sy;
            c->file_width = c->width = w;
            c->file_height = c->height = h;
        } else if (cs_camera_apply_resolution(c, res)) {
            return -1;
        }
    }
    cs_scene_split_every8(s, cfg->eval);
    return 0;
}
