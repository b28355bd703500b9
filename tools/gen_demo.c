/* gen_demo: ray-casts clsplat's built-in demo scene (CPU only, no OpenCL, independent of the
 * rasterizer) and writes it as a Blender / NeRF-synthetic dataset:
 *   OUT/transforms_train.json, OUT/transforms_test.json, OUT/train/r_N.png, OUT/test/r_N.png
 * Scene: a textured sphere, box and cylinder on a checkered disc, Lambertian shading with a
 * sun and sky light, on a black background. 60 cameras on a hemisphere, every 3rd one held
 * out for testing (40 train, 20 test).   usage: gen_demo OUT_DIR [WIDTH HEIGHT] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
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
} hit;

static void try_hit(hit *h, double t, v3 n, v3 albedo)
{
    if (t > 1e-6 && t < h->t) h->t = t, h->n = n, h->albedo = albedo;
}

static void trace(v3 o, v3 d, hit *h)
{
    h->t = INFINITY;
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

static v3 shade(v3 o, v3 d)
{
    hit h;
    trace(o, d, &h);
    if (!isfinite(h.t)) return (v3){0, 0, 0};
    v3 p = add(o, mul(d, h.t)), sun = norm3((v3){0.5, 0.3, 0.8});
    if (dot3(h.n, d) > 0) h.n = mul(h.n, -1);
    double lam = fmax(0, dot3(h.n, sun));
    hit sh;
    trace(add(p, mul(h.n, 1e-4)), sun, &sh);
    if (isfinite(sh.t)) lam *= 0.25;
    double amb = 0.25 + 0.15 * h.n.z;
    return mul(h.albedo, lam * 0.8 + amb);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: gen_demo OUT_DIR [WIDTH HEIGHT]\n");
        return 2;
    }
    const char *out = argv[1];
    int W = argc == 4 ? atoi(argv[2]) : 160, H = argc == 4 ? atoi(argv[3]) : 120;
    if (W < 8 || H < 8 || W > 4096 || H > 4096) {
        fprintf(stderr, "gen_demo: bad size %dx%d\n", W, H);
        return 2;
    }
    char p[1200];
    snprintf(p, sizeof p, "%s/train", out);
    if (cs_mkdirs(p)) goto fail;
    snprintf(p, sizeof p, "%s/test", out);
    if (cs_mkdirs(p)) goto fail;
    const double fovx = 0.75;
    const double f = W / (2 * tan(fovx / 2));
    char *js[2];
    size_t cap = 1 << 16;
    js[0] = malloc(cap), js[1] = malloc(cap);
    size_t len[2];
    for (int s = 0; s < 2; s++) len[s] = (size_t)snprintf(js[s], cap, "{\n  \"camera_angle_x\": %.10f,\n  \"frames\": [", fovx);
    int count[2] = {0, 0};
    cs_image img = {W, H, 3, malloc((size_t)W * H * 3)};
    for (int i = 0; i < 60; i++) {
        int test = i % 3 == 2, s = test;
        double az = i * 2.399963 /* golden angle */, el = 0.3 + 0.9 * ((i * 0.618034) - floor(i * 0.618034));
        double rad = 3.6;
        v3 eye = {rad * cos(az) * cos(el), rad * sin(az) * cos(el), rad * sin(el) - 0.1};
        v3 fwd = norm3(sub((v3){0, 0, -0.15}, eye)), right = norm3(cross3(fwd, (v3){0, 0, 1})), down = cross3(fwd, right);
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                v3 acc = {0, 0, 0};
                for (int sy = 0; sy < 2; sy++)
                    for (int sx = 0; sx < 2; sx++) {
                        double u = (x + 0.25 + 0.5 * sx - W / 2.0) / f, v = (y + 0.25 + 0.5 * sy - H / 2.0) / f;
                        v3 d = norm3(add(fwd, add(mul(right, u), mul(down, v))));
                        acc = add(acc, shade(eye, d));
                    }
                double c3[3] = {acc.x / 4, acc.y / 4, acc.z / 4};
                for (int k = 0; k < 3; k++) {
                    double g = pow(fmin(fmax(c3[k], 0), 1), 1 / 2.2) * 255 + 0.5;
                    img.px[((size_t)y * W + x) * 3 + k] = (unsigned char)(g > 255 ? 255 : g);
                }
            }
        int idx = count[s]++;
        snprintf(p, sizeof p, "%s/%s/r_%d.png", out, test ? "test" : "train", idx);
        if (cs_image_save_png(p, &img)) goto fail;
        /* OpenGL camera-to-world: columns right, up (= -down), back (= -fwd), eye */
        v3 up = mul(down, -1), back = mul(fwd, -1);
        len[s] += (size_t)snprintf(js[s] + len[s], cap - len[s],
                                   "%s\n    {\"file_path\": \"./%s/r_%d\", \"transform_matrix\": [[%.9f, %.9f, %.9f, %.9f], "
                                   "[%.9f, %.9f, %.9f, %.9f], [%.9f, %.9f, %.9f, %.9f], [0, 0, 0, 1]]}",
                                   idx ? "," : "", test ? "test" : "train", idx, right.x, up.x, back.x, eye.x, right.y,
                                   up.y, back.y, eye.y, right.z, up.z, back.z, eye.z);
    }
    cs_image_free(&img);
    for (int s = 0; s < 2; s++) {
        len[s] += (size_t)snprintf(js[s] + len[s], cap - len[s], "\n  ]\n}\n");
        snprintf(p, sizeof p, "%s/transforms_%s.json", out, s ? "test" : "train");
        if (cs_write_file_atomic(p, js[s], len[s])) goto fail;
        free(js[s]);
    }
    printf("demo scene: %d train + %d test views at %dx%d in %s\n", count[0], count[1], W, H, out);
    return 0;
fail:
    fprintf(stderr, "gen_demo: %s\n", cs_last_error());
    return 1;
}
