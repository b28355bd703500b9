/* test_foundation: config, images, PLY, dataset readers, allocator, kernel cache. Fixtures
 * are written by the tests themselves. */
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <fcntl.h>
#include <jpeglib.h>
#include <png.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl_mem.h"
#include "config.h"
#include "densify.h"
#include "image.h"
#include "kernels.h"
#include "lpips.h"
#include "tuning.h"
#include "scene.h"
#include "ply.h"
#include "splats.h"
#include "fixtures.h"
#include "test.h"
#include "util.h"

static void tpath(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", test_tmpdir(), name); }


/* ---- selection ---------------------------------------------------------------------------- */

/* cs_select_desc against a full sort: the rank-K value, the split around it and the same values
   afterwards, on fresh random arrays (continuous, a few distinct values, sorted, reversed, one
   value) */
int test_select_desc(void)
{
    uint64_t rs = test_seed() ^ 0x73656c6563ull;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + (size_t)(test_rand(&rs) * (round < 100 ? 8 : 3000)), k = (size_t)(test_rand(&rs) * n);
        int kind = round % 5, distinct = 1 + (int)(test_rand(&rs) * 6);
        float *v = malloc(sizeof(float) * n), *want = malloc(sizeof(float) * n);
        CHECK(v && want, "out of memory");
        for (size_t i = 0; i < n; i++) {
            float x = (float)test_randn(&rs);
            v[i] = kind == 1 ? (float)(int)(test_rand(&rs) * distinct) : kind == 2 ? (float)i : kind == 3 ? -(float)i
                   : kind == 4 ? 0.5f : x;
        }
        memcpy(want, v, sizeof(float) * n);
        qsort(want, n, sizeof(float), test_cmp_float_desc);
        float got = cs_select_desc(v, n, k);
        CHECK(got == want[k] && v[k] == want[k], "round %d (kind %d, n %zu, k %zu): %g and v[k] %g, the sort says %g",
              round, kind, n, k, got, v[k], want[k]);
        for (size_t i = 0; i < n; i++)
            CHECK(i < k ? v[i] >= got : i > k ? v[i] <= got : 1, "round %d: v[%zu] = %g on the wrong side of %g (k %zu)",
                  round, i, v[i], got, k);
        qsort(v, n, sizeof(float), test_cmp_float_desc);
        CHECK(!memcmp(v, want, sizeof(float) * n), "round %d: the values changed", round);
        free(v), free(want);
    }
    printf("  400 arrays of 1 to 3000 values: the rank-k value and the split agree with a full sort\n");
    return 0;
}

/* cs_prune_keep_flags against a full sort: exactly KEEP rows kept, none kept below a dropped
   one, ties at the cut kept by lowest index, NaN scored as 0, each offset the count of kept rows
   before it (given half the rounds); fresh random scores (continuous and a few distinct values),
   KEEP 0 .. N */
int test_prune_keep_flags(void)
{
    uint64_t rs = test_seed() ^ 0x7072756eull;
    for (int round = 0; round < 300; round++) {
        int n = 1 + (int)(test_rand(&rs) * (round < 100 ? 8 : 2000)), keep = (int)(test_rand(&rs) * (n + 1));
        int distinct = 1 + (int)(test_rand(&rs) * 5);
        float *v = malloc(sizeof(float) * n), *sorted = malloc(sizeof(float) * n);
        cl_uint *f = malloc(sizeof(cl_uint) * n), *off = round % 4 < 2 ? malloc(sizeof(cl_uint) * n) : NULL;
        CHECK(v && sorted && f && (off || round % 4 >= 2), "out of memory");
        for (int i = 0; i < n; i++) {
            v[i] = round % 2 ? (float)(int)(test_rand(&rs) * distinct) : (float)test_rand(&rs);
            if (test_rand(&rs) < 0.02) v[i] = NAN;
            sorted[i] = isnan(v[i]) ? 0.f : v[i];
            f[i] = 7;
            if (off) off[i] = 0xdeadu;
        }
        qsort(sorted, n, sizeof(float), test_cmp_float_desc);
        CHECK_OK(cs_prune_keep_flags(v, n, keep, f, off));
        float cut = keep > 0 ? sorted[keep - 1] : INFINITY;
        int kept = 0, dropped_tie = 0;
        for (int i = 0; i < n; i++) {
            float s = isnan(v[i]) ? 0.f : v[i];
            CHECK(f[i] <= 1, "round %d: flag %u", round, f[i]);
            CHECK(!off || off[i] == (cl_uint)kept, "round %d: row %d's offset %u, %d kept before it", round, i, off[i], kept);
            kept += f[i];
            CHECK(s > cut ? f[i] == 1 : s < cut ? f[i] == 0 : 1, "round %d: row %d (%g) flagged %u, cut %g", round, i, s,
                  f[i], cut);
            if (s == cut && !f[i]) dropped_tie = 1;
            CHECK(!(s == cut && f[i] && dropped_tie), "round %d: row %d kept after an earlier tie was dropped", round, i);
        }
        CHECK(kept == keep, "round %d: %d kept of %d, want %d", round, kept, n, keep);
        free(v), free(sorted), free(f), free(off);
    }
    CHECK(cs_prune_keep_flags(NULL, 3, 4, NULL, NULL) == -1, "keep above n accepted");
    printf("  300 score arrays of 1 to 2000 rows: the KEEP largest kept, ties by index\n");
    return 0;
}

/* ---- config ------------------------------------------------------------------------------ */

/* every shipped config in configs/ loads: a renamed setting fails here, not at a user's */
static int shipped_configs(void)
{
    const char *names[] = {"default", "demo", "fast", "fast_mcmc", "gpu16gb", "gpu8gb", "mcmc", "mcmc_4k", "mip"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[300];
        snprintf(p, sizeof p, "configs/%s.json", names[i]);
        cs_config c;
        cs_config_defaults(&c);
        CHECK(cs_config_load_file(&c, p) == 0, "%s: %s", p, cs_last_error());
    }
    return 0;
}

int test_config(void)
{
    CHECK_OK(shipped_configs());
    cs_config c;
    cs_config_defaults(&c);
    CHECK(c.optim.iterations == 30000 && c.densify.grad_threshold == 0.0002 && c.model.sh_degree == 3, "defaults");
    char p[600];
    tpath(p, sizeof p, "cfg.json");
    write_text(p, "{\"optim\": {\"iterations\": 1234}, \"model.antialias\": \"mip\", \"memory\": {\"flush_interval\": \"aggressive\"}}");
    CHECK_OK(cs_config_load_file(&c, p));
    CHECK(c.optim.iterations == 1234 && c.model.antialias == CS_AA_MIP && c.memory.flush_interval == 10, "file values");
    CHECK_OK(cs_config_set(&c, "eval.test_iterations=[5,10]"));
    CHECK_OK(cs_config_set(&c, "device.id=0:1"));
    CHECK_OK(cs_config_set(&c, "data.white_background=true"));
    CHECK(c.eval.n_test_iterations == 2 && c.eval.test_iterations[1] == 10 && !strcmp(c.device.id, "0:1") &&
              c.data.white_background,
          "--set values");
    /* errors name the key, file and allowed values */
    write_text(p, "{\"optim\": {\"iteratons\": 5}}");
    CHECK(cs_config_load_file(&c, p) == -1 && strstr(cs_last_error(), "optim.iterations") && strstr(cs_last_error(), p),
          "unknown key: %s", cs_last_error());
    CHECK(cs_config_set(&c, "model.sh_degree=7") == -1 && strstr(cs_last_error(), "[0, 3]"), "range: %s", cs_last_error());
    CHECK(cs_config_set(&c, "model.antialias=fancy") == -1 && strstr(cs_last_error(), "classic|mip"), "enum: %s",
          cs_last_error());
    CHECK(cs_config_set(&c, "data.resolution=3") == -1, "resolution 3 accepted");
    CHECK(cs_config_set(&c, "data.eval=maybe") == -1 && strstr(cs_last_error(), "true or false"), "bool: %s", cs_last_error());
    write_text(p, "{\"optim\": {\"iterations\": }");
    CHECK(cs_config_load_file(&c, p) == -1 && strstr(cs_last_error(), "line 1"), "syntax: %s", cs_last_error());
    /* the kernel options of a configuration leave nothing to the caller's stack (bench and
       tune once built a garbage set of programs) */
    cs_config_defaults(&c);
    cs_config_set(&c, "memory.sh_dtype=fp16");
    cs_kernel_opts ko;
    memset(&ko, 0xa5, sizeof ko);
    cs_kernel_opts_of(&c, &ko);
    CHECK(ko.programs == 0 && ko.tile == 0 && ko.pixels == 0 && ko.layout.sh_degree == 3 && ko.layout.sh_half == 1 &&
              ko.layout.opt_half == 0 && ko.layout.filter_3d == 0 && ko.deterministic == 0,
          "kernel options of the defaults: programs %#x tile %d", ko.programs, ko.tile);
    /* dump -> load -> dump is stable */
    char *d1 = cs_config_dump(&c);
    cs_config c2;
    cs_config_defaults(&c2);
    CHECK_OK(cs_config_load_string(&c2, d1, "dump"));
    char *d2 = cs_config_dump(&c2);
    int same = strcmp(d1, d2) == 0;
    free(d1), free(d2);
    CHECK(same && c2.memory.sh_dtype == CS_DTYPE_FP16, "dump round trip");
    return 0;
}

/* ---- images ------------------------------------------------------------------------------- */

static int write_png16_gray(const char *path, int w, int h, const uint16_t *v)
{
    FILE *f = fopen(path, "wb");
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) return -1;
    png_init_io(png, f);
    png_set_IHDR(png, info, w, h, 16, PNG_COLOR_TYPE_GRAY, 0, 0, 0);
    png_write_info(png, info);
    png_set_swap(png);
    for (int y = 0; y < h; y++) png_write_row(png, (png_const_bytep)(v + y * w));
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(f);
    return 0;
}


int test_images(void)
{
    uint64_t rs = test_seed() ^ 0x1111;
    char p[600];
    /* RGBA PNG round trip and compositing */
    cs_image a = {13, 7, 4, malloc(13 * 7 * 4)}, b;
    for (int i = 0; i < 13 * 7 * 4; i++) a.px[i] = (uint8_t)(test_rand(&rs) * 256);
    tpath(p, sizeof p, "a.png");
    CHECK_OK(cs_image_save_png(p, &a));
    CHECK_OK(cs_image_load(p, &b));
    CHECK(b.width == 13 && b.height == 7 && b.channels == 4 && !memcmp(a.px, b.px, 13 * 7 * 4), "RGBA round trip");
    float bg[3] = {1, 1, 1};
    CHECK_OK(cs_image_composite(&b, bg));
    float al = a.px[3] / 255.f;
    int expect = (int)((a.px[0] / 255.f * al + (1 - al)) * 255.f);
    CHECK(b.channels == 3 && b.px[0] == expect, "composite %d vs %d", b.px[0], expect);
    cs_image_free(&b);
    /* 16-bit gray */
    uint16_t g16[6] = {0, 65535, 32768, 1000, 50000, 257};
    tpath(p, sizeof p, "g16.png");
    CHECK(write_png16_gray(p, 3, 2, g16) == 0, "write 16-bit");
    CHECK_OK(cs_image_load(p, &b));
    CHECK(b.channels == 3 && b.px[3] == 255 && b.px[4] == 255 && b.px[0] == 0 && abs(b.px[6] - 128) <= 1, "16-bit gray");
    cs_image_free(&b);
    /* JPEG */
    cs_image j = {16, 16, 3, malloc(16 * 16 * 3)};
    for (int i = 0; i < 16 * 16 * 3; i++) j.px[i] = (uint8_t)(100 + (i % 3) * 40);
    tpath(p, sizeof p, "j.jpg");
    write_jpeg(p, &j);
    int w, h;
    CHECK_OK(cs_image_size(p, &w, &h));
    CHECK(w == 16 && h == 16, "jpeg size");
    CHECK_OK(cs_image_load(p, &b));
    int maxd = 0;
    for (int i = 0; i < 16 * 16 * 3; i++) maxd = abs(b.px[i] - j.px[i]) > maxd ? abs(b.px[i] - j.px[i]) : maxd;
    CHECK(maxd <= 3, "jpeg error %d", maxd);
    cs_image_free(&b);
    /* area downscale of a 2x2 block */
    cs_image small;
    CHECK_OK(cs_image_resize_area(&j, 8, 8, &small));
    CHECK(small.px[0] == 100 && small.px[1] == 140, "area resize");
    cs_image_free(&small);
    /* whole-factor box shrink: random 7x5 RGB by 2 and 3 against block means (rounded) */
    uint64_t rs2 = test_seed() ^ 0x5a1;
    cs_image r = {7, 5, 3, malloc(7 * 5 * 3)};
    for (int i = 0; i < 7 * 5 * 3; i++) r.px[i] = (uint8_t)(test_rand(&rs2) * 256);
    for (int f = 2; f <= 3; f++) {
        CHECK_OK(cs_image_shrink(&r, f, &small));
        CHECK(small.width == 7 / f && small.height == 5 / f && small.channels == 3, "shrink by %d: %dx%d", f,
              small.width, small.height);
        for (int y = 0; y < small.height; y++)
            for (int x = 0; x < small.width; x++)
                for (int c = 0; c < 3; c++) {
                    int sum = 0;
                    for (int dy = 0; dy < f; dy++)
                        for (int dx = 0; dx < f; dx++) sum += r.px[((y * f + dy) * 7 + x * f + dx) * 3 + c];
                    int want = (sum + f * f / 2) / (f * f), got = small.px[(y * small.width + x) * 3 + c];
                    CHECK(got == want, "shrink by %d at %d,%d,%d: %d, want %d", f, x, y, c, got, want);
                }
        cs_image_free(&small);
    }
    /* shrink_to: the smallest whole factor inside the bounds; an unbounded side (INT_MAX, as the
       orbit's contact sheet asks) neither overflows nor counts */
    const int bounds[][3] = {{7, 5, 1}, {4, INT_MAX, 2}, {3, INT_MAX, 3}, {INT_MAX, 2, 3}, {2, 2, 4}, {100, 100, 1}};
    for (size_t i = 0; i < sizeof bounds / sizeof bounds[0]; i++) {
        cs_image t = {7, 5, 3, malloc(7 * 5 * 3)};
        memcpy(t.px, r.px, 7 * 5 * 3);
        int f = bounds[i][2];
        CHECK_OK(cs_image_shrink_to(&t, bounds[i][0], bounds[i][1]));
        CHECK(t.width == 7 / f && t.height == 5 / f, "shrink_to %dx%d: %dx%d, want factor %d", bounds[i][0],
              bounds[i][1], t.width, t.height, f);
        cs_image_free(&t);
    }
    CHECK(cs_image_shrink_to(&r, 0, 5) == -1 && strstr(cs_last_error(), "0x5"), "a bound of 0 accepted");
    cs_image_free(&r);
    /* corrupt files: clear errors */
    tpath(p, sizeof p, "bad.png");
    FILE *f = fopen(p, "wb");
    fwrite("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 1, 16, f);
    fclose(f);
    CHECK(cs_image_load(p, &b) == -1 && strstr(cs_last_error(), "bad.png"), "corrupt png: %s", cs_last_error());
    tpath(p, sizeof p, "bad.jpg");
    f = fopen(p, "wb");
    fwrite("\xff\xd8\xff\xe0garbage", 1, 11, f);
    fclose(f);
    CHECK(cs_image_load(p, &b) == -1 && strstr(cs_last_error(), "corrupt JPEG"), "corrupt jpeg: %s", cs_last_error());
    tpath(p, sizeof p, "none.png");
    CHECK(cs_image_load(p, &b) == -1 && strstr(cs_last_error(), "none.png"), "missing: %s", cs_last_error());
    cs_image_free(&a), cs_image_free(&j);
    return 0;
}

/* ---- PLY ------------------------------------------------------------------------------------ */

int test_ply(void)
{
    uint64_t rs = test_seed() ^ 0x2222;
    char p[600];
    for (int deg = 0; deg <= 3; deg++) {
        cs_splats s, r;
        CHECK_OK(cs_splats_alloc(&s, 57, deg, deg == 2));
        int K = CS_SH_COEFFS(deg);
        for (int i = 0; i < 57; i++) {
            for (int k = 0; k < 3; k++) s.means[i * 3 + k] = (float)test_randn(&rs), s.log_scales[i * 3 + k] = (float)test_randn(&rs);
            for (int k = 0; k < 4; k++) s.quats[i * 4 + k] = (float)test_randn(&rs);
            s.logit_opacity[i] = (float)test_randn(&rs);
            for (int k = 0; k < K * 3; k++) s.sh[i * K * 3 + k] = (float)test_randn(&rs);
            if (s.filter_3d) s.filter_3d[i] = (float)test_rand(&rs);
        }
        tpath(p, sizeof p, "s.ply");
        CHECK_OK(cs_ply_write(p, &s, 0));
        CHECK_OK(cs_ply_read(p, &r));
        CHECK(r.n == 57 && r.sh_degree == deg && (r.filter_3d != NULL) == (deg == 2), "header");
        CHECK(!memcmp(s.means, r.means, 57 * 12) && !memcmp(s.sh, r.sh, (size_t)57 * K * 12) &&
                  !memcmp(s.quats, r.quats, 57 * 16) && !memcmp(s.logit_opacity, r.logit_opacity, 57 * 4) &&
                  (!s.filter_3d || !memcmp(s.filter_3d, r.filter_3d, 57 * 4)),
              "round trip degree %d", deg);
        cs_splats_free(&r);
        if (s.filter_3d) { /* baked: no filter property, larger scales, lower opacity */
            CHECK_OK(cs_ply_write(p, &s, 1));
            CHECK_OK(cs_ply_read(p, &r));
            CHECK(!r.filter_3d && r.log_scales[0] >= s.log_scales[0] && r.logit_opacity[0] <= s.logit_opacity[0], "bake");
            cs_splats_free(&r);
        }
        cs_splats_free(&s);
    }
    /* ASCII, other property order, extra properties, a face element after vertex */
    tpath(p, sizeof p, "ascii.ply");
    write_text(p, "ply\nformat ascii 1.0\ncomment x\nelement vertex 2\nproperty float opacity\nproperty double z\n"
                  "property float y\nproperty float x\nproperty uchar red\nproperty float f_dc_0\nproperty float f_dc_1\n"
                  "property float f_dc_2\nproperty float scale_0\nproperty float scale_1\nproperty float scale_2\n"
                  "property float rot_0\nproperty float rot_1\nproperty float rot_2\nproperty float rot_3\n"
                  "element face 0\nproperty list uchar int vertex_indices\nend_header\n"
                  "0.5 3 2 1 255 0.1 0.2 0.3 -1 -2 -3 1 0 0 0\n-0.5 6 5 4 0 0.4 0.5 0.6 -4 -5 -6 0 1 0 0\n");
    cs_splats r;
    CHECK_OK(cs_ply_read(p, &r));
    CHECK(r.n == 2 && r.means[0] == 1 && r.means[2] == 3 && r.means[5] == 6 && r.logit_opacity[1] == -0.5f &&
              r.sh[2] == 0.3f && r.log_scales[4] == -5 && r.sh_degree == 0,
          "ascii values");
    cs_splats_free(&r);
    /* malformed */
    const char *bad[][2] = {
        {"notply", "magic"},
        {"ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nend_header\n", "missing property"},
        {"ply\nformat weird 1.0\nend_header\n", "unknown format"},
        {"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\n", "truncated header"},
        {"ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nproperty float "
         "f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float opacity\nproperty float scale_0\nproperty "
         "float scale_1\nproperty float scale_2\nproperty float rot_0\nproperty float rot_1\nproperty float rot_2\n"
         "property float rot_3\nproperty float f_rest_0\nend_header\n1 2 3\n",
         "f_rest"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(p, bad[i][0]);
        CHECK(cs_ply_read(p, &r) == -1 && strstr(cs_last_error(), bad[i][1]), "malformed %zu: %s", i, cs_last_error());
    }
    /* truncated binary */
    cs_splats s;
    cs_splats_alloc(&s, 10, 1, 0);
    tpath(p, sizeof p, "t.ply");
    cs_ply_write(p, &s, 0);
    cs_splats_free(&s);
    size_t len;
    char *d = cs_read_file(p, &len);
    cs_write_file_atomic(p, d, len - 7);
    free(d);
    CHECK(cs_ply_read(p, &r) == -1 && strstr(cs_last_error(), "truncated"), "truncated: %s", cs_last_error());
    return 0;
}

/* ---- datasets ------------------------------------------------------------------------------- */

int test_colmap(void)
{
    for (int binary = 0; binary < 2; binary++) {
        char root[600];
        snprintf(root, sizeof root, "%s/colmap_%d", test_tmpdir(), binary);
        write_colmap(root, binary, 1, 0, 0);
        cs_config c;
        cs_config_defaults(&c);
        snprintf(c.data.path, sizeof c.data.path, "%s", root);
        c.data.eval = true;
        c.data.resolution = 1;
        cs_scene s;
        CHECK_OK(cs_scene_load(&c.data, &s));
        CHECK(s.n_cams == 10 && s.n_points == 3 && s.kind == CS_SCENE_COLMAP, "counts %d %d", s.n_cams, s.n_points);
        CHECK(!strcmp(s.cams[0].name, "img_00.png") && s.cams[0].is_test && s.cams[8].is_test && !s.cams[1].is_test,
              "sorted every-8th split");
        CHECK(s.cams[0].fx == 30 && s.cams[0].fy == 31 && s.cams[0].cx == 15 && s.cams[1].fx == 28 && s.cams[1].cy == 12,
              "intrinsics");
        CHECK(fabs(s.cams[3].t[0] - 0.3) < 1e-12 && s.cams[3].t[2] == 4 && s.cams[3].R[0] == 1, "extrinsics");
        CHECK(s.points[7] == 4 && s.colors[8] == 32, "points");
        cs_image img;
        CHECK_OK(cs_scene_read_image(&s, &s.cams[2], &img));
        cs_image_free(&img);
        cs_scene_free(&s);
        c.data.resolution = 2; /* area downscale and scaled intrinsics */
        CHECK_OK(cs_scene_load(&c.data, &s));
        CHECK(s.cams[0].width == 16 && s.cams[0].height == 12 && s.cams[0].fx == 15, "resolution 2");
        cs_scene_free(&s);
        c.data.resolution = 1;
        /* errors */
        snprintf(root, sizeof root, "%s/colmap_badcam_%d", test_tmpdir(), binary);
        write_colmap(root, binary, 1, 1, 0);
        snprintf(c.data.path, sizeof c.data.path, "%s", root);
        CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "camera 9"), "bad camera ref: %s", cs_last_error());
        snprintf(root, sizeof root, "%s/colmap_size_%d", test_tmpdir(), binary);
        write_colmap(root, binary, 1, 0, 1);
        snprintf(c.data.path, sizeof c.data.path, "%s", root);
        CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "img_03.png") && strstr(cs_last_error(), "33x24"),
              "wrong size: %s", cs_last_error());
        snprintf(root, sizeof root, "%s/colmap_model_%d", test_tmpdir(), binary);
        write_colmap(root, binary, binary ? 2 : 4, 0, 0);
        snprintf(c.data.path, sizeof c.data.path, "%s", root);
        if (binary) { /* SIMPLE_RADIAL k 0.1 (pincushion): undistorted to a smaller pinhole */
            CHECK_OK(cs_scene_load(&c.data, &s));
            const cs_camera *d = NULL;
            for (int i = 0; i < s.n_cams && !d; i++)
                if (s.cams[i].lens.model == CS_LENS_SIMPLE_RADIAL) d = &s.cams[i];
            CHECK(d && d->map >= 0 && s.n_maps == 1 && d->width < 32 && d->height < 24 && d->photo_width == 32 &&
                      d->cx == d->width / 2.0 && d->fx == 30,
                  "SIMPLE_RADIAL camera: map %d, %dx%d, cx %g", d ? d->map : -2, d ? d->width : 0, d ? d->height : 0,
                  d ? d->cx : 0);
            CHECK_OK(cs_scene_read_image(&s, d, &img));
            CHECK(img.width == d->width && img.height == d->height && img.channels == 3, "undistorted image %dx%d",
                  img.width, img.height);
            cs_image_free(&img);
            cs_scene_free(&s);
        } else { /* OPENCV with zero coefficients is a pinhole; FOV is refused by name */
            CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "FOV") &&
                      strstr(cs_last_error(), "image_undistorter"),
                  "model: %s", cs_last_error());
        }
    }
    /* truncated binary and missing files */
    char root[600], p[700];
    snprintf(root, sizeof root, "%s/colmap_1", test_tmpdir());
    snprintf(p, sizeof p, "%s/sparse/0/images.bin", root);
    size_t len;
    char *d = cs_read_file(p, &len);
    cs_write_file_atomic(p, d, len / 2);
    free(d);
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", root);
    cs_scene s;
    CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "images.bin") && strstr(cs_last_error(), "truncated"),
          "truncated: %s", cs_last_error());
    snprintf(root, sizeof root, "%s/colmap_0", test_tmpdir());
    snprintf(p, sizeof p, "%s/images/img_04.png", root);
    unlink(p);
    snprintf(c.data.path, sizeof c.data.path, "%s", root);
    CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "img_04.png"), "missing image: %s", cs_last_error());
    snprintf(c.data.path, sizeof c.data.path, "%s/nothing", test_tmpdir());
    CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "does not exist"), "missing dir: %s", cs_last_error());
    return 0;
}

int test_blender(void)
{
    char root[600], p[700];
    snprintf(root, sizeof root, "%s/blender", test_tmpdir());
    snprintf(p, sizeof p, "%s/train", root);
    cs_mkdirs(p);
    snprintf(p, sizeof p, "%s/test", root);
    cs_mkdirs(p);
    cs_image img = {20, 10, 4, calloc(20 * 10 * 4, 1)};
    snprintf(p, sizeof p, "%s/train/r_0.png", root);
    cs_image_save_png(p, &img);
    snprintf(p, sizeof p, "%s/test/r_0.png", root);
    cs_image_save_png(p, &img);
    cs_image_free(&img);
    /* camera at (0, -4, 0) looking at the origin (OpenGL: -z forward, y up) */
    const char *m = "[[1,0,0,0],[0,0,-1,-4],[0,1,0,0],[0,0,0,1]]";
    char js[512];
    snprintf(js, sizeof js, "{\"camera_angle_x\": 0.8, \"frames\": [{\"file_path\": \"./train/r_0\", \"transform_matrix\": %s}]}", m);
    snprintf(p, sizeof p, "%s/transforms_train.json", root);
    write_text(p, js);
    snprintf(js, sizeof js, "{\"camera_angle_x\": 0.8, \"frames\": [{\"file_path\": \"./test/r_0\", \"transform_matrix\": %s}]}", m);
    snprintf(p, sizeof p, "%s/transforms_test.json", root);
    write_text(p, js);
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", root);
    c.data.eval = true;
    c.data.white_background = true;
    cs_scene s;
    CHECK_OK(cs_scene_load(&c.data, &s));
    CHECK(s.n_cams == 2 && s.cams[1].is_test && s.cams[0].width == 20, "cams");
    double ctr[3];
    cs_camera_center(&s.cams[0], ctr);
    /* world origin is 4 in front of the camera: z_cam = 4 */
    CHECK(fabs(ctr[1] + 4) < 1e-9 && fabs(s.cams[0].t[2] - 4) < 1e-9, "pose: centre y %g, t.z %g", ctr[1], s.cams[0].t[2]);
    CHECK(fabs(s.cams[0].fx - 10 / tan(0.4)) < 1e-9 && s.cams[0].fy == s.cams[0].fx && s.cams[0].cx == 10, "intrinsics");
    cs_image out;
    CHECK_OK(cs_scene_read_image(&s, &s.cams[0], &out));
    CHECK(out.channels == 3 && out.px[0] == 255, "transparent pixels composited over white");
    cs_image_free(&out);
    cs_scene_free(&s);
    snprintf(p, sizeof p, "%s/transforms_train.json", root);
    write_text(p, "{\"frames\": []}");
    CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "camera_angle_x"), "missing fov: %s", cs_last_error());
    return 0;
}

/* ---- OpenCL runtime --------------------------------------------------------------------------- */

int test_allocator(void)
{
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_buf a, b, c;
    CHECK_OK(cs_buf_alloc(&cl, &a, CS_MEM_PARAMS, 1000, "a"));
    CHECK_OK(cs_buf_alloc(&cl, &b, CS_MEM_GRADS, 4096, "b"));
    CHECK(cl.mem.cur[CS_MEM_PARAMS] == 1008 && cl.mem.cur[CS_MEM_GRADS] == 4096 && cl.mem.cur_total == 5104, "current");
    cs_buf_free(&cl, &b);
    CHECK(cl.mem.cur_total == 1008 && cl.mem.peak_total == 5104 && cl.mem.peak[CS_MEM_GRADS] == 4096, "peak");
    CHECK_OK(cs_buf_resize(&cl, &a, 2000, 1, "a"));
    CHECK(cl.mem.cur[CS_MEM_PARAMS] == 2000 && a.cat == CS_MEM_PARAMS, "resize keeps category");
    cl.mem.budget = 3000;
    CHECK(cs_buf_alloc(&cl, &c, CS_MEM_SCRATCH, 5000, "big scratch") == -1 && strstr(cs_last_error(), "big scratch") &&
              strstr(cs_last_error(), "scratch") && strstr(cs_last_error(), "budget"),
          "budget error: %s", cs_last_error());
    cl.mem.budget = (size_t)-1;
    CHECK(cs_buf_alloc(&cl, &c, CS_MEM_IMAGES, (size_t)cl.max_alloc + 4096, "huge") == -1 &&
              strstr(cs_last_error(), "max allocation"),
          "max alloc error: %s", cs_last_error());
    CHECK(cl.mem.cur_total == 2000, "failed allocations are not counted");
    cs_buf_free(&cl, &a);
    cs_cl_close(&cl);
    return 0;
}

int test_kernel_cache(void)
{
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    snprintf(cl.cache_dir, sizeof cl.cache_dir, "%s/cache_test", test_tmpdir());
    cs_kernel_opts o = {{1, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    cs_kernels k;
    CHECK_OK(cs_kernels_build(&cl, &o, &k));
    CHECK(!cl.last_build_cached, "first build is a miss");
    cs_kernels_release(&k);
    CHECK_OK(cs_kernels_build(&cl, &o, &k));
    CHECK(cl.last_build_cached, "second build is a hit");
    cs_kernels_release(&k);
    /* corrupt every cache file: falls back to a source build that works */
    char cmd[800];
    snprintf(cmd, sizeof cmd, "for f in %s/*.bin; do printf 'garbage' | dd of=$f bs=1 seek=40 conv=notrunc 2>/dev/null; done",
             cl.cache_dir);
    CHECK(system(cmd) == 0, "corrupting");
    CHECK_OK(cs_kernels_build(&cl, &o, &k));
    CHECK(!cl.last_build_cached, "corrupt cache is rebuilt");
    cs_kernels_release(&k);
    o.layout.sh_degree = 2; /* other options: other key */
    CHECK_OK(cs_kernels_build(&cl, &o, &k));
    CHECK(!cl.last_build_cached, "new options miss");
    cs_kernels_release(&k);
    cl.use_cache = 0;
    CHECK_OK(cs_kernels_build(&cl, &o, &k));
    CHECK(!cl.last_build_cached, "no cache");
    cs_kernels_release(&k);
    /* a broken kernel directory: the error names the build and shows the log */
    char kd[700];
    snprintf(kd, sizeof kd, "%s/kdir", test_tmpdir());
    cs_mkdirs(kd);
    snprintf(cmd, sizeof cmd, "cp cl/* %s/ 2>/dev/null && echo 'this is not C' >> %s/adam.cl", kd, kd);
    if (system(cmd) == 0) {
        cl.kernel_dir = kd;
        /* the compiler prints its own diagnostics of the broken file to stderr: not for the
           test log, where they look like a failure */
        fflush(stderr);
        int saved = dup(2), devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) dup2(devnull, 2);
        int r = cs_kernels_build(&cl, &o, &k);
        fflush(stderr);
        if (saved >= 0) dup2(saved, 2), close(saved);
        if (devnull >= 0) close(devnull);
        CHECK(r == -1 && strstr(cs_last_error(), "build log") && strstr(cs_last_error(), "adam.cl"),
              "build error: %.300s", cs_last_error());
        cl.kernel_dir = NULL;
    }
    cs_cl_close(&cl);
    return 0;
}

int test_atomic_write(void)
{
    char p[600];
    tpath(p, sizeof p, "aw/x.txt");
    CHECK_OK(cs_mkdirs(strrchr(p, '/') ? (*strrchr(p, '/') = 0, p) : p));
    strcat(p, "/x.txt");
    CHECK_OK(cs_write_file_atomic(p, "hello", 5));
    cs_atomic_file af;
    CHECK_OK(cs_atomic_open(&af, p));
    fputs("partial", af.f);
    cs_atomic_abort(&af); /* a failed write leaves the old file and no temporary */
    char *d = cs_read_file(p, NULL);
    CHECK(d && !strcmp(d, "hello"), "old content kept");
    free(d);
    CHECK(!cs_file_exists(af.tmp), "temporary removed");
    CHECK(cs_write_file_atomic("/nonexistent-dir/x", "a", 1) == -1 && strstr(cs_last_error(), "/nonexistent-dir/x"),
          "error names the file");
    return 0;
}

int test_nerfstudio_and_images_n(void)
{
    char root[600], p[700];
    snprintf(root, sizeof root, "%s/ns", test_tmpdir());
    snprintf(p, sizeof p, "%s/imgs", root);
    cs_mkdirs(p);
    for (int i = 0; i < 9; i++) {
        snprintf(p, sizeof p, "%s/imgs/f_%d.png", root, i);
        write_gray_png(p, 40, 20);
    }
    char js[8192] = "{\"fl_x\": 50, \"fl_y\": 52, \"cx\": 19, \"cy\": 11, \"w\": 40, \"h\": 20, \"frames\": [";
    for (int i = 0; i < 9; i++) {
        char f[300];
        snprintf(f, sizeof f, "%s{\"file_path\": \"imgs/f_%d.png\", %s\"transform_matrix\": [[1,0,0,%d],[0,1,0,0],[0,0,1,3],[0,0,0,1]]}",
                 i ? "," : "", i, i == 4 ? "\"fl_x\": 60, " : "", i);
        strcat(js, f);
    }
    strcat(js, "]}");
    snprintf(p, sizeof p, "%s/transforms.json", root);
    write_text(p, js);
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", root);
    c.data.eval = true;
    cs_scene s;
    CHECK_OK(cs_scene_load(&c.data, &s));
    CHECK(s.kind == CS_SCENE_NERFSTUDIO && s.n_cams == 9 && cs_scene_count(&s, 1) == 2, "nerfstudio cams %d test %d",
          s.n_cams, cs_scene_count(&s, 1));
    CHECK(s.cams[0].fx == 50 && s.cams[0].fy == 52 && s.cams[0].cx == 19 && s.cams[4].fx == 60, "per-frame intrinsics");
    CHECK(fabs(s.cams[1].t[0] + 1) < 1e-12 && fabs(s.cams[1].t[2] - 3) < 1e-12, "OpenGL pose (y, z flipped): t %g %g", s.cams[1].t[0],
          s.cams[1].t[2]);
    cs_scene_free(&s);
    write_text(p, "{\"frames\": [{\"file_path\": \"imgs/f_0.png\", \"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}");
    CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), "fl_x"), "missing focal: %s", cs_last_error());
    /* #33 item 12: values of the wrong JSON type are refused by name, not dropped */
    const char *typed[][2] = {
        {"{\"fl_x\": 50, \"k1\": \"0.3\", \"frames\": [{\"file_path\": \"imgs/f_0.png\", \"transform_matrix\": "
         "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}", "'k1' is not a number"},
        {"{\"fl_x\": 50, \"frames\": [{\"file_path\": \"imgs/f_0.png\", \"camera_model\": 5, \"transform_matrix\": "
         "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}", "frame 0: 'camera_model' is not a name"},
    };
    for (int i = 0; i < 2; i++) {
        write_text(p, typed[i][0]);
        CHECK(cs_scene_load(&c.data, &s) == -1 && strstr(cs_last_error(), typed[i][1]), "case %d: %s", i, cs_last_error());
    }
    /* COLMAP with an images_2 folder: used as it is for resolution 2 */
    snprintf(root, sizeof root, "%s/colmap_n", test_tmpdir());
    write_colmap(root, 1, 1, 0, 0);
    snprintf(p, sizeof p, "%s/images_2", root);
    cs_mkdirs(p);
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/images_2/img_%02d.png", root, i);
        write_gray_png(p, 16, 12);
    }
    snprintf(c.data.path, sizeof c.data.path, "%s", root);
    c.data.resolution = 2;
    CHECK_OK(cs_scene_load(&c.data, &s));
    CHECK(strstr(s.cams[0].path, "images_2/") && s.cams[0].width == 16 && s.cams[0].fx == 15, "images_2: %s %d", s.cams[0].path,
          s.cams[0].width);
    cs_scene_free(&s);
    return 0;
}

/* A long loop run by one work-item without clsplat's probe: its own recurrence, 150000 steps.
   1 when the device stopped it early, 0 when it ran to the end, -1 on an OpenCL error. */
static int long_loop_stops(cs_cl *cl)
{
    static const char *src = "__kernel void xs(__global uint *o, uint n)\n"
                              "{ uint x = 2463534242u; for (uint i = 0u; i < n; i++) { x ^= x << 13; x ^= x >> 17; x ^= x << 5; }"
                              " o[0] = x; }\n";
    cl_uint n = 150000u, want = 2463534242u, got = 0;
    for (cl_uint i = 0; i < n; i++) want ^= want << 13, want ^= want >> 17, want ^= want << 5;
    cl_int e;
    cl_program pr = clCreateProgramWithSource(cl->ctx, 1, &src, NULL, &e);
    if (!pr || clBuildProgram(pr, 1, &cl->device, "", NULL, NULL) != CL_SUCCESS) return -1;
    cl_kernel k = clCreateKernel(pr, "xs", &e);
    cs_buf b;
    size_t g = 1;
    int rc = !k || cs_buf_alloc(cl, &b, CS_MEM_OTHER, 4, "long loop") ? -1 : 0;
    if (!rc) {
        rc = cs_cl_run(cl, k, -1, 1, &g, NULL, CS_ARG(b.mem), CS_ARG(n)) || cs_buf_read(cl, &b, 0, 4, &got) ? -1 : 0;
        cs_buf_free(cl, &b);
    }
    if (k) clReleaseKernel(k);
    clReleaseProgram(pr);
    return rc ? -1 : got != want;
}

/* The loop probe agrees with a long loop of the test's own on this device (PoCL: loops run to
   their end; Mesa 22.3's llvmpipe: they stop, tools/rusticl_repro/loop_limit.c); a device
   marked loop-limited (CLSPLAT_ASSUME_LOOP_LIMIT=1) gets the deterministic backward when the
   atomic one is asked for, LPIPS the tiled convolution and, untuned, 8x8 tiles. */
int test_loop_probe(void)
{
    CHECK(cs_loop_probe_expect(3) == ((1u * 1664525u + 1013904223u) * 1664525u + 1013904223u) * 1664525u + 1013904223u,
          "the host recurrence");
    cs_cl cl;
    unsetenv("CLSPLAT_ASSUME_LOOP_LIMIT");
    CHECK_OK(test_open_cl(&cl));
    int stops = long_loop_stops(&cl);
    CHECK(stops >= 0, "the long-loop kernel: %s", cs_last_error());
    CHECK(stops == cl.loop_limited, "%s: a 150000-step loop %s, the probe says loops %s", cl.name,
          stops ? "stopped early" : "ran to its end", cl.loop_limited ? "stop" : "run to their end");
    printf("  %s: loops %s\n", cl.name, stops ? "stop early (deterministic backward, tiled LPIPS)" : "run to their end");
    cs_cl_close(&cl);
    setenv("CLSPLAT_ASSUME_LOOP_LIMIT", "1", 1);
    int rc = test_open_cl(&cl);
    unsetenv("CLSPLAT_ASSUME_LOOP_LIMIT");
    CHECK_OK(rc);
    CHECK(cl.loop_limited == 1, "CLSPLAT_ASSUME_LOOP_LIMIT=1 marks the device");
    cs_kernel_opts o = {{1, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    cs_kernels k;
    CHECK_OK(cs_kernels_build(&cl, &o, &k));
    CHECK(k.opts.deterministic == 1, "a loop-limited device builds the deterministic backward");
    cs_lpips lp;
    rc = cs_lpips_load(&lp, &cl, &k, test_lpips_weights());
    int direct = lp.direct;
    if (!rc) cs_lpips_free(&lp);
    CHECK_OK(rc);
    CHECK(!direct, "a loop-limited device runs LPIPS's tiled convolution");
    cs_kernels_release(&k);
    /* the untuned default there: 8x8 tiles (fewer Gaussians a tile, fewer pixels a work-item) */
    CHECK_OK(cs_kernels_build_stored(&cl, &o, CS_TUNE_OFF, &k, NULL));
    CHECK(k.opts.tile == 8, "a loop-limited device's default tile is 8x8, not %dx%d", k.opts.tile, k.opts.tile);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}
