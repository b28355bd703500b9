/* test_inputs: hostile and broken inputs, each refused with a message naming the file and
 * what is wrong, before anything large is allocated: checkpoints (ranges, sizes, NaN),
 * images (truncated JPEG, decompression bombs), PLYs (vertex counts the data cannot hold,
 * NaN rows), datasets (sizes, intrinsics, field of view, no frames), configs (duplicate keys,
 * a group given a value). Every case is a file the defect list of issue #17 named. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fixtures.h"
#include "image.h"
#include "model.h"
#include "outputs.h"
#include "ply.h"
#include "scene.h"
#include "test.h"
#include "util.h"

#define REFUSED(call, text)                                                                                          \
    CHECK((call) == -1 && strstr(cs_last_error(), text), "%s: want '%s', got '%s'", #call, text, cs_last_error())

static void tpath(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", test_tmpdir(), name); }

/* a checkpoint image in memory: header + N zero rows for LAYOUT */
static unsigned char *checkpoint_bytes(const cs_model_layout *l, cs_ckpt_header h, size_t *len)
{
    cs_model shape = {0};
    shape.layout = *l;
    cs_model_array a[CS_SCHEMA_MAX];
    int na = cs_model_arrays(&shape, a);
    size_t head = cs_checkpoint_header_bytes(&h), n = head;
    for (int i = 0; i < na; i++) n += a[i].desc->checkpointed ? a[i].row_bytes * (size_t)h.n : 0;
    unsigned char *d = calloc(1, n);
    memcpy(d, &h, head);
    *len = n;
    return d;
}

int test_bad_checkpoints(void)
{
    cs_model_layout l = {1, 0, 0, 0};
    cs_ckpt_header h = {"CSCKPT1", CS_CKPT_VERSION, 500, 3, 1, 0, 0, 500, 0, 4000}, got;
    size_t len;
    unsigned char *d = checkpoint_bytes(&l, h, &len);
    CHECK_OK(cs_checkpoint_check(d, len, "ok.bin", &l, &got));
    CHECK(got.iteration == 500 && got.n == 3 && got.target == 4000, "header");
    REFUSED(cs_checkpoint_check(d, len - 1, "short.bin", &l, &got), "truncated checkpoint");
    size_t len2 = len;
    /* a NaN in a Gaussian's geometry */
    float nanv = NAN;
    memcpy(d + sizeof h + 4 * CS_GEO_W + 4, &nanv, 4);
    REFUSED(cs_checkpoint_check(d, len, "nan.bin", &l, &got), "1 Gaussians have NaN or Inf");
    free(d);
    /* version 1 (before the target): its shorter header still reads, as target 0 */
    cs_ckpt_header h1 = h;
    h1.version = 1, h1.target = 0;
    d = checkpoint_bytes(&l, h1, &len);
    CHECK(len + 4 == len2, "a version 1 image of %zu bytes, version 2 %zu", len, len2);
    got.target = -1;
    CHECK_OK(cs_checkpoint_check(d, len, "v1.bin", &l, &got));
    CHECK(got.version == 1 && got.n == 3 && got.target == 0, "version 1 header: version %d, %d rows, target %d",
          got.version, got.n, got.target);
    memcpy(d + CS_CKPT_V1_BYTES + 4 * CS_GEO_W + 4, &nanv, 4);
    REFUSED(cs_checkpoint_check(d, len, "nan.bin", &l, &got), "1 Gaussians have NaN or Inf");
    free(d);
    /* a negative iteration (it indexed the view order out of bounds), 2e9, a negative step */
    int32_t bad_iter[] = {-5, 2000000000};
    for (int i = 0; i < 2; i++) {
        cs_ckpt_header hb = h;
        hb.iteration = bad_iter[i];
        d = checkpoint_bytes(&l, hb, &len);
        REFUSED(cs_checkpoint_check(d, len, "iter.bin", &l, &got), "corrupt checkpoint header");
        free(d);
    }
    /* 4 KB that claim 3,000,000 Gaussians: refused by size, nothing allocated for them */
    cs_ckpt_header hb = h;
    hb.n = 3000000;
    unsigned char small[4096] = {0};
    memcpy(small, &hb, sizeof hb);
    REFUSED(cs_checkpoint_check(small, sizeof small, "claims.bin", &l, &got), "truncated checkpoint");
    hb.n = 2000000000;
    memcpy(small, &hb, sizeof hb);
    REFUSED(cs_checkpoint_check(small, sizeof small, "huge.bin", &l, &got), "corrupt checkpoint header");
    /* a negative target, and a version this build does not know */
    hb = h, hb.target = -7;
    memcpy(small, &hb, sizeof hb);
    REFUSED(cs_checkpoint_check(small, sizeof small, "target.bin", &l, &got), "corrupt checkpoint header");
    hb = h, hb.version = CS_CKPT_VERSION + 1;
    memcpy(small, &hb, sizeof hb);
    REFUSED(cs_checkpoint_check(small, sizeof small, "v3.bin", &l, &got), "checkpoint version 3");
    /* another layout */
    cs_model_layout l2 = {3, 0, 0, 0};
    d = checkpoint_bytes(&l, h, &len);
    REFUSED(cs_checkpoint_check(d, len, "layout.bin", &l2, &got), "does not match the configuration");
    free(d);
    return 0;
}

/* overwrites 2 big-endian bytes at OFF of FILE */
static void patch_be16(const char *file, size_t off, unsigned v)
{
    size_t n;
    unsigned char *d = (unsigned char *)cs_read_file(file, &n);
    if (d && off + 2 <= n) d[off] = (unsigned char)(v >> 8), d[off + 1] = (unsigned char)v;
    if (d) cs_write_file_atomic(file, d, n);
    free(d);
}

int test_bad_images(void)
{
    char p[700];
    unsigned char px[64 * 48 * 3];
    for (size_t i = 0; i < sizeof px; i++) px[i] = (unsigned char)(i * 7);
    cs_image img = {64, 48, 3, px}, out;
    tpath(p, sizeof p, "trunc.jpg");
    CHECK_OK(write_jpeg(p, &img));
    size_t n;
    char *d = cs_read_file(p, &n);
    CHECK_OK(cs_write_file_atomic(p, d, n / 2)); /* half the scan data, no EOI marker */
    REFUSED(cs_image_load(p, &out), "corrupt JPEG");
    /* a JPEG whose frame header declares 40000 x 40000 */
    CHECK_OK(cs_write_file_atomic(p, d, n));
    free(d);
    d = cs_read_file(p, &n);
    size_t sof = 0;
    for (size_t i = 0; i + 9 < n; i++)
        if ((unsigned char)d[i] == 0xFF && (unsigned char)d[i + 1] == 0xC0) sof = i;
    free(d);
    CHECK(sof > 0, "no SOF0 marker");
    patch_be16(p, sof + 5, 40000), patch_be16(p, sof + 7, 40000);
    REFUSED(cs_image_load(p, &out), "outside the limits");
    /* a PNG with a text chunk claiming 1.9 GB */
    static const unsigned char bomb[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                                         0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xde,
                                         0x71, 0x40, 0x00, 0x00, 't', 'E', 'X', 't', 'a', 'b', 'c'};
    tpath(p, sizeof p, "bomb.png");
    CHECK_OK(cs_write_file_atomic(p, bomb, sizeof bomb));
    double t0 = cs_now();
    CHECK(cs_image_load(p, &out) == -1, "a PNG bomb loaded");
    CHECK(cs_now() - t0 < 2.0, "the PNG bomb took %.1f s", cs_now() - t0);
    return 0;
}

int test_bad_plys(void)
{
    char p[700];
    tpath(p, sizeof p, "claims.ply");
    const char *hdr = "ply\nformat binary_little_endian 1.0\nelement vertex 150000000\nproperty float x\n"
                      "property float y\nproperty float z\nproperty float f_dc_0\nproperty float f_dc_1\n"
                      "property float f_dc_2\nproperty float opacity\nproperty float scale_0\nproperty float scale_1\n"
                      "property float scale_2\nproperty float rot_0\nproperty float rot_1\nproperty float rot_2\n"
                      "property float rot_3\nend_header\n";
    char buf[3072] = {0};
    memcpy(buf, hdr, strlen(hdr));
    CHECK_OK(cs_write_file_atomic(p, buf, sizeof buf));
    cs_splats s;
    double t0 = cs_now();
    REFUSED(cs_ply_read(p, &s), "truncated: data ends at vertex");
    CHECK(cs_now() - t0 < 1.0, "refusing took %.1f s (allocated first?)", cs_now() - t0);
    /* ASCII that cannot hold its count */
    tpath(p, sizeof p, "claims_ascii.ply");
    char *ascii = malloc(strlen(hdr) + 64);
    strcpy(ascii, hdr);
    memcpy(strstr(ascii, "binary_little_endian"), "ascii               ", 20);
    strcat(ascii, "0 0 0 0 0 0 0 0 0 0 1 0 0 0\n");
    CHECK_OK(cs_write_file_atomic(p, ascii, strlen(ascii)));
    REFUSED(cs_ply_read(p, &s), "cannot hold 150000000 vertices");
    free(ascii);
    /* a NaN row */
    cs_splats a;
    cs_splats_alloc(&a, 4, 0, 0);
    for (int i = 0; i < 4; i++) a.quats[i * 4] = 1;
    a.log_scales[2 * 3 + 1] = NAN;
    tpath(p, sizeof p, "nan.ply");
    CHECK_OK(cs_ply_write(p, &a, 0));
    cs_splats_free(&a);
    REFUSED(cs_ply_read(p, &s), "1 Gaussians have NaN or Inf values (the first is vertex 2)");
    return 0;
}

int test_bad_datasets(void)
{
    char root[700], p[800];
    cs_scene s;
    /* COLMAP text cameras of absurd sizes, a NaN focal length */
    const char *cams[][2] = {{"1 PINHOLE 1e300 24 30 31 15 11\n", "expected CAMERA_ID MODEL WIDTH HEIGHT"},
                             {"1 PINHOLE 2147483647 24 30 31 15 11\n", "sizes 1 to 32768"},
                             {"1 PINHOLE 32 24 nan 31 15 11\n2 SIMPLE_PINHOLE 32 24 28 16 12\n", "focal lengths"},
                             {"1 PINHOLE 32 24 -30 31 15 11\n2 SIMPLE_PINHOLE 32 24 28 16 12\n", "focal lengths"}};
    for (size_t i = 0; i < sizeof cams / sizeof cams[0]; i++) {
        snprintf(root, sizeof root, "%s/bad_colmap_%zu", test_tmpdir(), i);
        write_colmap(root, 0, 1, 0, 0);
        snprintf(p, sizeof p, "%s/sparse/0/cameras.txt", root);
        CHECK_OK(write_text(p, cams[i][0]));
        REFUSED(load_dataset(root, 0, 0, &s), cams[i][1]);
    }
    /* Blender: a field of view of 0 or pi, no frames; nerfstudio: w of 1e300 */
    snprintf(root, sizeof root, "%s/bad_blender", test_tmpdir());
    cs_mkdirs(root);
    snprintf(p, sizeof p, "%s/transforms_train.json", root);
    CHECK_OK(write_text(p, "{\"camera_angle_x\": 0, \"frames\": []}"));
    REFUSED(load_dataset(root, 0, 0, &s), "not a field of view in (0, pi)");
    CHECK_OK(write_text(p, "{\"camera_angle_x\": 3.141592653589793, \"frames\": []}"));
    REFUSED(load_dataset(root, 0, 0, &s), "not a field of view in (0, pi)");
    CHECK_OK(write_text(p, "{\"camera_angle_x\": 0.7, \"frames\": []}"));
    REFUSED(load_dataset(root, 0, 0, &s), "no cameras");
    snprintf(root, sizeof root, "%s/bad_ns", test_tmpdir());
    snprintf(p, sizeof p, "%s/imgs", root);
    cs_mkdirs(p);
    snprintf(p, sizeof p, "%s/imgs/f_0.png", root);
    write_gray_png(p, 16, 12);
    snprintf(p, sizeof p, "%s/transforms.json", root);
    CHECK_OK(write_text(p, "{\"fl_x\": 20, \"w\": 1e300, \"h\": 12, \"frames\": [{\"file_path\": \"imgs/f_0.png\", "
                           "\"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}]}"));
    REFUSED(load_dataset(root, 0, 0, &s), "is outside 1..32768");
    return 0;
}

/* data.skip_missing_images: a dataset listing photos that are missing is refused, naming the
   first and the setting; with it those frames are left out (instant-ngp's fox lists 67 frames and
   ships 50 photos), and a dataset left with none is still refused. Each reader: nerfstudio,
   Blender, COLMAP. */
int test_skip_missing_images(void)
{
    char root[700], p[900];
    cs_scene s;
    static const char *const frame = "{\"file_path\": \"imgs/f_%d.png\", \"transform_matrix\": "
                                     "[[1,0,0,%d],[0,1,0,0],[0,0,1,0],[0,0,0,1]]}";
    static const struct {
        const char *file, *head;
    } formats[] = {{"transforms.json", "{\"fl_x\": 20, \"frames\": ["},
                   {"transforms_train.json", "{\"camera_angle_x\": 0.7, \"frames\": ["}};
    for (int f = 0; f < 2; f++) {
        snprintf(root, sizeof root, "%s/skip_missing_%d", test_tmpdir(), f);
        snprintf(p, sizeof p, "%s/imgs", root);
        cs_mkdirs(p);
        for (int i = 0; i < 3; i += 2) { /* photos 0 and 2 of 0..3 */
            snprintf(p, sizeof p, "%s/imgs/f_%d.png", root, i);
            write_gray_png(p, 16, 12);
        }
        char json[2000], one[200];
        for (int only_missing = 0; only_missing < 2; only_missing++) {
            snprintf(json, sizeof json, "%s", formats[f].head);
            for (int i = only_missing; i < 4; i += 1 + only_missing) {
                snprintf(one, sizeof one, frame, i, i);
                if (i > only_missing) strcat(json, ", ");
                strcat(json, one);
            }
            strcat(json, "]}");
            snprintf(p, sizeof p, "%s/%s", root, formats[f].file);
            CHECK_OK(write_text(p, json));
            REFUSED(load_dataset(root, 0, 0, &s), "data.skip_missing_images=true");
            if (only_missing) {
                REFUSED(load_dataset(root, 0, 1, &s), "no cameras");
                continue;
            }
            CHECK_OK(load_dataset(root, 0, 1, &s));
            CHECK(s.n_cams == 2 && !strcmp(s.cams[0].name, "f_0.png") && !strcmp(s.cams[1].name, "f_2.png") &&
                      fabs(s.cams[1].t[0] + 2) < 1e-9,
                  "%s: %d cameras kept (%s ...), want f_0 and f_2 with their poses", formats[f].file, s.n_cams,
                  s.n_cams ? s.cams[0].name : "");
            cs_scene_free(&s);
        }
    }
    /* COLMAP: 10 listed, two photos gone */
    snprintf(root, sizeof root, "%s/skip_missing_colmap", test_tmpdir());
    write_colmap(root, 0, 1, 0, 0);
    for (int i = 3; i < 6; i += 2) {
        snprintf(p, sizeof p, "%s/images/img_%02d.png", root, i);
        CHECK(remove(p) == 0, "cannot remove %s", p);
    }
    REFUSED(load_dataset(root, 0, 0, &s), "2 of the 10 images listed in images.txt are missing");
    CHECK(strstr(cs_last_error(), "data.skip_missing_images=true"), "the refusal does not name the setting: %s",
          cs_last_error());
    CHECK_OK(load_dataset(root, 0, 1, &s));
    int ok = s.n_cams == 8;
    for (int i = 0; i < s.n_cams; i++)
        ok = ok && strcmp(s.cams[i].name, "img_03.png") && strcmp(s.cams[i].name, "img_05.png");
    CHECK(ok, "COLMAP: %d cameras kept, want the 8 whose photos exist", s.n_cams);
    cs_scene_free(&s);
    return 0;
}

int test_bad_configs(void)
{
    cs_config c;
    cs_config_defaults(&c);
    REFUSED(cs_config_load_string(&c, "{\"optim\": {\"iterations\": 5, \"iterations\": 7}}", "dup.json"),
            "duplicate object key");
    REFUSED(cs_config_load_string(&c, "{\"optim\": null}", "null.json"), "'optim' is a group of keys");
    char longdir[1200];
    memset(longdir, 'a', sizeof longdir - 1);
    longdir[sizeof longdir - 1] = '\0';
    char assign[1300];
    snprintf(assign, sizeof assign, "output.dir=\"%s\"", longdir);
    REFUSED(cs_config_set_from(&c, assign, "-o"), "-o: key 'output.dir' is too long");
    return 0;
}
