/* test_background: data.background, the colour a model is drawn on: its forms and errors, the
 * training photos' border colour ("border": which photos, which pixels, alpha), and a run that
 * takes it from the photos storing it as numbers that every later command reads back. */
#include <stdlib.h>
#include <string.h>

#include "backdrop.h"
#include "cli_run.h"
#include "config.h"
#include "fixtures.h"
#include "scene.h"
#include "test.h"
#include "util.h"

static int background_is(const char *spec, int white, int want_rc, float r, float g, float b)
{
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.background, sizeof c.data.background, "%s", spec);
    c.data.white_background = white;
    float rgb[3] = {-1, -1, -1};
    int rc = cs_config_background(&c.data, rgb);
    CHECK(rc == want_rc, "\"%s\" (white %d): %d, expected %d", spec, white, rc, want_rc);
    if (rc >= 0)
        CHECK(rgb[0] == r && rgb[1] == g && rgb[2] == b, "\"%s\" (white %d): %g %g %g, expected %g %g %g", spec, white,
              rgb[0], rgb[1], rgb[2], r, g, b);
    else
        CHECK(strstr(cs_last_error(), "data.background"), "\"%s\": the message does not name the key: %s", spec,
              cs_last_error());
    return 0;
}

int test_background_config(void)
{
    CHECK_OK(background_is("", 0, 0, 0, 0, 0));
    CHECK_OK(background_is("", 1, 0, 1, 1, 1));
    CHECK_OK(background_is("white", 0, 0, 1, 1, 1));
    CHECK_OK(background_is("black", 0, 0, 0, 0, 0));
    CHECK_OK(background_is("0.25 0.5 1", 0, 0, 0.25f, 0.5f, 1.f));
    CHECK_OK(background_is("0.25, 0.5,0.75", 0, 0, 0.25f, 0.5f, 0.75f));
    CHECK_OK(background_is("border", 0, 1, 0, 0, 0));
    const char *bad[] = {"grey", "0.2 0.4", "0.2 0.4 0.6 0.8", "1.5 0 0", "-0.1 0 0", "nan 0 0", "0.2,,0.4,0.6",
                         "0.2 0.4 0.6x", "Border"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_OK(background_is(bad[i], 0, -1, 0, 0, 0));
        cs_config c;
        cs_config_defaults(&c);
        char set[128];
        snprintf(set, sizeof set, "data.background=%s", bad[i]);
        CHECK(cs_config_set(&c, set) == -1 && strstr(cs_last_error(), "allowed are"), "--set %s: %s", set,
              cs_last_error());
    }
    /* beside -w: one of the two */
    CHECK_OK(background_is("black", 1, -1, 0, 0, 0));
    CHECK(strstr(cs_last_error(), "both set"), "%s", cs_last_error());
    return 0;
}

/* A 32 x 24 photo: a one-pixel border of BORDER (alpha A where 4 channels), inside (0, 255, 0). */
static int write_ringed(const char *path, const unsigned char border[3], int channels, unsigned char a)
{
    cs_image img = {32, 24, channels, calloc(32 * 24 * (size_t)channels, 1)};
    if (!img.px) return cs_fail("out of memory");
    for (int y = 0; y < 24; y++)
        for (int x = 0; x < 32; x++) {
            unsigned char *p = img.px + ((size_t)y * 32 + x) * (size_t)channels;
            int ring = x == 0 || y == 0 || x == 31 || y == 23;
            p[0] = ring ? border[0] : 0, p[1] = ring ? border[1] : 255, p[2] = ring ? border[2] : 0;
            if (channels == 4) p[3] = ring ? a : 255;
        }
    int rc = cs_image_save_png(path, &img);
    free(img.px);
    return rc;
}

static int load_with(const char *dir, const char *background, int eval, cs_scene *s)
{
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", dir);
    snprintf(c.data.background, sizeof c.data.background, "%s", background);
    c.data.eval = eval;
    return cs_scene_load(&c.data, s);
}

int test_background_border(void)
{
    char root[600], p[700];
    snprintf(root, sizeof root, "%s/bg_colmap", test_tmpdir());
    write_colmap(root, 1, 1, 0, 0);
    /* photo i's border is (200, 100, 50 + 10 i): the blue mean says which photos were read */
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/images/img_%02d.png", root, i);
        const unsigned char ring[3] = {200, 100, (unsigned char)(50 + 10 * i)};
        CHECK_OK(write_ringed(p, ring, 3, 255));
    }
    cs_scene s;
    /* all 10 train: photos 0, 1, 2, 3, 5, 6, 7, 8 (i * 10 / 8) */
    CHECK_OK(load_with(root, "border", 0, &s));
    CHECK(s.background_photos == CS_BACKDROP_PHOTOS, "%d photos read", s.background_photos);
    CHECK(fabsf(s.background[0] - 200 / 255.f) < 1e-6f && fabsf(s.background[1] - 100 / 255.f) < 1e-6f &&
              fabsf(s.background[2] - 90 / 255.f) < 1e-6f,
          "border colour %g %g %g, expected 200 100 90 / 255", s.background[0] * 255, s.background[1] * 255,
          s.background[2] * 255);
    cs_scene_free(&s);
    /* with the test split (photos 0 and 8 held out) the 8 training photos 1-7 and 9 */
    CHECK_OK(load_with(root, "border", 1, &s));
    CHECK(fabsf(s.background[2] * 255 - (50 + 10 * 37 / 8.f)) < 1e-4f, "blue %g with the test split, expected %g",
          s.background[2] * 255, 50 + 10 * 37 / 8.f);
    cs_scene_free(&s);
    /* numbers and the default read no photo */
    CHECK_OK(load_with(root, "0.1 0.2 0.3", 0, &s));
    CHECK(s.background_photos == 0 && s.background[2] == 0.3f, "numbers");
    cs_scene_free(&s);
    /* alpha weighs a pixel: photo 1's transparent border counts for nothing */
    const unsigned char grey[3] = {100, 100, 100}, light[3] = {250, 250, 250};
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/images/img_%02d.png", root, i);
        CHECK_OK(write_ringed(p, i == 1 ? light : grey, i == 1 ? 4 : 3, 0));
    }
    CHECK_OK(load_with(root, "border", 0, &s));
    CHECK(fabsf(s.background[0] * 255 - 100) < 1e-4f, "a transparent border counted: %g", s.background[0] * 255);
    cs_scene_free(&s);
    /* every border transparent: an error naming the key; an unreadable photo: its name */
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/images/img_%02d.png", root, i);
        CHECK_OK(write_ringed(p, light, 4, 0));
    }
    CHECK(load_with(root, "border", 0, &s) == -1 && strstr(cs_last_error(), "transparent") &&
              strstr(cs_last_error(), "data.background"),
          "transparent borders: %s", cs_last_error());
    snprintf(p, sizeof p, "%s/images/img_05.png", root);
    CHECK_OK(write_text(p, "not a photo"));
    CHECK(load_with(root, "border", 0, &s) == -1 && strstr(cs_last_error(), "img_05.png"), "bad photo: %s",
          cs_last_error());
    return 0;
}

/* the "background" of a run's config.json as a colour */
static int stored_background(const char *run, float rgb[3])
{
    char p[700];
    snprintf(p, sizeof p, "%s/config.json", run);
    cs_config c;
    cs_config_defaults(&c);
    if (cs_config_load_file(&c, p)) return -1;
    return cs_config_background(&c.data, rgb);
}

int test_background_run(void)
{
    char data[600], out[600], log[700];
    snprintf(data, sizeof data, "%s/bg_scene", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(out, sizeof out, "%s/bg_run", test_tmpdir());
    snprintf(log, sizeof log, "%s/bg_run.log", test_tmpdir());
    const char *tiny = "--set device.tune=off --set optim.random_init_points=500 --set log.interval=5";
    CHECK(cli_run("", log, "train -s %s -o %s --eval --iterations 6 --set data.background=border %s", data, out, tiny) == 0,
          "training failed, see %s", log);
    char *text = cs_read_file(log, NULL);
    const char *line = text ? strstr(text, "\nbackground ") : NULL;
    float said[3] = {-1, -1, -1}, stored[3] = {-2, -2, -2};
    CHECK(line && sscanf(line + 12, "%f %f %f", &said[0], &said[1], &said[2]) == 3 &&
              strstr(line, "training photos' outer 5% (data.background border)"),
          "no background line in %s", log);
    free(text);
    /* the colour is stored (not "border"), so eval, mesh and the viewer draw on it */
    CHECK(stored_background(out, stored) == 0, "config.json's background is not a colour: %s", cs_last_error());
    for (int k = 0; k < 3; k++)
        CHECK(fabsf(said[k] - stored[k]) < 1e-3f && said[k] > 0.f, "said %g, stored %g", said[k], stored[k]);
    CHECK(cli_run("", log, "eval -m %s", out) == 0, "eval of the run failed, see %s", log);
    /* with -w: refused before anything is written */
    snprintf(out, sizeof out, "%s/bg_run_w", test_tmpdir());
    CHECK(cli_run("", log, "train -s %s -o %s -w --iterations 2 --set data.background=border %s", data, out, tiny) == 1,
          "-w beside data.background was not refused");
    CHECK(file_contains(log, "both set") && !cs_dir_exists(out), "the refusal does not say why, or left %s", out);
    return 0;
}
