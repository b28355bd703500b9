/* Export formats: .spz, .splat and compressed PLY written, read back within each format's
 * quantisation, bad files refused, and the CLI's export / info / render on a trained scene. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli_run.h"
#include "image.h"
#include "orbit.h"
#include "ply.h"
#include "ply_compressed.h"
#include "splat32.h"
#include "splat_file.h"
#include "spz.h"
#include "test.h"
#include "util.h"

#define SH_C0 0.28209479f

/* Separation (L1) kept between random positions, so that the reordering formats' Gaussians can be
   matched to their originals by position: well above twice any format's position error. */
#define MIN_SEPARATION 0.05f

/* A random position in a box of side BOX at least MIN_SEPARATION from the first I of S. */
static void distinct_position(cs_splats *s, int i, float box, uint64_t *rng)
{
    for (int tries = 0, near = 1; near && tries < 1000; tries++) {
        for (int c = 0; c < 3; c++) s->means[i * 3 + c] = (float)((test_rand(rng) - 0.5) * box);
        near = 0;
        for (int k = 0; k < i && !near; k++) {
            float d = 0;
            for (int c = 0; c < 3; c++) d += fabsf(s->means[k * 3 + c] - s->means[i * 3 + c]);
            near = d < MIN_SEPARATION;
        }
    }
}

/* N random Gaussians of SH degree DEG (with a 3D filter when FILTER) in a box of side BOX. */
static int random_splats(cs_splats *s, int n, int deg, int filter, float box, uint64_t *rng)
{
    if (cs_splats_alloc(s, n, deg, filter)) return -1;
    int K3 = CS_SH_COEFFS(deg) * 3;
    for (int i = 0; i < n; i++) {
        distinct_position(s, i, box, rng);
        for (int c = 0; c < 3; c++) s->log_scales[i * 3 + c] = (float)(-6 + 4 * test_rand(rng));
        for (int c = 0; c < 4; c++) s->quats[i * 4 + c] = (float)test_randn(rng);
        s->logit_opacity[i] = (float)(6 * test_rand(rng) - 3);
        for (int k = 0; k < K3; k++) s->sh[(size_t)i * K3 + k] = (float)(k < 3 ? 2 * test_rand(rng) - 1 : 0.6 * test_rand(rng) - 0.3);
        if (filter) s->filter_3d[i] = (float)(0.002 * test_rand(rng));
    }
    return 0;
}

static float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

/* |cos| of the angle between two quaternions (w x y z), 1 for the same rotation */
static float quat_match(const float *a, const float *b)
{
    float d = 0, na = 0, nb = 0;
    for (int c = 0; c < 4; c++) d += a[c] * b[c], na += a[c] * a[c], nb += b[c] * b[c];
    return fabsf(d) / sqrtf(na * nb);
}

typedef struct {
    float pos, log_scale, alpha, dc, sh, quat; /* largest errors allowed (quat: 1 - |cos|) */
    int reorder;                               /* the format stores the Gaussians in its own order */
} tolerances;

/* Checks that GOT holds ORIG's baked values within T. */
static int compare(const cs_splats *orig, const cs_splats *got, const tolerances *t, const char *what)
{
    CHECK(got->n == orig->n, "%s: %d Gaussians read, %d written", what, got->n, orig->n);
    int K = CS_SH_COEFFS(orig->sh_degree), Kg = CS_SH_COEFFS(got->sh_degree);
    char *used = calloc((size_t)orig->n, 1);
    for (int j = 0; j < got->n; j++) {
        /* the reordering formats: find the original by position (random_splats keeps them apart) */
        int i = j, best = -1;
        float bd = INFINITY;
        for (int k = 0; k < orig->n && t->reorder; k++) {
            float d = 0;
            for (int c = 0; c < 3; c++) d += fabsf(orig->means[k * 3 + c] - got->means[j * 3 + c]);
            if (d < bd && !used[k]) bd = d, best = k;
        }
        if (t->reorder) i = best;
        CHECK(i >= 0, "%s: Gaussian %d matches none", what, j);
        used[i] = 1;
        float ls[3], op;
        cs_splats_baked_row(orig, i, ls, &op);
        for (int c = 0; c < 3; c++) {
            CHECK(fabsf(got->means[j * 3 + c] - orig->means[i * 3 + c]) <= t->pos, "%s: position %d.%d %g vs %g",
                  what, i, c, got->means[j * 3 + c], orig->means[i * 3 + c]);
            CHECK(fabsf(got->log_scales[j * 3 + c] - ls[c]) <= t->log_scale, "%s: log-scale %d.%d %g vs %g", what, i, c,
                  got->log_scales[j * 3 + c], ls[c]);
            float dc = orig->sh[(size_t)i * K * 3 + c];
            CHECK(fabsf(got->sh[(size_t)j * Kg * 3 + c] - dc) <= t->dc, "%s: DC %d.%d %g vs %g", what, i, c,
                  got->sh[(size_t)j * Kg * 3 + c], dc);
        }
        CHECK(fabsf(sigm(got->logit_opacity[j]) - sigm(op)) <= t->alpha, "%s: opacity %d %g vs %g", what, i,
              sigm(got->logit_opacity[j]), sigm(op));
        CHECK(1 - quat_match(got->quats + j * 4, orig->quats + i * 4) <= t->quat, "%s: rotation %d off by %g", what, i,
              1 - quat_match(got->quats + j * 4, orig->quats + i * 4));
        for (int k = 3; k < Kg * 3; k++)
            CHECK(fabsf(got->sh[(size_t)j * Kg * 3 + k] - orig->sh[(size_t)i * K * 3 + k]) <= t->sh, "%s: SH %d.%d %g vs %g",
                  what, i, k, got->sh[(size_t)j * Kg * 3 + k], orig->sh[(size_t)i * K * 3 + k]);
    }
    free(used);
    return 0;
}

/* The first stored position of an SPZ file, decoded from the raw (gunzipped) bytes. */
static int spz_first_position(const char *path, float out[3], int *bits)
{
    size_t len;
    char *gz = cs_read_file(path, &len);
    if (!gz) return -1;
    uint8_t raw[64];
    z_stream z;
    memset(&z, 0, sizeof z);
    z.next_in = (uint8_t *)gz, z.avail_in = (uInt)len, z.next_out = raw, z.avail_out = sizeof raw;
    int ok = inflateInit2(&z, 31) == Z_OK && inflate(&z, Z_SYNC_FLUSH) >= 0 && z.total_out >= 25;
    inflateEnd(&z);
    free(gz);
    if (!ok) return cs_fail("cannot gunzip %s", path);
    *bits = raw[13];
    for (int c = 0; c < 3; c++) {
        const uint8_t *b = raw + 16 + c * 3;
        int32_t v = (int32_t)(b[0] | b[1] << 8 | (uint32_t)b[2] << 16);
        if (v & 0x800000) v -= 0x1000000;
        out[c] = (float)v / (float)(1 << *bits);
    }
    return 0;
}

int test_export_roundtrip(void)
{
    uint64_t rng = test_seed() ^ 0x5a17;
    char p[700];
    for (int deg = 0; deg <= 3; deg += 3) {
        cs_splats s, got;
        CHECK_OK(random_splats(&s, 700, deg, deg == 3, 6.0f, &rng));
        /* SPZ: 12 fractional bits, 8-bit alpha / colour / log-scale (1/16), 10-bit rotations, SH at 5 and 4 bits */
        snprintf(p, sizeof p, "%s/rt.spz", test_tmpdir());
        CHECK_OK(cs_spz_write(p, &s, 0));
        cs_spz_info info;
        CHECK_OK(cs_spz_read(p, &got, &info));
        CHECK(info.version == 3 && info.fractional_bits == 12 && info.flags == (deg == 3 ? CS_SPZ_FLAG_ANTIALIASED : 0),
              "SPZ header: version %d, %d bits, flags %d", info.version, info.fractional_bits, info.flags);
        tolerances spz = {0.5f / 4096 + 1e-6f, 0.5f / 16 + 1e-5f, 0.5f / 255 + 1e-6f, 0.5f / (0.15f * 255) + 1e-5f, 8.5f / 128,
                          2e-5f, 0};
        CHECK(compare(&s, &got, &spz, "spz") == 0, "spz round trip");
        cs_splats_free(&got);
        CHECK_OK(cs_spz_write(p, &s, 8)); /* SH at all 8 bits: half a step of 1/128 */
        CHECK_OK(cs_spz_read(p, &got, &info));
        spz.sh = 0.5f / 128 + 1e-5f;
        CHECK(compare(&s, &got, &spz, "spz, 8-bit SH") == 0, "spz round trip with 8-bit SH");
        /* the stored axes are RUB: y and z negated */
        float raw[3];
        int bits;
        CHECK_OK(spz_first_position(p, raw, &bits));
        CHECK(fabsf(raw[0] - s.means[0]) < 1e-3f && fabsf(raw[1] + s.means[1]) < 1e-3f && fabsf(raw[2] + s.means[2]) < 1e-3f,
              "SPZ stores (%g %g %g) for (%g %g %g): not RUB", raw[0], raw[1], raw[2], s.means[0], s.means[1], s.means[2]);
        cs_splats_free(&got);
        /* .splat: float positions and scales, 8-bit colour / alpha / rotation, no SH, importance order */
        snprintf(p, sizeof p, "%s/rt.splat", test_tmpdir());
        CHECK_OK(cs_splat32_write(p, &s));
        CHECK_OK(cs_splat32_read(p, &got));
        CHECK(got.sh_degree == 0, ".splat read with SH degree %d", got.sh_degree);
        tolerances sp = {1e-6f, 1e-5f, 0.5f / 255 + 1e-6f, 0.5f / 255 / SH_C0 + 1e-5f, 0, 2e-4f, 1};
        CHECK(compare(&s, &got, &sp, "splat") == 0, "splat round trip");
        float prev = INFINITY; /* importance (volume x opacity) of the originals, record by record */
        for (int j = 0; j < got.n; j++) {
            int i = 0;
            while (i < s.n && memcmp(s.means + i * 3, got.means + j * 3, 3 * sizeof(float))) i++;
            CHECK(i < s.n, ".splat record %d has no original", j);
            float ls[3], op;
            cs_splats_baked_row(&s, i, ls, &op);
            float imp = expf(ls[0] + ls[1] + ls[2]) * sigm(op);
            CHECK(imp <= prev * 1.0001f, ".splat record %d (importance %g) after one of %g", j, imp, prev);
            prev = imp;
        }
        cs_splats_free(&got);
        /* compressed PLY: within a chunk's box, 11/10/11 bits; colour 8 bits of the chunk's range; SH 8 bits of [-4, 4] */
        snprintf(p, sizeof p, "%s/rt.compressed.ply", test_tmpdir());
        CHECK_OK(cs_cply_write(p, &s));
        CHECK_OK(cs_cply_read(p, &got));
        tolerances cp = {6.0f / 1023 / 2 + 1e-4f, 4.0f / 1023 / 2 + 2e-3f, 0.5f / 255 + 1e-6f, 0.5f / 255 / SH_C0 * 2.0f / 1.0f,
                         8.0f / 256 + 1e-5f, 2e-5f, 1};
        CHECK(compare(&s, &got, &cp, "compressed-ply") == 0, "compressed PLY round trip");
        cs_splats_free(&got);
        /* the dispatcher tells them apart by content */
        const char *names[] = {"rt.spz", "rt.splat", "rt.compressed.ply"};
        cs_splat_format want[] = {CS_FMT_SPZ, CS_FMT_SPLAT, CS_FMT_CPLY}, f;
        for (int k = 0; k < 3; k++) {
            snprintf(p, sizeof p, "%s/%s", test_tmpdir(), names[k]);
            CHECK_OK(cs_splat_file_read(p, &got, &f));
            CHECK(f == want[k] && got.n == s.n, "%s read as %s", names[k], cs_splat_format_name(f));
            cs_splats_free(&got);
        }
        cs_splats_free(&s);
    }
    return 0;
}

/* Writes N bytes of DATA to DIR/NAME; the path in P. */
static void put_file(char *p, size_t n, const char *name, const void *data, size_t len)
{
    snprintf(p, n, "%s/%s", test_tmpdir(), name);
    cs_write_file_atomic(p, data, len);
}

/* Reading PATH fails with a message containing PATH and WANT. */
static int refused(const char *path, const char *want)
{
    cs_splats s;
    CHECK(cs_splat_file_read(path, &s, NULL) == -1, "%s was read", path);
    CHECK(strstr(cs_last_error(), path) && strstr(cs_last_error(), want), "%s: message '%s' lacks '%s'", path,
          cs_last_error(), want);
    return 0;
}

int test_export_bad_files(void)
{
    uint64_t rng = test_seed() ^ 0xbad;
    cs_splats s;
    CHECK_OK(random_splats(&s, 600, 3, 0, 4.0f, &rng));
    char p[700], q[700];
    const char *kinds[] = {"spz", "compressed.ply", "splat"};
    cs_splat_format fmts[] = {CS_FMT_SPZ, CS_FMT_CPLY, CS_FMT_SPLAT};
    for (int k = 0; k < 3; k++) {
        snprintf(p, sizeof p, "%s/good.%s", test_tmpdir(), kinds[k]);
        cs_export_opts eo = {0, 6};
        CHECK_OK(cs_splat_file_write(p, &s, fmts[k], &eo));
        size_t len;
        char *data = cs_read_file(p, &len);
        CHECK(data != NULL, "%s", cs_last_error());
        /* cut at several points: a clear refusal each time, never a crash */
        for (int cut = 1; cut < 8; cut++) {
            char name[64];
            snprintf(name, sizeof name, "cut%d.%s", cut, kinds[k]);
            size_t keep = len * (size_t)cut / 8 - (fmts[k] == CS_FMT_SPLAT ? 1 : 0);
            put_file(q, sizeof q, name, data, keep);
            cs_splats t;
            CHECK(cs_splat_file_read(q, &t, NULL) == -1 && strstr(cs_last_error(), q), "%s (%zu of %zu bytes) was read: %s", q,
                  keep, len, cs_last_error());
        }
        free(data);
    }
    /* SPZ: a header claiming 2^31-1 Gaussians in a tiny file; version 4; a plain non-gzip file */
    uint8_t hdr[16] = {'N', 'G', 'S', 'P', 3, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 0, 12, 0, 0};
    uLong bound = compressBound(sizeof hdr) + 32;
    uint8_t gz[128];
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
    z.next_in = hdr, z.avail_in = sizeof hdr, z.next_out = gz, z.avail_out = (uInt)bound;
    CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
    deflateEnd(&z);
    put_file(p, sizeof p, "huge.spz", gz, z.total_out);
    CHECK(refused(p, "claims 2147483647 Gaussians") == 0, "huge count");
    hdr[4] = 4;
    put_file(p, sizeof p, "v4.spz", hdr, sizeof hdr);
    CHECK(refused(p, "version 4") == 0, "v4");
    put_file(p, sizeof p, "text.splat", "not a splat file at all!", 24);
    CHECK(refused(p, "32-byte records") == 0, ".splat size");
    put_file(p, sizeof p, "unknown.bin", "hello", 5);
    CHECK(refused(p, "not a Gaussian scene") == 0, "unknown");
    /* compressed PLY: chunk count that does not match, a NaN bound */
    const char *hdr_text = "ply\nformat binary_little_endian 1.0\nelement chunk 3\n"
                           "property float min_x\nproperty float min_y\nproperty float min_z\nproperty float max_x\n"
                           "property float max_y\nproperty float max_z\nproperty float min_scale_x\nproperty float min_scale_y\n"
                           "property float min_scale_z\nproperty float max_scale_x\nproperty float max_scale_y\n"
                           "property float max_scale_z\nelement vertex 10\nproperty uint packed_position\n"
                           "property uint packed_rotation\nproperty uint packed_scale\nproperty uint packed_color\nend_header\n";
    put_file(p, sizeof p, "chunks.ply", hdr_text, strlen(hdr_text));
    CHECK(refused(p, "3 chunks for 10 Gaussians") == 0, "chunk count");
    char buf[2048];
    size_t hl = strlen(hdr_text);
    memcpy(buf, hdr_text, hl);
    char *one = strstr(buf, "chunk 3");
    one[6] = '1';
    memset(buf + hl, 0, 12 * 4 + 10 * 16);
    float nan_value = NAN;
    memcpy(buf + hl + 4, &nan_value, 4);
    put_file(p, sizeof p, "nan.ply", buf, hl + 12 * 4 + 10 * 16);
    CHECK(refused(p, "min_y is nan") == 0, "NaN chunk");
    /* #33 item 12: compressed-PLY bounds of +-3e38 decode to finite positions */
    float wide[12] = {-3e38f, -3e38f, -3e38f, 3e38f, 3e38f, 3e38f, -1, -1, -1, 1, 1, 1};
    memcpy(buf + hl, wide, sizeof wide);
    memset(buf + hl + sizeof wide, 0xff, 10 * 16);
    put_file(p, sizeof p, "wide.ply", buf, hl + 12 * 4 + 10 * 16);
    cs_splats t;
    CHECK(cs_splat_file_read(p, &t, NULL) == 0, "+-3e38 bounds: %s", cs_last_error());
    int finite = 1;
    for (int i = 0; i < t.n * 3; i++) finite &= isfinite(t.means[i]) && isfinite(t.log_scales[i]);
    cs_splats_free(&t);
    CHECK(finite, "+-3e38 bounds decode to non-finite positions");
    /* SPZ: data of zeros over 64 times its compressed size (a decompression bomb) is refused
       before it is inflated; a stream without its gzip trailer is refused */
    {
        size_t zn = 16 + (size_t)200000 * 20;
        uint8_t *zeros = calloc(zn, 1), *bomb = malloc(zn / 50 + 1024);
        CHECK(zeros && bomb, "out of memory");
        uint8_t h3[16] = {'N', 'G', 'S', 'P', 3, 0, 0, 0, 0x40, 0x0d, 0x03, 0, 0, 12, 0, 0}; /* 200000, degree 0 */
        memcpy(zeros, h3, 16);
        memset(&z, 0, sizeof z);
        CHECK(deflateInit2(&z, 9, Z_DEFLATED, 31, 9, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
        z.next_in = zeros, z.avail_in = (uInt)zn, z.next_out = bomb, z.avail_out = (uInt)(zn / 50 + 1024);
        CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
        deflateEnd(&z);
        put_file(p, sizeof p, "bomb.spz", bomb, z.total_out);
        free(zeros), free(bomb);
        CHECK(refused(p, "which no real SPZ compresses to") == 0, "an SPZ bomb");
    }
    snprintf(p, sizeof p, "%s/good.spz", test_tmpdir());
    size_t glen;
    char *good = cs_read_file(p, &glen);
    CHECK(good && glen > 8, "no %s", p);
    put_file(q, sizeof q, "notrailer.spz", good, glen - 8);
    free(good);
    CHECK(refused(q, "does not end with its checksum") == 0, "an SPZ without its gzip trailer");
    /* a model of no Gaussians written as .splat reads back as one */
    cs_splats none;
    CHECK_OK(cs_splats_alloc(&none, 0, 0, 0));
    snprintf(p, sizeof p, "%s/none.splat", test_tmpdir());
    cs_export_opts eo = {0, 6};
    CHECK_OK(cs_splat_file_write(p, &none, CS_FMT_SPLAT, &eo));
    cs_splats_free(&none);
    CHECK(cs_splat_file_read(p, &t, NULL) == 0 && t.n == 0, "an empty .splat: %s", cs_last_error());
    cs_splats_free(&t);
    /* SH degree 4 is refused by the formats that cannot hold it */
    cs_splats_free(&s);
    return 0;
}

/* PSNR of two PNGs of one size */
static double psnr_png(const char *a, const char *b)
{
    cs_image x, y;
    if (cs_image_load(a, &x)) return -1;
    if (cs_image_load(b, &y)) {
        cs_image_free(&x);
        return -1;
    }
    double se = 0;
    size_t n = (size_t)x.width * x.height * x.channels;
    int same = x.width == y.width && x.height == y.height && x.channels == y.channels;
    for (size_t i = 0; i < n && same; i++) {
        double d = (double)x.px[i] - y.px[i];
        se += d * d;
    }
    cs_image_free(&x);
    cs_image_free(&y);
    return !same ? -1 : se == 0 ? 99.0 : 10 * log10(255.0 * 255.0 * n / se);
}

int test_export_cli(void)
{
    char dir[600], scene[700], out[700], log[700], p[900], q[900];
    snprintf(dir, sizeof dir, "%s/export", test_tmpdir());
    snprintf(scene, sizeof scene, "%s/scene", dir);
    CHECK_OK(cli_demo_scene(scene, 40, 30));
    snprintf(out, sizeof out, "%s/run", dir);
    snprintf(log, sizeof log, "%s/train.log", dir);
    CHECK(cli_run("", log, "train -s %s -o %s --iterations 150 --set device.tune=off --set model.antialias=mip "
                  "--set model.filter_3d=true --set optim.random_init_points=2000 "
                  "--set output.export_formats='[\"spz\",\"splat\",\"compressed-ply\"]'", scene, out) == 0,
          "training failed, see %s", log);
    const char *ext[] = {"ply", "spz", "splat", "compressed.ply"};
    char pc[800];
    snprintf(pc, sizeof pc, "%s/point_cloud/iteration_150/point_cloud", out);
    for (int k = 0; k < 4; k++) {
        snprintf(p, sizeof p, "%s.%s", pc, ext[k]);
        CHECK(cs_file_exists(p), "no %s", p);
        CHECK(cli_run("", log, "info %s", p) == 0, "info %s failed, see %s", p, log);
        char *text = cs_read_file(log, NULL);
        CHECK(text && strstr(text, "Gaussians: ") && strstr(text, "format: "), "info output: %s", text ? text : "");
        free(text);
    }
    /* export -m: baked PLY beside the latest; --bake with another format is a usage error */
    CHECK(cli_run("", log, "export -m %s --format ply --bake", out) == 0, "export --bake failed, see %s", log);
    snprintf(p, sizeof p, "%s_baked.ply", pc);
    CHECK(cs_file_exists(p), "no %s", p);
    CHECK(cli_run("", log, "export -m %s --format spz --bake", out) == 2, "--bake with spz accepted");
    CHECK(cli_run("", log, "export -m %s --format jpeg", out) == 2, "--format jpeg accepted");
    snprintf(q, sizeof q, "%s/again.spz", dir);
    CHECK(cli_run("", log, "export --ply %s.ply --format spz -o %s", pc, q) == 0 && cs_file_exists(q), "export --ply -o");
    /* renders: the baked PLY equals the unbaked one; the compact formats stay close */
    double min_psnr[5] = {0, 45, 25, 40, 60}; /* measured here: 50, 51, 45-50, 84-99 dB */
    const char *names[5] = {"ply", "spz", "splat", "compressed.ply", "_baked.ply"};
    char ref[800];
    snprintf(ref, sizeof ref, "%s/r_ply", dir);
    for (int k = 0; k < 5; k++) {
        char rdir[800];
        snprintf(rdir, sizeof rdir, "%s/r_%s", dir, names[k]);
        if (k < 4) snprintf(p, sizeof p, "%s.%s", pc, names[k]);
        else snprintf(p, sizeof p, "%s%s", pc, names[k]);
        CHECK(cli_run("", log, "render --ply %s -s %s -o %s --set model.antialias=mip", p, scene, rdir) == 0,
              "render %s failed, see %s", p, log);
        if (!k) continue;
        for (int v = 0; v < 3; v++) {
            char a[900], b[900];
            snprintf(a, sizeof a, "%s/r_%d.png", ref, v);
            snprintf(b, sizeof b, "%s/r_%d.png", rdir, v);
            double db = psnr_png(a, b);
            printf("  %s view %d: %.2f dB against the PLY's render\n", names[k], v, db);
            CHECK(db >= min_psnr[k], "%s view %d: PSNR %.2f dB against the PLY's render (want >= %.0f)", names[k], v, db,
                  min_psnr[k]);
        }
    }
    /* the test can tell: the same PLY with its filter dropped (not folded) renders visibly apart */
    cs_splats s;
    snprintf(p, sizeof p, "%s.ply", pc);
    CHECK_OK(cs_ply_read(p, &s));
    CHECK(s.filter_3d != NULL, "the mip run wrote no filter_3D");
    free(s.filter_3d);
    s.filter_3d = NULL;
    snprintf(p, sizeof p, "%s/dropped.ply", dir);
    CHECK_OK(cs_ply_write(p, &s, 0));
    cs_splats_free(&s);
    char rdir[800], a0[900], b0[900];
    snprintf(rdir, sizeof rdir, "%s/r_dropped", dir);
    CHECK(cli_run("", log, "render --ply %s -s %s -o %s --set model.antialias=mip", p, scene, rdir) == 0, "render dropped");
    snprintf(a0, sizeof a0, "%s/r_0.png", ref);
    snprintf(b0, sizeof b0, "%s/r_0.png", rdir);
    double dropped = psnr_png(a0, b0);
    printf("  filter dropped instead of folded: %.2f dB against the PLY's render\n", dropped);
    CHECK(dropped < min_psnr[4] - 5, "dropping the filter gives %.2f dB: the baked comparison could not fail", dropped);
    /* --orbit: frames and a contact sheet of up to 8, 4 a row */
    CHECK(cli_run("", log, "render -m %s --orbit 6", out) == 0, "render --orbit failed, see %s", log);
    snprintf(p, sizeof p, "%s/orbit/orbit_005.png", out);
    CHECK(cs_file_exists(p), "no %s", p);
    snprintf(p, sizeof p, "%s/orbit/contact_sheet.png", out);
    int sw = 0, sh = 0;
    CHECK(cs_image_size(p, &sw, &sh) == 0 && sw == 4 * 40 && sh == 2 * 30, "contact sheet %dx%d, want 160x60", sw, sh);
    /* a bad file through the CLI: exit 1 with the file named */
    snprintf(p, sizeof p, "%s/bad.spz", dir);
    cs_write_file_atomic(p, "\x1f\x8b garbage", 10);
    CHECK(cli_run("", log, "info %s", p) == 1, "info on a bad .spz did not exit 1");
    return 0;
}

/* six cameras on a circle of radius 4 at height 1.5 around CENTRE, world up +z, looking at it */
int test_orbit_cameras(void)
{
    uint64_t rng = test_seed() ^ 0x0b17;
    const double centre[3] = {0.5, 0.2, -1.0}, up[3] = {0, 0, 1};
    cs_camera cams[7];
    cs_scene scene;
    memset(&scene, 0, sizeof scene);
    scene.cams = cams, scene.n_cams = 7;
    double phase = test_rand(&rng); /* evenly spaced: their up directions average to the world's */
    for (int i = 0; i < 7; i++) {
        double a = 2 * M_PI * (i + phase) / 6, pos[3] = {centre[0] + 4 * cos(a), centre[1] + 4 * sin(a), centre[2] + 1.5};
        double f[3] = {centre[0] - pos[0], centre[1] - pos[1], centre[2] - pos[2]}, fn = sqrt(f[0] * f[0] + f[1] * f[1] + f[2] * f[2]);
        for (int k = 0; k < 3; k++) f[k] /= fn;
        double x[3] = {f[1] * up[2] - f[2] * up[1], f[2] * up[0] - f[0] * up[2], f[0] * up[1] - f[1] * up[0]};
        double xn = sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]);
        for (int k = 0; k < 3; k++) x[k] /= xn;
        double y[3] = {f[1] * x[2] - f[2] * x[1], f[2] * x[0] - f[0] * x[2], f[0] * x[1] - f[1] * x[0]};
        memset(&cams[i], 0, sizeof cams[i]);
        cams[i].width = 80, cams[i].height = 60, cams[i].fx = cams[i].fy = 70, cams[i].cx = 40, cams[i].cy = 30;
        for (int k = 0; k < 3; k++) cams[i].R[k] = x[k], cams[i].R[3 + k] = y[k], cams[i].R[6 + k] = f[k];
        for (int q = 0; q < 3; q++) cams[i].t[q] = -(cams[i].R[q * 3] * pos[0] + cams[i].R[q * 3 + 1] * pos[1] + cams[i].R[q * 3 + 2] * pos[2]);
        cams[i].is_test = i == 6; /* a test camera far off must not count */
        if (i == 6) cams[i].t[0] += 100;
    }
    double c[3], u[3];
    CHECK_OK(cs_orbit_frame(&scene, c, u));
    for (int k = 0; k < 3; k++) CHECK(fabs(c[k] - centre[k]) < 1e-6 && fabs(u[k] - up[k]) < 1e-6, "centre/up axis %d: %g %g", k, c[k], u[k]);
    cs_camera orbit[9];
    CHECK_OK(cs_orbit_cameras(&scene, 9, orbit));
    for (int j = 0; j < 9; j++) {
        const double *R = orbit[j].R;
        double p[3];
        cs_camera_center(&orbit[j], p);
        double dz = p[2] - centre[2], dr = hypot(p[0] - centre[0], p[1] - centre[1]);
        CHECK(fabs(dz - 1.5) < 1e-6 && fabs(dr - 4) < 1e-6, "frame %d at height %g, distance %g", j, dz, dr);
        /* the centre projects to the principal point; the camera's up (-y) leans to the world's up */
        double pc[3];
        for (int q = 0; q < 3; q++) pc[q] = R[q * 3] * centre[0] + R[q * 3 + 1] * centre[1] + R[q * 3 + 2] * centre[2] + orbit[j].t[q];
        CHECK(pc[2] > 0 && fabs(pc[0] / pc[2]) < 1e-9 && fabs(pc[1] / pc[2]) < 1e-9, "frame %d: centre at (%g %g %g)", j, pc[0], pc[1], pc[2]);
        CHECK(-R[5] > 0.1, "frame %d upside down", j);
        double det = R[0] * (R[4] * R[8] - R[5] * R[7]) - R[1] * (R[3] * R[8] - R[5] * R[6]) + R[2] * (R[3] * R[7] - R[4] * R[6]);
        CHECK(fabs(det - 1) < 1e-9, "frame %d: det %g", j, det);
        if (j) {
            double q[3];
            cs_camera_center(&orbit[j - 1], q);
            double step = hypot(p[0] - q[0], p[1] - q[1]);
            CHECK(fabs(step - 2 * 4 * sin(M_PI / 9)) < 1e-6, "frame %d: a step of %g around the circle", j, step);
        }
    }
    return 0;
}

/* A version-2 SPZ written by hand (first-three quaternions) reads back in the PLY's axes. */
int test_spz_version2(void)
{
    /* one Gaussian, SH degree 1: header, position, alpha, colour, scale, rotation (3), SH (9) */
    uint8_t raw[16 + 9 + 1 + 3 + 3 + 3 + 9] = {'N', 'G', 'S', 'P', 2, 0, 0, 0, 1, 0, 0, 0, 1, 12, 0, 0};
    uint8_t *p = raw + 16;
    const float rub[3] = {1.0f, -2.0f, -3.0f}; /* RDF (1, 2, 3) */
    for (int c = 0; c < 3; c++) {
        int32_t v = (int32_t)(rub[c] * 4096);
        for (int b = 0; b < 3; b++) *p++ = (uint8_t)((uint32_t)v >> (8 * b));
    }
    *p++ = 200;                                 /* alpha 200/255 */
    *p++ = 150, *p++ = 100, *p++ = 50;           /* colour */
    *p++ = 96, *p++ = 112, *p++ = 128;           /* log-scales -4, -3, -2 */
    *p++ = 204, *p++ = 128, *p++ = 128;          /* x y z of (w 0.8, x 0.6, 0, 0) in RUB */
    uint8_t sh[9] = {192, 128, 128, 128, 64, 128, 128, 128, 128}; /* band 1: y-coefficient red 0.5, z green -0.5 */
    memcpy(p, sh, sizeof sh);
    uint8_t gz[256];
    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
    z.next_in = raw, z.avail_in = sizeof raw, z.next_out = gz, z.avail_out = sizeof gz;
    CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
    deflateEnd(&z);
    char path[700];
    snprintf(path, sizeof path, "%s/v2.spz", test_tmpdir());
    CHECK_OK(cs_write_file_atomic(path, gz, z.total_out));
    cs_splats s;
    cs_spz_info info;
    CHECK_OK(cs_spz_read(path, &s, &info));
    CHECK(info.version == 2 && s.n == 1 && s.sh_degree == 1, "version %d, %d Gaussians, degree %d", info.version, s.n, s.sh_degree);
    const float pos[3] = {1, 2, 3}, ls[3] = {-4, -3, -2};
    for (int c = 0; c < 3; c++)
        CHECK(fabsf(s.means[c] - pos[c]) < 1e-6f && fabsf(s.log_scales[c] - ls[c]) < 1e-6f, "axis %d: %g %g", c, s.means[c], s.log_scales[c]);
    CHECK(fabsf(sigm(s.logit_opacity[0]) - 200 / 255.0f) < 1e-5f, "opacity %g", sigm(s.logit_opacity[0]));
    CHECK(fabsf(s.sh[0] - (150 / 255.0f - 0.5f) / 0.15f) < 1e-5f, "DC %g", s.sh[0]);
    const float q[4] = {0.8f, 0.6f, 0, 0};
    CHECK(1 - quat_match(s.quats, q) < 1e-4f, "rotation (%g %g %g %g)", s.quats[0], s.quats[1], s.quats[2], s.quats[3]);
    /* SH (k, c) at sh[k*3 + c]: band-1 y coefficient flips sign between RUB and RDF, so does z */
    CHECK(fabsf(s.sh[3 + 0] + 0.5f) < 1e-6f && fabsf(s.sh[6 + 1] - 0.5f) < 1e-6f && fabsf(s.sh[9 + 2]) < 1e-6f,
          "SH (%g %g %g)", s.sh[3], s.sh[7], s.sh[11]);
    cs_splats_free(&s);
    return 0;
}
