/* make_seeds: writes the fuzzers' seed corpora, valid inputs of every kind each harness reads,
 * made here from clsplat's own writers and the test fixtures (nothing from ../shared).
 *   usage: make_seeds DIR   (DIR/<harness>/seed_N) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_mem.h"
#include "fixtures.h"
#include "image.h"
#include <zlib.h>

#include "model.h"
#include "outputs.h"
#include "ply.h"
#include "splat_file.h"
#include "util.h"

static char g_root[1024];
static int g_count;

static void seed(const char *harness, const void *data, size_t n)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s", g_root, harness);
    cs_mkdirs(p);
    snprintf(p, sizeof p, "%s/%s/seed_%d", g_root, harness, g_count++);
    if (cs_write_file_atomic(p, data, n)) fprintf(stderr, "%s\n", cs_last_error());
}

static void seed_file(const char *harness, const char *path)
{
    size_t n;
    char *d = cs_read_file(path, &n);
    if (d) seed(harness, d, n), free(d);
}

static void ply_seeds(const char *tmp)
{
    char p[1200];
    for (int deg = 0; deg <= 3; deg += 3)
        for (int filt = 0; filt < 2; filt++) {
            cs_splats s;
            cs_splats_alloc(&s, 3, deg, filt);
            for (int i = 0; i < 3; i++) s.quats[i * 4] = 1, s.means[i * 3] = (float)i;
            snprintf(p, sizeof p, "%s/s.ply", tmp);
            cs_ply_write(p, &s, 0);
            cs_splats_free(&s);
            seed_file("ply", p);
        }
    const char *ascii = "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\n"
                        "property float f_dc_0\nproperty float f_dc_1\nproperty float f_dc_2\nproperty float opacity\n"
                        "property float scale_0\nproperty float scale_1\nproperty float scale_2\nproperty float rot_0\n"
                        "property float rot_1\nproperty float rot_2\nproperty float rot_3\nend_header\n"
                        "0 0 0 0.1 0.2 0.3 0 -1 -1 -1 1 0 0 0\n";
    seed("ply", ascii, strlen(ascii));
}

/* triangle meshes (mesh --from): an ASCII file of polygons with more face properties, and a
   binary one as clsplat writes its meshes */
static void mesh_ply_seeds(void)
{
    const char *ascii = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
                        "property uchar red\nproperty uchar green\nproperty uchar blue\nelement face 2\n"
                        "property uchar flags\nproperty list uchar int vertex_indices\n"
                        "property list uchar float texcoord\nend_header\n"
                        "0 0 0 255 0 0\n1 0 0 0 255 0\n1 1 0 0 0 255\n0 1 0 9 9 9\n1 4 0 1 2 3 2 0.5 0.5\n0 3 0 2 3 0\n";
    seed("mesh_ply", ascii, strlen(ascii));
    char b[512];
    int n = snprintf(b, sizeof b, "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\n"
                                  "property float y\nproperty float z\nelement face 1\n"
                                  "property list uchar int vertex_indices\nend_header\n");
    for (int v = 0; v < 3; v++) {
        float p[3] = {(float)(v == 1), (float)(v == 2), 0};
        memcpy(b + n, p, 12), n += 12;
    }
    b[n++] = 3;
    for (int32_t v = 0; v < 3; v++) memcpy(b + n, &v, 4), n += 4;
    seed("mesh_ply", b, (size_t)n);
}

/* every export format of a few Gaussians, after a byte that picks the name (fuzz_splat_file) */
static void splat_file_seeds(const char *tmp)
{
    char p[1200];
    cs_splats s;
    cs_splats_alloc(&s, 300, 3, 1);
    for (int i = 0; i < 300; i++) {
        s.quats[i * 4] = 1, s.quats[i * 4 + 1] = (float)(i % 7) / 7, s.means[i * 3] = (float)i / 100;
        s.means[i * 3 + 1] = (float)(i % 13) / 10, s.log_scales[i * 3] = -3, s.sh[(size_t)i * 48 + 5] = 0.1f;
    }
    for (int f = 0; f < CS_FMT_COUNT; f++) {
        snprintf(p, sizeof p, "%s/s%s", tmp, cs_splat_format_ext((cs_splat_format)f));
        cs_export_opts o = {0, 6};
        cs_splat_file_write(p, &s, (cs_splat_format)f, &o);
        size_t n;
        char *d = cs_read_file(p, &n), *b = d ? malloc(n + 1) : NULL;
        if (b) {
            b[0] = (char)(f == CS_FMT_PLY ? 0 : f == CS_FMT_SPZ ? 1 : f == CS_FMT_SPLAT ? 2 : 3);
            memcpy(b + 1, d, n);
            seed("splat_file", b, n + 1);
        }
        free(b);
        free(d);
    }
    cs_splats_free(&s);
    /* an SPZ whose header claims 5 million Gaussians of zeros: 100 MB that deflate to ~97 KB,
       which once took 390 MB of host memory (the decompression bomb run_fuzzers.sh's memory
       limit for this harness catches) */
    size_t zn = 16 + (size_t)5000000 * 20;
    uint8_t *zeros = calloc(zn + 1, 1), *gz = malloc(zn / 50 + 1024);
    const uint8_t h3[16] = {'N', 'G', 'S', 'P', 3, 0, 0, 0, 0x40, 0x4b, 0x4c, 0, 0, 12, 0, 0};
    z_stream z;
    memset(&z, 0, sizeof z);
    if (zeros && gz && deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY) == Z_OK) {
        memcpy(zeros + 1, h3, 16);
        z.next_in = zeros + 1, z.avail_in = (uInt)zn, z.next_out = gz + 1, z.avail_out = (uInt)(zn / 50 + 1023);
        if (deflate(&z, Z_FINISH) == Z_STREAM_END) gz[0] = 1, seed("splat_file", gz, z.total_out + 1);
        deflateEnd(&z);
    }
    free(zeros), free(gz);
}

static void image_seeds(const char *tmp)
{
    char p[1200];
    unsigned char px[8 * 6 * 4];
    for (size_t i = 0; i < sizeof px; i++) px[i] = (unsigned char)(i * 37);
    cs_image rgb = {8, 6, 3, px}, rgba = {8, 6, 4, px};
    snprintf(p, sizeof p, "%s/a.png", tmp);
    cs_image_save_png(p, &rgb), seed_file("image", p);
    cs_image_save_png(p, &rgba), seed_file("image", p);
    snprintf(p, sizeof p, "%s/a.jpg", tmp);
    write_jpeg(p, &rgb), seed_file("image", p);
    snprintf(p, sizeof p, "%s/b.jpg", tmp);
    write_jpeg_exif(p, &rgb, 6, 1), seed_file("image", p);
}

static void config_seeds(void)
{
    const char *files[] = {"configs/default.json", "configs/demo.json", "configs/mip.json", "configs/gpu8gb.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        size_t n;
        char *d = cs_read_file(files[i], &n);
        if (!d) continue;
        for (char *c = d; *c; c++)
            if (*c == '\n') *c = ' '; /* the harness reads the config up to the first newline */
        char *both = malloc(n + 64);
        snprintf(both, n + 64, "%s\noptim.iterations=500\nmemory.flush_interval=aggressive", d);
        seed("config", both, strlen(both));
        free(both), free(d);
    }
}

static void joblist_seeds(void)
{
    const char *lists[] = {
        "{\"config\": \"none.json\", \"set\": [\"optim.iterations=100\"], \"jobs\": [{\"name\": \"a\", "
        "\"data\": \"scene\", \"set\": [\"model.sh_degree=1\"]}, {\"data\": \"scene/\"}]}",
        "{\"jobs\": [{\"name\": \"x\", \"data\": \"scene\"}, {\"name\": \"x\", \"data\": \"scene\"}]}",
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) seed("joblist", lists[i], strlen(lists[i]));
}

static void checkpoint_seeds(void)
{
    for (int layout_byte = 0; layout_byte < 32; layout_byte += 9) {
        cs_model_layout l = {layout_byte & 3, (layout_byte >> 2) & 1, (layout_byte >> 3) & 1, (layout_byte >> 4) & 1};
        cs_model shape = {0};
        shape.layout = l;
        cs_model_array a[CS_SCHEMA_MAX];
        int na = cs_model_arrays(&shape, a), n = 2;
        size_t bytes = 1 + sizeof(cs_ckpt_header);
        for (int i = 0; i < na; i++) bytes += a[i].desc->checkpointed ? a[i].row_bytes * n : 0;
        unsigned char *d = calloc(1, bytes);
        cs_ckpt_header h = {"CSCKPT1", CS_CKPT_VERSION, 100, n, l.sh_degree, l.sh_half, l.filter_3d, 100, l.opt_half, 0};
        d[0] = (unsigned char)layout_byte;
        memcpy(d + 1, &h, sizeof h);
        seed("checkpoint", d, bytes);
        free(d);
    }
}

static void colmap_seeds(const char *tmp)
{
    static const char *const files[] = {"cameras.bin", "images.bin", "points3D.bin",
                                        "cameras.txt", "images.txt", "points3D.txt"};
    for (int binary = 0; binary < 2; binary++) {
        char root[1200], p[1400];
        snprintf(root, sizeof root, "%s/colmap%d", tmp, binary);
        write_colmap(root, binary, binary ? 1 : 1, 0, 0);
        unsigned char *rec = NULL;
        size_t len = 0;
        for (int f = binary ? 0 : 3; f < (binary ? 3 : 6); f++) {
            size_t n;
            snprintf(p, sizeof p, "%s/sparse/0/%s", root, files[f]);
            char *d = cs_read_file(p, &n);
            if (!d || n > 65535) {
                free(d);
                continue;
            }
            rec = realloc(rec, len + 3 + n);
            rec[len] = (unsigned char)f, rec[len + 1] = (unsigned char)(n & 255), rec[len + 2] = (unsigned char)(n >> 8);
            memcpy(rec + len + 3, d, n);
            len += 3 + n;
            free(d);
        }
        seed("colmap", rec, len);
        free(rec);
    }
}

static void record(unsigned char *buf, size_t *len, int idx, const char *text)
{
    size_t n = strlen(text);
    buf[*len] = (unsigned char)idx, buf[*len + 1] = (unsigned char)(n & 255), buf[*len + 2] = (unsigned char)(n >> 8);
    memcpy(buf + *len + 3, text, n);
    *len += 3 + n;
}

static void transforms_seeds(void)
{
    const char *frames = "\"frames\": [{\"file_path\": \"train/r_0\", \"transform_matrix\": [[1,0,0,0],[0,1,0,0],[0,0,1,4],[0,0,0,1]]},"
                         "{\"file_path\": \"train/r_1.png\", \"transform_matrix\": [[1,0,0,1],[0,1,0,0],[0,0,1,4],[0,0,0,1]]}]";
    char blender[1024], ns[1024];
    snprintf(blender, sizeof blender, "{\"camera_angle_x\": 0.69, %s}", frames);
    snprintf(ns, sizeof ns, "{\"fl_x\": 20, \"fl_y\": 20, \"cx\": 8, \"cy\": 6, \"w\": 16, \"h\": 12, %s}", frames);
    unsigned char buf[4096];
    size_t len = 0;
    record(buf, &len, 0, blender), record(buf, &len, 1, blender);
    seed("transforms", buf, len);
    len = 0;
    record(buf, &len, 2, ns);
    seed("transforms", buf, len);
}

static void tuning_and_cli_seeds(void)
{
    const char *tune = "{\"format\": 1, \"tile\": 8, \"work_groups\": {\"project\": 128, \"project_bwd\": 256, "
                       "\"bin\": 256, \"adam\": 64}}";
    seed("tuning", tune, strlen(tune));
    const char cli1[] = "train\0-s\0data\0-m\0out\0--eval\0--iterations\0007000\0--test_iterations\0007000\00030000\0-w";
    const char cli2[] = "render\0-m\0out\0--split\0train\0--set\0data.resolution=2";
    const char cli3[] = "bench\0-s\0d\0--ply\0p.ply\0--iters\0005\0--view\0001";
    seed("cli", cli1, sizeof cli1 - 1), seed("cli", cli2, sizeof cli2 - 1), seed("cli", cli3, sizeof cli3 - 1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    snprintf(g_root, sizeof g_root, "%s", argv[1]);
    char tmp[1200];
    snprintf(tmp, sizeof tmp, "%s/.tmp", g_root);
    if (cs_mkdirs(tmp)) {
        fprintf(stderr, "%s\n", cs_last_error());
        return 1;
    }
    ply_seeds(tmp);
    mesh_ply_seeds();
    splat_file_seeds(tmp);
    image_seeds(tmp);
    config_seeds();
    joblist_seeds();
    checkpoint_seeds();
    colmap_seeds(tmp);
    transforms_seeds();
    tuning_and_cli_seeds();
    printf("make_seeds: %d seeds in %s\n", g_count, g_root);
    return 0;
}
