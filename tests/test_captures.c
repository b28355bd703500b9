/* test_captures: the captures users have, end to end through the CLI on the generated demo
 * scene (PoCL in CI): photos through distorting lenses (COLMAP SIMPLE_RADIAL, nerfstudio OPENCV
 * and OPENCV_FISHEYE) train as well as pinhole photos of the same views, and masks keep a
 * distractor out of the model. gen_demo ray-casts each lens exactly, at twice the training
 * size; every model is measured on the same clean pinhole test views. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "config.h"
#include "image.h"
#include "scene.h"
#include "test.h"
#include "util.h"

#define ITERS 600

/* gen_demo OUT 160 120 ARGS (once per test run) */
static int gen(const char *out, const char *args)
{
    if (cs_dir_exists(out)) return 0;
    const char *g = getenv("CLSPLAT_GEN_DEMO");
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "%s %s 160 120 %s >/dev/null", g ? g : "./build/gen_demo", out, args);
    return system(cmd) == 0 ? 0 : cs_fail("gen_demo failed: %s", cmd);
}

/* The test PSNR in the last "[eval N] test: ..." line of LOG, or NAN. */
static double log_psnr(const char *log)
{
    char *d = cs_read_file(log, NULL), *s = d, *last = NULL;
    while (s && (s = strstr(s, "PSNR "))) last = s, s++;
    double v = last ? atof(last + 5) : NAN;
    free(d);
    return v;
}

/* Trains DATA at half size into OUT (EXTRA: more options) and returns the test PSNR of the
   model on the clean pinhole views of REF in *PSNR. */
static int train_and_measure(const char *data, const char *out, const char *extra, const char *ref, double *psnr)
{
    char log[800];
    snprintf(log, sizeof log, "%s.log", out);
    int st = cli_run("", log, "train -c configs/demo.json -s %s -o %s -r 2 --set optim.iterations_on_cpu=%d "
                     "--set eval.save_renders=false --set log.tensorboard=false %s",
                     data, out, ITERS, extra);
    CHECK(st == 0, "train %s: exit %d (%s)", data, st, log);
    st = cli_run("", log, "eval -m %s -s %s -r 2", out, ref);
    CHECK(st == 0, "eval %s on %s: exit %d (%s)", out, ref, st, log);
    *psnr = log_psnr(log);
    CHECK(isfinite(*psnr), "no PSNR in %s", log);
    return 0;
}

int test_distorted_cameras_train(void)
{
    static const struct {
        const char *name, *args;
    } sets[] = {
        {"pinhole", "--format nerfstudio"},
        {"simple_radial", "--format colmap --lens SIMPLE_RADIAL:-0.2"},
        {"opencv", "--format nerfstudio --lens OPENCV:-0.25,0.06,0.002,-0.001"},
        {"opencv_fisheye", "--format nerfstudio --lens OPENCV_FISHEYE:0.05,-0.01,0,0"},
    };
    char data[4][700], out[700], ref[700];
    double psnr[4];
    for (int i = 0; i < 4; i++) {
        snprintf(data[i], sizeof data[i], "%s/lens_%s", test_tmpdir(), sets[i].name);
        CHECK_OK(gen(data[i], sets[i].args));
    }
    snprintf(ref, sizeof ref, "%s", data[0]);
    for (int i = 0; i < 4; i++) {
        snprintf(out, sizeof out, "%s/lens_out_%s", test_tmpdir(), sets[i].name);
        CHECK_OK(train_and_measure(data[i], out, "", ref, &psnr[i]));
        printf("  %-15s %d iterations: %.2f dB on the pinhole test views\n", sets[i].name, ITERS, psnr[i]);
    }
    /* measured on PoCL: pinhole 30.72, SIMPLE_RADIAL 30.56, OPENCV 30.39, OPENCV_FISHEYE 30.45 dB */
    for (int i = 1; i < 4; i++)
        CHECK(psnr[i] > psnr[0] - 0.5, "%s: %.2f dB, more than 0.5 dB under the pinhole photos' %.2f", sets[i].name,
              psnr[i], psnr[0]);
    return 0;
}

/* PSNR over the pixels that the masks of DIS (twice the size) leave out, between the renders
   in RENDERS (the held-out views) and the clean photos of those views in CLEAN (twice the
   size): where the distractor would have been. The count of such pixels in *N. */
static double region_psnr(const char *renders, const char *clean, const char *dis, long *n)
{
    double se = 0;
    *n = 0;
    for (int i = 0; i < 60; i++) {
        char rp[800], cp[800], mp[800];
        snprintf(rp, sizeof rp, "%s/v_%02d.png", renders, i);
        if (!cs_file_exists(rp)) continue; /* a training view */
        snprintf(cp, sizeof cp, "%s/images/v_%02d.png", clean, i);
        snprintf(mp, sizeof mp, "%s/masks/v_%02d.png.png", dis, i);
        cs_image r, c, m, cs, ms;
        if (cs_image_load(rp, &r) || cs_image_load(cp, &c) || cs_image_load(mp, &m) ||
            cs_image_resize_area(&c, r.width, r.height, &cs) || cs_image_resize_area(&m, r.width, r.height, &ms))
            return NAN;
        for (size_t p = 0; p < (size_t)r.width * r.height; p++) {
            if (ms.px[p * ms.channels] >= 128) continue;
            for (int k = 0; k < 3; k++) {
                double d = (r.px[p * r.channels + k] - cs.px[p * cs.channels + k]) / 255.0;
                se += d * d;
            }
            (*n)++;
        }
        cs_image_free(&r), cs_image_free(&c), cs_image_free(&m), cs_image_free(&cs), cs_image_free(&ms);
    }
    return *n ? 10 * log10(3.0 * *n / se) : NAN;
}

int test_masks_keep_distractor_out(void)
{
    char dis[700], clean[700], out[700], ren[800], log[800];
    snprintf(dis, sizeof dis, "%s/distractor", test_tmpdir());
    snprintf(clean, sizeof clean, "%s/clean", test_tmpdir());
    CHECK_OK(gen(dis, "--format colmap --distractor"));
    CHECK_OK(gen(clean, "--format colmap"));
    double test_psnr[2], region[2];
    for (int masked = 1; masked >= 0; masked--) {
        snprintf(out, sizeof out, "%s/distractor_%s", test_tmpdir(), masked ? "masked" : "unmasked");
        CHECK_OK(train_and_measure(dis, out, masked ? "" : "--set data.masks=", clean, &test_psnr[masked]));
        snprintf(ren, sizeof ren, "%s/test_renders", out);
        snprintf(log, sizeof log, "%s.render.log", out);
        CHECK(cli_run("", log, "render -m %s --split test -o %s", out, ren) == 0, "render %s (%s)", out, log);
        long n;
        region[masked] = region_psnr(ren, clean, dis, &n);
        CHECK(isfinite(region[masked]) && n > 100, "%s: %ld masked pixels", out, n);
        printf("  %-8s: test views where the distractor would be: %.2f dB against the clean photos (%ld pixels); "
               "whole test views %.2f dB\n", masked ? "masks" : "no masks", region[masked], n, test_psnr[masked]);
    }
    /* with masks the model shows the scene where the distractor was; without, the distractor */
    CHECK(region[1] > region[0] + 3, "masked %.2f dB, unmasked %.2f dB where the distractor was", region[1], region[0]);
    CHECK(test_psnr[1] > test_psnr[0], "clean test views: masked %.2f dB, unmasked %.2f dB", test_psnr[1],
          test_psnr[0]);
    return 0;
}

/* Replaces the first FROM in the file PATH by TO. */
static int edit_file(const char *path, const char *from, const char *to)
{
    char *d = cs_read_file(path, NULL);
    if (!d) return -1;
    char *at = strstr(d, from);
    if (!at) {
        free(d);
        return cs_fail("%s: no '%s'", path, from);
    }
    size_t n = strlen(d) + strlen(to) + 1;
    char *o = malloc(n);
    snprintf(o, n, "%.*s%s%s", (int)(at - d), d, to, at + strlen(from));
    int r = cs_write_file_atomic(path, o, strlen(o));
    free(d), free(o);
    return r;
}

int test_nerfstudio_lens_masks_points(void)
{
    char data[700], tj[800];
    snprintf(data, sizeof data, "%s/ns_fields", test_tmpdir());
    const char *g = getenv("CLSPLAT_GEN_DEMO");
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "%s %s 48 36 --format nerfstudio --lens OPENCV:-0.2,0.05,0.001,0.002 --distractor >/dev/null",
             g ? g : "./build/gen_demo", data);
    CHECK(system(cmd) == 0, "%s", cmd);
    snprintf(tj, sizeof tj, "%s/transforms.json", data);
    char *keep = cs_read_file(tj, NULL); /* each bad case edits this original */
    CHECK(keep != NULL, "%s", cs_last_error());
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", data);
    c.data.eval = true;
    cs_scene s;
    CHECK_OK(cs_scene_load(&c.data, &s));
    const cs_camera *cam = &s.cams[1];
    CHECK(s.n_points > 100 && cam->lens.model == CS_LENS_OPENCV && cam->lens.k[0] == -0.2 && cam->lens.k[3] == 0.002 &&
              cam->map >= 0 && cam->mask_path[0] && s.weighted,
          "points %d, model %d, k1 %g, p2 %g, map %d, mask '%s', weighted %d", s.n_points, cam->lens.model,
          cam->lens.k[0], cam->lens.k[3], cam->map, cam->mask_path, s.weighted);
    cs_image img;
    CHECK_OK(cs_scene_read_image(&s, cam, &img));
    long masked = 0;
    for (size_t p = 0; p < (size_t)img.width * img.height; p++) masked += img.px[p * 4 + 3] < 128;
    CHECK(img.channels == 4 && img.width == cam->width && masked > 10, "%d channels, %dx%d, %ld masked pixels",
          img.channels, img.width, img.height, masked);
    cs_image_free(&img);
    cs_scene_free(&s);
    /* the whole field of view: the undistorted barrel photo's edges bow inwards, leaving the
       middle of each border uncovered (weight 0) */
    c.data.undistort_crop = CS_CROP_FULL;
    c.data.masks[0] = '\0';
    CHECK_OK(edit_file(tj, "\"mask_path\"", "\"no_mask_path\""));
    CHECK_OK(cs_scene_load(&c.data, &s));
    CHECK_OK(cs_scene_read_image(&s, &s.cams[1], &img));
    int top = img.px[(size_t)img.width / 2 * 4 + 3], mid = img.px[((size_t)img.height / 2 * img.width + img.width / 2) * 4 + 3];
    CHECK(s.weighted && img.channels == 4 && top == 0 && mid == 255, "full crop: weighted %d, top middle %d, centre %d",
          s.weighted, top, mid);
    cs_image_free(&img);
    cs_scene_free(&s);
    c.data.undistort_crop = CS_CROP_VALID;
    /* what is still unsupported is refused by name */
    static const struct {
        const char *from, *to, *want;
    } bad[] = {
        {"\"camera_model\": \"OPENCV\"", "\"camera_model\": \"EQUIRECTANGULAR\"", "EQUIRECTANGULAR"},
        {"\"k1\": -0.2", "\"k1\": -0.2, \"k4\": 0.01", "k4"},
        {"\"k1\": -0.2", "\"k1\": -5", "does not undistort"},
        {"\"ply_file_path\": \"points.ply\"", "\"ply_file_path\": \"nowhere.ply\"", "nowhere.ply"},
        {"masks/v_03.png", "masks/v_missing.png", "v_missing.png"},
        {"\"camera_model\": \"OPENCV\", \"k1\": -0.2", "\"camera_model\": \"OPENCV_FISHEYE\", \"k1\": -0.2", "OPENCV_FISHEYE"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_OK(cs_write_file_atomic(tj, keep, strlen(keep)));
        CHECK_OK(edit_file(tj, bad[i].from, bad[i].to));
        CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), bad[i].want), "%s: %s", bad[i].to,
              cs_last_error());
    }
    free(keep);
    return 0;
}
