/* gen_demo: ray-casts clsplat's built-in demo scene (CPU only, no OpenCL, independent of the
 * rasterizer) and writes it as a dataset. Scene: a textured sphere, box and cylinder on a
 * checkered disc, Lambertian shading with a sun and sky light, on a black background. 60
 * cameras on a hemisphere.
 *   default (Blender / NeRF-synthetic): OUT/transforms_{train,test}.json, OUT/{train,test}/r_N.png,
 *     every 3rd view held out for testing (40 train, 20 test);
 *   --format nerfstudio: OUT/transforms.json, OUT/images/v_NN.png and OUT/points.ply (ply_file_path:
 *     surface points seen by the cameras, as a reconstruction would give);
 *   --format colmap: OUT/sparse/0/{cameras,images,points3D}.txt and OUT/images/v_NN.png
 *     (both: clsplat's eval split holds out every 8th view by name).
 * --lens MODEL:K1,K2,...  photographs through a COLMAP lens model (SIMPLE_RADIAL, RADIAL, OPENCV,
 *     OPENCV_FISHEYE, ...; coefficients after the intrinsics, in COLMAP's order): every pixel's
 *     ray is the lens's undistorted one (exact, no resampling).
 * --distractor  a red ball hovering over the scene, swaying a little from view to view (the
 *     views that clsplat's eval split holds out stay clean), and masks covering it:
 *     OUT/masks/<image name>.png (COLMAP), mask_path (nerfstudio); a held-out view's mask covers
 *     where the ball would have been.
 * --focal F  the focal length in pixels (default: a 0.75 rad horizontal field of view)
 * --tiles K  K copies of the scene in a row along x, 3 units apart, 60 cameras around each (a
 *     scene larger than one block or one memory budget, for block training)
 * --sky  a sky instead of the black background: a colour that depends only on the ray's
 *     direction (blue overhead, pale at the horizon, brown below), as an infinitely far
 *     background looks (for the mesh's background shell)
 * --alpha  (Blender format) RGBA photos as NeRF-synthetic's: alpha the share of a pixel's
 *     samples that hit a surface, colour theirs (loaded over a white background, the disc's
 *     near-white squares are the light surfaces #38 asks to keep)
 * usage: gen_demo OUT_DIR [WIDTH HEIGHT] [--format F] [--lens SPEC] [--focal F] [--distractor]
 *        [--tiles K] [--sky] [--alpha] */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "lens.h"
#include "util.h"

typedef struct { double x, y, z; } v3;
static v3 add(v3 a, v3 b) { return (v3){a.x + b.x, a.y + b.y, a.z + b.z}; }
static v3 sub(v3 a, v3 b) { return (v3){a.x - b.x, a.y - b.y, a.z - b.z}; }
static v3 mul(v3 a, double s) { return (v3){a.x * s, a.y * s, a.z * s}; }
static double dot3(v3 a, v3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
static v3 cross3(v3 a, v3 b) { return (v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
static v3 norm3(v3 a) { return mul(a, 1.0 / sqrt(dot3(a, a))); }

typedef struct {
    double t;
    v3 n, albedo;
    int distractor; /* the hit is the distractor ball */
} hit;

static void try_hit(hit *h, double t, v3 n, v3 albedo)
{
    if (t > 1e-6 && t < h->t) h->t = t, h->n = n, h->albedo = albedo, h->distractor = 0;
}

/* a sphere of centre C and radius R */
static void hit_ball(v3 o, v3 d, v3 c, double r, v3 albedo, hit *h)
{
    v3 oc = sub(o, c);
    double b = dot3(oc, d), cc = dot3(oc, oc) - r * r, disc = b * b - cc;
    if (disc > 0) {
        double t = -b - sqrt(disc);
        try_hit(h, t, norm3(sub(add(o, mul(d, t)), c)), albedo);
    }
}

/* --tiles K: K copies of the scene in a row along x, TILE_STEP apart, centred on x = 0 (a scene
   larger than one block or one memory budget); each view orbits one copy */
#define TILE_STEP 3.0
static int tiles = 1;
static int sky; /* --sky */
static double tile_x(int k) { return TILE_STEP * (k - 0.5 * (tiles - 1)); }

static void trace_one(v3 o, v3 d, const v3 *ball, hit *h);

/* BALL: the distractor's centre, or NULL (one copy only); the nearest hit over the copies */
static void trace(v3 o, v3 d, const v3 *ball, hit *h)
{
    if (tiles == 1) {
        trace_one(o, d, ball, h);
        return;
    }
    h->t = INFINITY;
    h->distractor = 0;
    for (int k = 0; k < tiles; k++) {
        hit c;
        trace_one(sub(o, (v3){tile_x(k), 0, 0}), d, NULL, &c);
        if (c.t < h->t) *h = c;
    }
}

static void trace_one(v3 o, v3 d, const v3 *ball, hit *h)
{
    h->t = INFINITY;
    h->distractor = 0;
    if (ball) {
        hit_ball(o, d, *ball, 0.2, (v3){0.95, 0.1, 0.1}, h);
        h->distractor = isfinite(h->t);
    }
    /* ground disc z = -0.5, radius 1.25, checkered */
    if (fabs(d.z) > 1e-9) {
        double t = (-0.5 - o.z) / d.z;
        v3 p = add(o, mul(d, t));
        if (p.x * p.x + p.y * p.y < 1.25 * 1.25) {
            int ch = ((int)floor(p.x * 4) + (int)floor(p.y * 4)) & 1;
            v3 a = ch ? (v3){0.85, 0.8, 0.7} : (v3){0.25, 0.3, 0.45};
            try_hit(h, t, (v3){0, 0, 1}, a);
        }
    }
    /* sphere centre (0.35, 0.2, 0), radius 0.45, latitude stripes */
    {
        v3 c = {0.35, 0.2, 0.0}, oc = sub(o, c);
        double b = dot3(oc, d), cc = dot3(oc, oc) - 0.45 * 0.45, disc = b * b - cc;
        if (disc > 0) {
            double t = -b - sqrt(disc);
            v3 p = add(o, mul(d, t)), n = norm3(sub(p, c));
            int stripe = (int)floor((n.z + 1) * 5) & 1;
            double u = atan2(n.y, n.x);
            v3 a = stripe ? (v3){0.9, 0.3, 0.2} : (v3){0.95, 0.85, 0.3};
            if (sin(u * 6) > 0.7) a = (v3){0.2, 0.6, 0.3};
            try_hit(h, t, n, a);
        }
    }
    /* axis-aligned box [-0.75,-0.15] x [-0.65,0.05] x [-0.5,0.1], grid texture */
    {
        double lo[3] = {-0.75, -0.65, -0.5}, hi[3] = {-0.15, 0.05, 0.1};
        double ov[3] = {o.x, o.y, o.z}, dv[3] = {d.x, d.y, d.z}, t0 = -INFINITY, t1 = INFINITY;
        int axis = -1;
        double sgn = 1;
        for (int k = 0; k < 3; k++) {
            if (fabs(dv[k]) < 1e-12) {
                if (ov[k] < lo[k] || ov[k] > hi[k]) t0 = INFINITY;
                continue;
            }
            double a = (lo[k] - ov[k]) / dv[k], b = (hi[k] - ov[k]) / dv[k];
            double s = -1;
            if (a > b) { double tmp = a; a = b; b = tmp; s = 1; }
            if (a > t0) t0 = a, axis = k, sgn = s;
            if (b < t1) t1 = b;
        }
        if (t0 <= t1 && axis >= 0) {
            v3 p = add(o, mul(d, t0));
            v3 n = {axis == 0 ? sgn : 0, axis == 1 ? sgn : 0, axis == 2 ? sgn : 0};
            double u = axis == 0 ? p.y : p.x, w = axis == 2 ? p.y : p.z;
            int g = (fmod(fabs(u) * 10, 1.0) < 0.15) || (fmod(fabs(w) * 10, 1.0) < 0.15);
            try_hit(h, t0, n, g ? (v3){0.1, 0.1, 0.15} : (v3){0.3, 0.55, 0.9});
        }
    }
    /* vertical cylinder at (0.4, -0.55), radius 0.2, z in [-0.5, 0.5], with rings */
    {
        double ox = o.x - 0.4, oy = o.y + 0.55, a = d.x * d.x + d.y * d.y;
        if (a > 1e-12) {
            double b = ox * d.x + oy * d.y, c = ox * ox + oy * oy - 0.04, disc = b * b - a * c;
            if (disc > 0) {
                double t = (-b - sqrt(disc)) / a;
                v3 p = add(o, mul(d, t));
                if (p.z > -0.5 && p.z < 0.5) {
                    v3 n = norm3((v3){p.x - 0.4, p.y + 0.55, 0});
                    int ring = (int)floor((p.z + 0.5) * 8) & 1;
                    try_hit(h, t, n, ring ? (v3){0.6, 0.3, 0.8} : (v3){0.95, 0.95, 0.95});
                }
            }
        }
        if (fabs(d.z) > 1e-9) { /* top cap */
            double t = (0.5 - o.z) / d.z;
            v3 p = add(o, mul(d, t));
            if ((p.x - 0.4) * (p.x - 0.4) + (p.y + 0.55) * (p.y + 0.55) < 0.04) try_hit(h, t, (v3){0, 0, 1}, (v3){0.9, 0.6, 0.1});
        }
    }
}

/* --sky: the colour of direction D (unit) */
static v3 sky_colour(v3 d)
{
    if (d.z < 0) return add(mul((v3){0.35, 0.27, 0.2}, 1 + d.z), mul((v3){0.15, 0.12, 0.1}, -d.z));
    return add(mul((v3){0.8, 0.85, 0.9}, 1 - d.z), mul((v3){0.2, 0.4, 0.85}, d.z));
}

/* The colour seen along D from O; *P: the surface point (NAN without one), *DIS: the distractor. */
static v3 shade(v3 o, v3 d, const v3 *ball, v3 *pt, int *dis)
{
    hit h;
    trace(o, d, ball, &h);
    *dis = h.distractor;
    *pt = (v3){NAN, NAN, NAN};
    if (!isfinite(h.t)) return sky ? sky_colour(d) : (v3){0, 0, 0};
    *pt = add(o, mul(d, h.t));
    v3 p = add(o, mul(d, h.t)), sun = norm3((v3){0.5, 0.3, 0.8});
    if (dot3(h.n, d) > 0) h.n = mul(h.n, -1);
    double lam = fmax(0, dot3(h.n, sun));
    hit sh;
    trace(add(p, mul(h.n, 1e-4)), sun, ball, &sh);
    if (isfinite(sh.t)) lam *= 0.25;
    double amb = 0.25 + 0.15 * h.n.z;
    return mul(h.albedo, lam * 0.8 + amb);
}

enum { FMT_BLENDER, FMT_NERFSTUDIO, FMT_COLMAP };

typedef struct {
    const char *out;
    int W, H;
    int format;     /* FMT_* */
    cs_lens lens;   /* the photographs' lens (intrinsics from the size; SIMPLE_PINHOLE: none) */
    int distractor; /* --distractor */
    int alpha;      /* --alpha */
} options;

typedef struct {
    v3 eye, fwd, right, down;
} view;

#define VIEWS 60
#define FOVX 0.75
#define MAX_POINTS 6000 /* a copy */
#define MAX_TILES 8

typedef struct {
    float xyz[MAX_POINTS * MAX_TILES][3];
    unsigned char rgb[MAX_POINTS * MAX_TILES][3];
    int n;
} points;

static view view_of(int i)
{
    double az = i * 2.399963 /* golden angle */, el = 0.3 + 0.9 * ((i * 0.618034) - floor(i * 0.618034));
    double rad = 3.6;
    view v;
    double cx = tile_x(i % tiles);
    v.eye = (v3){cx + rad * cos(az) * cos(el), rad * sin(az) * cos(el), rad * sin(el) - 0.1};
    v.fwd = norm3(sub((v3){cx, 0, -0.15}, v.eye));
    v.right = norm3(cross3(v.fwd, (v3){0, 0, 1}));
    v.down = cross3(v.fwd, v.right);
    return v;
}

/* The Blender split holds out every 3rd view; the others, clsplat's eval split (every 8th by name). */
static int held_out(const options *o, int i) { return o->format == FMT_BLENDER ? i % 3 == 2 : i % 8 == 0; }

/* Renders view I into IMG (2x2 samples a pixel, sRGB) and, with the distractor, MASK (0 where
   it shows); adds surface points of the view to PTS (when not NULL). */
static void render_view(const options *o, int i, cs_image *img, unsigned char *mask, points *pts)
{
    view vw = view_of(i);
    /* hovering over the scene, swaying a little from view to view; drawn in the training views
       only, masked in all (in a held-out view, where it would have been) */
    v3 ball = {0.3 + 0.03 * cos(i * 1.7), 0.15 + 0.03 * sin(i * 1.7), 0.62};
    const v3 *b = o->distractor && !held_out(o, i) ? &ball : NULL;
    int distorted = o->lens.model != CS_LENS_SIMPLE_PINHOLE;
    for (int y = 0; y < o->H; y++)
        for (int x = 0; x < o->W; x++) {
            v3 acc = {0, 0, 0}, pt = {NAN, NAN, NAN};
            int dis = 0, hits = 0;
            for (int sy = 0; sy < 2; sy++)
                for (int sx = 0; sx < 2; sx++) {
                    double u = (x + 0.25 + 0.5 * sx - o->lens.cx) / o->lens.fx;
                    double v = (y + 0.25 + 0.5 * sy - o->lens.cy) / o->lens.fy;
                    if (distorted && cs_lens_undistort(&o->lens, u, v, &u, &v)) continue; /* outside the lens: black */
                    v3 d = norm3(add(vw.fwd, add(mul(vw.right, u), mul(vw.down, v)))), p;
                    int hd;
                    acc = add(acc, shade(vw.eye, d, b, &p, &hd));
                    hits += isfinite(p.x);
                    if (o->distractor && !b) { /* where it would have been */
                        hit hb;
                        trace(vw.eye, d, &ball, &hb);
                        hd = hb.distractor;
                    }
                    dis |= hd;
                    if (sx + sy == 0) pt = p;
                }
            double share = img->channels == 4 ? (hits ? hits : 1) : 4; /* with alpha: the hits' colour */
            double c3[3] = {acc.x / share, acc.y / share, acc.z / share};
            unsigned char *px = img->px + ((size_t)y * o->W + x) * (size_t)img->channels;
            for (int k = 0; k < 3; k++) {
                double g = pow(fmin(fmax(c3[k], 0), 1), 1 / 2.2) * 255 + 0.5;
                px[k] = (unsigned char)(g > 255 ? 255 : g);
            }
            if (img->channels == 4) px[3] = (unsigned char)(hits * 255 / 4);
            if (mask) mask[(size_t)y * o->W + x] = dis ? 0 : 255;
            if (pts && x % 6 == 3 && y % 6 == 3 && !dis && isfinite(pt.x) && pts->n < MAX_POINTS * tiles) {
                pts->xyz[pts->n][0] = (float)pt.x, pts->xyz[pts->n][1] = (float)pt.y, pts->xyz[pts->n][2] = (float)pt.z;
                memcpy(pts->rgb[pts->n++], px, 3);
            }
        }
}

/* OpenGL camera-to-world rows: columns right, up (= -down), back (= -fwd), eye */
static int gl_matrix(const view *v, char *buf, size_t n)
{
    v3 up = mul(v->down, -1), back = mul(v->fwd, -1);
    return snprintf(buf, n, "[[%.9f, %.9f, %.9f, %.9f], [%.9f, %.9f, %.9f, %.9f], [%.9f, %.9f, %.9f, %.9f], [0, 0, 0, 1]]",
                    v->right.x, up.x, back.x, v->eye.x, v->right.y, up.y, back.y, v->eye.y, v->right.z, up.z, back.z,
                    v->eye.z);
}

/* A string builder that grows. */
typedef struct {
    char *s;
    size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
        va_end(ap);
        if (n >= 0 && t->s && t->len + (size_t)n < t->cap) {
            t->len += (size_t)n;
            return;
        }
        t->cap = t->cap * 2 + (size_t)(n > 0 ? n : 0) + 4096;
        t->s = realloc(t->s, t->cap);
        if (!t->s) abort();
    }
}

static int save_text(const options *o, const char *name, text *t)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", o->out, name);
    int r = cs_write_file_atomic(p, t->s, t->len);
    free(t->s);
    memset(t, 0, sizeof *t);
    return r;
}

/* the lens as nerfstudio writes it: camera_model and k1..k4, p1, p2 */
static int nerfstudio_lens(const cs_lens *l, text *t)
{
    const double *k = l->k;
    switch (l->model) {
    case CS_LENS_SIMPLE_PINHOLE: put(t, "\"camera_model\": \"PINHOLE\", "); return 0;
    case CS_LENS_SIMPLE_RADIAL: put(t, "\"camera_model\": \"OPENCV\", \"k1\": %.9g, ", k[0]); return 0;
    case CS_LENS_RADIAL: put(t, "\"camera_model\": \"OPENCV\", \"k1\": %.9g, \"k2\": %.9g, ", k[0], k[1]); return 0;
    case CS_LENS_OPENCV:
        put(t, "\"camera_model\": \"OPENCV\", \"k1\": %.9g, \"k2\": %.9g, \"p1\": %.9g, \"p2\": %.9g, ", k[0], k[1], k[2],
            k[3]);
        return 0;
    case CS_LENS_OPENCV_FISHEYE:
        put(t, "\"camera_model\": \"OPENCV_FISHEYE\", \"k1\": %.9g, \"k2\": %.9g, \"k3\": %.9g, \"k4\": %.9g, ", k[0],
            k[1], k[2], k[3]);
        return 0;
    default: return cs_fail("--format nerfstudio: the %s model has no nerfstudio form", cs_lens_model_name(l->model));
    }
}

/* w2c rotation (rows right, down, fwd) as a quaternion w x y z */
static void rot_to_quat(const double R[9], double q[4])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = sqrt(tr + 1) * 2;
        q[0] = s / 4, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = sqrt(1 + R[0] - R[4] - R[8]) * 2;
        q[0] = (R[7] - R[5]) / s, q[1] = s / 4, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = sqrt(1 + R[4] - R[0] - R[8]) * 2;
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = s / 4, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = sqrt(1 + R[8] - R[0] - R[4]) * 2;
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = s / 4;
    }
}

static int one_focal(cs_lens_model m)
{
    return m == CS_LENS_SIMPLE_PINHOLE || m == CS_LENS_SIMPLE_RADIAL || m == CS_LENS_RADIAL ||
           m == CS_LENS_SIMPLE_RADIAL_FISHEYE || m == CS_LENS_RADIAL_FISHEYE;
}

/* The view's entry in the format's camera file(s). */
static void add_frame(const options *o, int i, text *cams)
{
    view v = view_of(i);
    char m[400];
    if (o->format == FMT_NERFSTUDIO) {
        gl_matrix(&v, m, sizeof m);
        put(cams, "%s\n    {\"file_path\": \"images/v_%02d.png\", ", i ? "," : "", i);
        if (o->distractor) put(cams, "\"mask_path\": \"masks/v_%02d.png\", ", i);
        put(cams, "\"transform_matrix\": %s}", m);
        return;
    }
    double R[9] = {v.right.x, v.right.y, v.right.z, v.down.x, v.down.y, v.down.z, v.fwd.x, v.fwd.y, v.fwd.z}, q[4];
    rot_to_quat(R, q);
    double t[3];
    for (int r = 0; r < 3; r++) t[r] = -(R[r * 3] * v.eye.x + R[r * 3 + 1] * v.eye.y + R[r * 3 + 2] * v.eye.z);
    put(cams, "%d %.12f %.12f %.12f %.12f %.12f %.12f %.12f 1 v_%02d.png\n\n", i + 1, q[0], q[1], q[2], q[3], t[0],
        t[1], t[2], i);
}

static int write_points(const options *o, const points *pts)
{
    text t = {0};
    if (o->format == FMT_NERFSTUDIO) {
        put(&t, "ply\nformat ascii 1.0\nelement vertex %d\nproperty float x\nproperty float y\nproperty float z\n"
                "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n", pts->n);
        for (int i = 0; i < pts->n; i++)
            put(&t, "%.6f %.6f %.6f %d %d %d\n", pts->xyz[i][0], pts->xyz[i][1], pts->xyz[i][2], pts->rgb[i][0],
                pts->rgb[i][1], pts->rgb[i][2]);
        return save_text(o, "points.ply", &t);
    }
    for (int i = 0; i < pts->n; i++)
        put(&t, "%d %.6f %.6f %.6f %d %d %d 0.5\n", i + 1, pts->xyz[i][0], pts->xyz[i][1], pts->xyz[i][2],
            pts->rgb[i][0], pts->rgb[i][1], pts->rgb[i][2]);
    return save_text(o, "sparse/0/points3D.txt", &t);
}

/* The header of the camera file: nerfstudio's intrinsics, or COLMAP's one camera. */
static int camera_header(const options *o, text *cams)
{
    const cs_lens *l = &o->lens;
    if (o->format == FMT_NERFSTUDIO) {
        put(cams, "{\n  \"fl_x\": %.9f, \"fl_y\": %.9f, \"cx\": %.9f, \"cy\": %.9f, \"w\": %d, \"h\": %d, ", l->fx, l->fy,
            l->cx, l->cy, o->W, o->H);
        if (nerfstudio_lens(l, cams)) return -1;
        put(cams, "\"ply_file_path\": \"points.ply\",\n  \"frames\": [");
        return 0;
    }
    text c = {0};
    put(&c, "1 %s %d %d", cs_lens_model_name(l->model), o->W, o->H);
    if (one_focal(l->model)) put(&c, " %.9f %.9f %.9f", l->fx, l->cx, l->cy);
    else put(&c, " %.9f %.9f %.9f %.9f", l->fx, l->fy, l->cx, l->cy);
    int nk = cs_lens_model_params(l->model) - (one_focal(l->model) ? 3 : 4);
    for (int k = 0; k < nk; k++) put(&c, " %.9g", l->k[k]);
    put(&c, "\n");
    return save_text(o, "sparse/0/cameras.txt", &c);
}

/* The nerfstudio or COLMAP dataset. */
static int write_reconstruction(const options *o)
{
    char p[1200];
    const char *dirs[] = {"images", "masks", "sparse/0"};
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/%s", o->out, dirs[k]);
        if ((k != 1 || o->distractor) && (k != 2 || o->format == FMT_COLMAP) && cs_mkdirs(p)) return -1;
    }
    text cams = {0};
    points *pts = calloc(1, sizeof *pts);
    cs_image img = {o->W, o->H, 3, malloc((size_t)o->W * o->H * 3)}, mk = {o->W, o->H, 3, malloc((size_t)o->W * o->H * 3)};
    unsigned char *mask = malloc((size_t)o->W * o->H);
    int r = !pts || !img.px || !mk.px || !mask ? cs_fail("out of memory") : camera_header(o, &cams);
    for (int i = 0; !r && i < VIEWS * tiles; i++) {
        render_view(o, i, &img, o->distractor ? mask : NULL, pts);
        snprintf(p, sizeof p, "%s/images/v_%02d.png", o->out, i);
        r = cs_image_save_png(p, &img);
        if (!r && o->distractor) {
            for (size_t q = 0; q < (size_t)o->W * o->H; q++) memset(mk.px + q * 3, mask[q], 3);
            /* COLMAP / brush name a mask <image name>.png; nerfstudio's mask_path names it */
            snprintf(p, sizeof p, "%s/masks/v_%02d.png%s", o->out, i, o->format == FMT_COLMAP ? ".png" : "");
            r = cs_image_save_png(p, &mk);
        }
        add_frame(o, i, &cams);
    }
    if (!r && o->format == FMT_NERFSTUDIO) put(&cams, "\n  ]\n}\n");
    if (!r) r = save_text(o, o->format == FMT_NERFSTUDIO ? "transforms.json" : "sparse/0/images.txt", &cams) ||
                write_points(o, pts);
    free(cams.s), free(pts), free(mask);
    cs_image_free(&img), cs_image_free(&mk);
    return r;
}

/* The Blender / NeRF-synthetic dataset (no lens, no distractor). */
static int write_blender(const options *o)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/train", o->out);
    if (cs_mkdirs(p)) return -1;
    snprintf(p, sizeof p, "%s/test", o->out);
    if (cs_mkdirs(p)) return -1;
    text js[2] = {{0}, {0}};
    for (int s = 0; s < 2; s++) put(&js[s], "{\n  \"camera_angle_x\": %.10f,\n  \"frames\": [", FOVX);
    int count[2] = {0, 0}, r = 0;
    int ch = o->alpha ? 4 : 3;
    cs_image img = {o->W, o->H, ch, malloc((size_t)o->W * o->H * ch)};
    if (!img.px) r = cs_fail("out of memory");
    for (int i = 0; !r && i < VIEWS * tiles; i++) {
        int s = held_out(o, i), idx = count[s]++;
        render_view(o, i, &img, NULL, NULL);
        snprintf(p, sizeof p, "%s/%s/r_%d.png", o->out, s ? "test" : "train", idx);
        r = cs_image_save_png(p, &img);
        view v = view_of(i);
        char m[400];
        gl_matrix(&v, m, sizeof m);
        put(&js[s], "%s\n    {\"file_path\": \"./%s/r_%d\", \"transform_matrix\": %s}", idx ? "," : "",
            s ? "test" : "train", idx, m);
    }
    cs_image_free(&img);
    for (int s = 0; s < 2; s++) {
        put(&js[s], "\n  ]\n}\n");
        if (!r) r = save_text(o, s ? "transforms_test.json" : "transforms_train.json", &js[s]);
        free(js[s].s);
    }
    return r;
}

/* --lens MODEL:K1,K2,... onto O's pinhole intrinsics */
static int parse_lens(const char *spec, options *o)
{
    char name[64];
    const char *colon = strchr(spec, ':');
    size_t n = colon ? (size_t)(colon - spec) : strlen(spec);
    if (n >= sizeof name) return cs_fail("--lens %s: unknown model", spec);
    memcpy(name, spec, n);
    name[n] = '\0';
    int m = cs_lens_model_by_name(name);
    if (m < 0) return cs_fail("--lens %s: unknown model '%s'", spec, name);
    o->lens.model = (cs_lens_model)m;
    const char *s = colon ? colon + 1 : "";
    for (int k = 0; *s && k < CS_LENS_MAX_PARAMS; k++) {
        char *e;
        o->lens.k[k] = strtod(s, &e);
        if (e == s) return cs_fail("--lens %s: bad coefficient list", spec);
        s = *e == ',' ? e + 1 : e;
    }
    return 0;
}

static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->W = 160, o->H = 120;
    int pos = 0;
    double focal = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--format") && i + 1 < argc) {
            const char *f = argv[++i];
            o->format = !strcmp(f, "nerfstudio") ? FMT_NERFSTUDIO : !strcmp(f, "colmap") ? FMT_COLMAP
                      : !strcmp(f, "blender") ? FMT_BLENDER : -1;
            if (o->format < 0) return cs_fail("--format %s: blender, nerfstudio or colmap", f);
        } else if (!strcmp(a, "--lens") && i + 1 < argc) {
            if (parse_lens(argv[++i], o)) return -1;
        } else if (!strcmp(a, "--focal") && i + 1 < argc) {
            focal = atof(argv[++i]);
            if (!(focal > 0)) return cs_fail("--focal %s: a focal length in pixels", argv[i]);
        } else if (!strcmp(a, "--tiles") && i + 1 < argc) {
            tiles = atoi(argv[++i]);
            if (tiles < 1 || tiles > MAX_TILES) return cs_fail("--tiles %s: 1 to %d copies", argv[i], MAX_TILES);
        } else if (!strcmp(a, "--sky")) {
            sky = 1;
        } else if (!strcmp(a, "--alpha")) {
            o->alpha = 1;
        } else if (!strcmp(a, "--distractor")) {
            o->distractor = 1;
        } else if (a[0] == '-') {
            return cs_fail("unknown option %s", a);
        } else if (pos == 0) {
            o->out = a, pos++;
        } else if (pos == 1 && i + 1 < argc) {
            o->W = atoi(a), o->H = atoi(argv[++i]), pos++;
        } else {
            return cs_fail("unexpected argument %s", a);
        }
    }
    if (!o->out) return cs_fail("no output folder");
    if (o->alpha && (o->format != FMT_BLENDER || sky)) return cs_fail("--alpha is for the Blender format, without --sky");
    if (o->W < 8 || o->H < 8 || o->W > 4096 || o->H > 4096) return cs_fail("bad size %dx%d", o->W, o->H);
    if (tiles > 1 && o->distractor) return cs_fail("--tiles and --distractor do not go together");
    if (o->format == FMT_BLENDER && (o->lens.model != CS_LENS_SIMPLE_PINHOLE || o->distractor))
        return cs_fail("--lens and --distractor need --format nerfstudio or colmap");
    o->lens.fx = o->lens.fy = focal > 0 ? focal : o->W / (2 * tan(FOVX / 2));
    o->lens.cx = o->W / 2.0, o->lens.cy = o->H / 2.0;
    return 0;
}

int main(int argc, char **argv)
{
    options o;
    if (parse_args(argc, argv, &o)) {
        fprintf(stderr, "gen_demo: %s\nusage: gen_demo OUT_DIR [WIDTH HEIGHT] [--format blender|nerfstudio|colmap] "
                        "[--lens MODEL:K1,K2,...] [--focal F] [--distractor] [--tiles K] [--sky] [--alpha]\n", cs_last_error());
        return 2;
    }
    if (o.format == FMT_BLENDER ? write_blender(&o) : write_reconstruction(&o)) {
        fprintf(stderr, "gen_demo: %s\n", cs_last_error());
        return 1;
    }
    printf("demo scene: %d views at %dx%d (%s lens) in %s\n", VIEWS * tiles, o.W, o.H, cs_lens_model_name(o.lens.model), o.out);
    return 0;
}
