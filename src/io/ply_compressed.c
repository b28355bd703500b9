/* ply_compressed: compressed PLY write and read (ply_compressed.h). */
#include "ply_compressed.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define SH_C0 ((float)CS_SH_C0)
#define CHUNK_FLOATS 18
static const char *const CHUNK_PROPS[CHUNK_FLOATS] = {
    "min_x", "min_y", "min_z", "max_x", "max_y", "max_z", "min_scale_x", "min_scale_y", "min_scale_z",
    "max_scale_x", "max_scale_y", "max_scale_z", "min_r", "min_g", "min_b", "max_r", "max_g", "max_b"};
static const char *const VERTEX_PROPS[4] = {"packed_position", "packed_rotation", "packed_scale", "packed_color"};

/* ---- writing ---------------------------------------------------------------------------- */

typedef struct {
    uint32_t key;
    int index;
} keyed;

static int by_key(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->index - y->index;
}

/* 10 bits of V spread to every third bit */
static uint32_t spread3(uint32_t v)
{
    v &= 0x3ff;
    v = (v | v << 16) & 0x030000ff;
    v = (v | v << 8) & 0x0300f00f;
    v = (v | v << 4) & 0x030c30c3;
    v = (v | v << 2) & 0x09249249;
    return v;
}

/* Gaussian indices in Morton order of their positions (10 bits an axis over the scene's box). */
static keyed *morton_order(const cs_splats *s)
{
    keyed *k = malloc((s->n ? (size_t)s->n : 1) * sizeof *k);
    if (!k) return NULL;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < s->n; i++)
        for (int c = 0; c < 3; c++) lo[c] = fminf(lo[c], s->means[i * 3 + c]), hi[c] = fmaxf(hi[c], s->means[i * 3 + c]);
    for (int i = 0; i < s->n; i++) {
        uint32_t code = 0;
        for (int c = 0; c < 3; c++) {
            float ext = hi[c] - lo[c], t = ext > 0 ? (s->means[i * 3 + c] - lo[c]) / ext : 0;
            code |= spread3((uint32_t)fminf(1023.0f, fmaxf(0.0f, t * 1023.0f))) << c;
        }
        k[i].key = code, k[i].index = i;
    }
    qsort(k, (size_t)s->n, sizeof *k, by_key);
    return k;
}

static uint32_t unorm(float v, int bits)
{
    float t = (float)((1u << bits) - 1);
    float r = floorf(v * t + 0.5f);
    return (uint32_t)(r < 0 ? 0 : r > t ? t : r);
}

static float norm01(float x, float lo, float hi)
{
    if (x <= lo) return 0;
    if (x >= hi) return 1;
    return hi - lo < 1e-5f ? 0 : (x - lo) / (hi - lo);
}

static uint32_t pack_rot(const float *wxyz)
{
    float a[4], n = 0;
    for (int c = 0; c < 4; c++) a[c] = wxyz[c], n += a[c] * a[c];
    n = sqrtf(n);
    for (int c = 0; c < 4; c++) a[c] = n > 0 ? a[c] / n : (c == 0);
    int big = 0;
    for (int c = 1; c < 4; c++)
        if (fabsf(a[c]) > fabsf(a[big])) big = c;
    float sign = a[big] < 0 ? -1.0f : 1.0f;
    uint32_t r = (uint32_t)big;
    for (int c = 0; c < 4; c++)
        if (c != big) r = r << 10 | unorm(a[c] * sign * 0.70710678f + 0.5f, 10);
    return r;
}

/* the 14 values a chunk quantises, per Gaussian: x y z, log-scale x3 (clamped), colour x3, opacity */
static void row_values(const cs_splats *s, int i, float v[10])
{
    float ls[3], op;
    cs_splats_baked_row(s, i, ls, &op);
    const float *dc = s->sh + (size_t)i * CS_SH_COEFFS(s->sh_degree) * 3;
    for (int c = 0; c < 3; c++) {
        v[c] = s->means[i * 3 + c];
        v[3 + c] = fminf(20.0f, fmaxf(-20.0f, ls[c]));
        v[6 + c] = dc[c] * SH_C0 + 0.5f;
    }
    v[9] = 1.0f / (1.0f + expf(-op));
}

/* Packs the chunk of Gaussians ORDER[0..N) into CHUNK (18 floats) and WORDS (4 a Gaussian). */
static void pack_chunk(const cs_splats *s, const keyed *order, int n, float *chunk, uint32_t *words)
{
    float lo[9], hi[9], vals[CS_CPLY_CHUNK][10];
    for (int j = 0; j < n; j++) {
        row_values(s, order[j].index, vals[j]);
        for (int c = 0; c < 9; c++) {
            lo[c] = j ? fminf(lo[c], vals[j][c]) : vals[j][c];
            hi[c] = j ? fmaxf(hi[c], vals[j][c]) : vals[j][c];
        }
    }
    for (int g = 0; g < 3; g++) /* (min xyz, max xyz) for position, scale, colour */
        for (int c = 0; c < 3; c++) chunk[g * 6 + c] = lo[g * 3 + c], chunk[g * 6 + 3 + c] = hi[g * 3 + c];
    for (int j = 0; j < n; j++) {
        const float *v = vals[j];
        uint32_t t[9];
        for (int c = 0; c < 9; c++) t[c] = unorm(norm01(v[c], lo[c], hi[c]), (c % 3 == 1 && c < 6) ? 10 : c < 6 ? 11 : 8);
        uint32_t *w = words + (size_t)j * 4;
        w[0] = t[0] << 21 | t[1] << 11 | t[2];
        w[1] = pack_rot(s->quats + (size_t)order[j].index * 4);
        w[2] = t[3] << 21 | t[4] << 11 | t[5];
        w[3] = t[6] << 24 | t[7] << 16 | t[8] << 8 | unorm(v[9], 8);
    }
}

static uint8_t sh_byte(float v)
{
    float q = truncf((v / 8.0f + 0.5f) * 256.0f);
    return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

int cs_cply_write(const char *path, const cs_splats *s)
{
    if (s->sh_degree > 3) return cs_fail("%s: compressed PLY holds SH degrees up to 3, the model has %d", path, s->sh_degree);
    int n = s->n, nchunks = (n + CS_CPLY_CHUNK - 1) / CS_CPLY_CHUNK, K = CS_SH_COEFFS(s->sh_degree), R = 3 * (K - 1);
    keyed *order = morton_order(s);
    float *chunks = malloc(((size_t)nchunks + 1) * CHUNK_FLOATS * sizeof(float));
    uint32_t *words = malloc(((size_t)n + 1) * 4 * sizeof(uint32_t));
    uint8_t *sh = malloc((size_t)n * R + 1);
    cs_atomic_file af;
    int rc = -1;
    if (!order || !chunks || !words || !sh) {
        cs_fail("out of host memory (compressed PLY of %d Gaussians)", n);
    } else if (!cs_atomic_open(&af, path)) {
        for (int c = 0; c < nchunks; c++) {
            int first = c * CS_CPLY_CHUNK, m = n - first < CS_CPLY_CHUNK ? n - first : CS_CPLY_CHUNK;
            pack_chunk(s, order + first, m, chunks + (size_t)c * CHUNK_FLOATS, words + (size_t)first * 4);
        }
        for (int j = 0; j < n; j++) { /* f_rest_{c (K-1) + k - 1}, as in the float PLY */
            const float *f = s->sh + (size_t)order[j].index * K * 3;
            for (int c = 0; c < 3; c++)
                for (int k = 1; k < K; k++) sh[(size_t)j * R + c * (K - 1) + k - 1] = sh_byte(f[k * 3 + c]);
        }
        FILE *f = af.f;
        fprintf(f, "ply\nformat binary_little_endian 1.0\ncomment written by clsplat\nelement chunk %d\n", nchunks);
        for (int p = 0; p < CHUNK_FLOATS; p++) fprintf(f, "property float %s\n", CHUNK_PROPS[p]);
        fprintf(f, "element vertex %d\n", n);
        for (int p = 0; p < 4; p++) fprintf(f, "property uint %s\n", VERTEX_PROPS[p]);
        if (R) fprintf(f, "element sh %d\n", n);
        for (int p = 0; p < R; p++) fprintf(f, "property uchar f_rest_%d\n", p);
        fprintf(f, "end_header\n");
        fwrite(chunks, sizeof(float) * CHUNK_FLOATS, (size_t)nchunks, f);
        fwrite(words, sizeof(uint32_t) * 4, (size_t)n, f);
        fwrite(sh, 1, (size_t)n * R, f);
        rc = cs_atomic_commit(&af);
    }
    free(order);
    free(chunks);
    free(words);
    free(sh);
    return rc;
}

/* ---- reading ---------------------------------------------------------------------------- */

int cs_cply_is_compressed(const char *head)
{
    const char *end = strstr(head, "end_header");
    const char *chunk = strstr(head, "\nelement chunk ");
    return chunk && (!end || chunk < end);
}

#define MAX_PROPS 64
typedef struct {
    char name[16];
    long count;
    int np;
    char prop[MAX_PROPS][32];
    int type_size[MAX_PROPS];
} element;

static int type_size(const char *t)
{
    if (!strcmp(t, "float") || !strcmp(t, "float32") || !strcmp(t, "uint") || !strcmp(t, "uint32")) return 4;
    if (!strcmp(t, "uchar") || !strcmp(t, "uint8")) return 1;
    return 0;
}

/* Parses the header of BUF (LEN bytes) into EL[3] (chunk, vertex, sh); *DATA: the first data byte. */
static int parse_header(const char *path, const char *buf, size_t len, element el[3], size_t *data)
{
    const char *end = NULL;
    for (size_t i = 0; i + 11 <= len && i < 65536 && !end; i++)
        if (!memcmp(buf + i, "end_header\n", 11)) end = buf + i + 11;
    if (!end) return cs_fail("%s: no end_header in the first 64 KiB", path);
    *data = (size_t)(end - buf);
    if (len < 4 || memcmp(buf, "ply\n", 4)) return cs_fail("%s: not a PLY file", path);
    int cur = -1, format_ok = 0, line_no = 0;
    for (const char *l = buf, *nl; l < end; l = nl + 1) {
        char line[160], a[40], b[40], c[40];
        nl = memchr(l, '\n', (size_t)(end - l));
        size_t n = (size_t)(nl - l);
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1), l);
        line_no++;
        int k = sscanf(line, "%39s %39s %39s", a, b, c);
        if (k >= 2 && !strcmp(a, "format")) format_ok = !strcmp(b, "binary_little_endian");
        else if (k == 3 && !strcmp(a, "element")) {
            cur = !strcmp(b, "chunk") ? 0 : !strcmp(b, "vertex") ? 1 : !strcmp(b, "sh") ? 2 : -1;
            char *e;
            long cnt = strtol(c, &e, 10);
            if (cur < 0) return cs_fail("%s: header line %d: element '%s' is not part of a compressed PLY", path, line_no, b);
            if (*e || cnt < 0 || cnt > 0x7fffffffL) return cs_fail("%s: header line %d: bad count '%s'", path, line_no, c);
            snprintf(el[cur].name, sizeof el[cur].name, "%s", b);
            el[cur].count = cnt;
        } else if (k == 3 && !strcmp(a, "property")) {
            if (cur < 0) return cs_fail("%s: header line %d: a property before any element", path, line_no);
            element *e = &el[cur];
            int sz = type_size(b);
            if (!sz || e->np == MAX_PROPS) return cs_fail("%s: header line %d: unexpected property '%s'", path, line_no, line);
            snprintf(e->prop[e->np], sizeof e->prop[0], "%s", c);
            e->type_size[e->np++] = sz;
        }
    }
    if (!format_ok) return cs_fail("%s: a compressed PLY must be binary_little_endian", path);
    return 0;
}

/* Checks the three elements' properties against the layout; *R gets the SH bytes a Gaussian. */
static int check_layout(const char *path, const element el[3], int *R, int *chunk_floats)
{
    if (!el[0].name[0] || !el[1].name[0]) return cs_fail("%s: a compressed PLY needs chunk and vertex elements", path);
    *chunk_floats = el[0].np;
    if (el[0].np != 12 && el[0].np != CHUNK_FLOATS) return cs_fail("%s: chunk has %d properties (12 or 18 expected)", path, el[0].np);
    for (int p = 0; p < el[0].np; p++)
        if (strcmp(el[0].prop[p], CHUNK_PROPS[p]) || el[0].type_size[p] != 4)
            return cs_fail("%s: chunk property %d is '%s', expected float %s", path, p, el[0].prop[p], CHUNK_PROPS[p]);
    if (el[1].np != 4) return cs_fail("%s: vertex has %d properties (4 packed uints expected)", path, el[1].np);
    for (int p = 0; p < 4; p++)
        if (strcmp(el[1].prop[p], VERTEX_PROPS[p]) || el[1].type_size[p] != 4)
            return cs_fail("%s: vertex property %d is '%s', expected uint %s", path, p, el[1].prop[p], VERTEX_PROPS[p]);
    if ((el[1].count + CS_CPLY_CHUNK - 1) / CS_CPLY_CHUNK != el[0].count)
        return cs_fail("%s: %ld chunks for %ld Gaussians (chunks of %d)", path, el[0].count, el[1].count, CS_CPLY_CHUNK);
    *R = el[2].name[0] ? el[2].np : 0;
    if (*R && ((*R != 9 && *R != 24 && *R != 45) || el[2].count != el[1].count))
        return cs_fail("%s: sh has %d properties for %ld Gaussians (9, 24 or 45 for each of %ld)", path, *R, el[2].count,
                       el[1].count);
    for (int p = 0; p < *R; p++)
        if (el[2].type_size[p] != 1) return cs_fail("%s: sh property %s is not uchar", path, el[2].prop[p]);
    return 0;
}

/* in double: finite bounds of +-3e38 would overflow b - a in float and decode to infinities */
static float lerp(float a, float b, float t) { return (float)((double)a + ((double)b - (double)a) * t); }
static float unorm_f(uint32_t v, int bits) { return (float)(v & ((1u << bits) - 1)) / (float)((1u << bits) - 1); }

static void decode_one(const float *ch, int chunk_floats, const uint32_t *w, cs_splats *o, int i)
{
    int b3[3] = {11, 10, 11}, sh3[3] = {21, 11, 0};
    for (int c = 0; c < 3; c++) {
        o->means[i * 3 + c] = lerp(ch[c], ch[3 + c], unorm_f(w[0] >> sh3[c], b3[c]));
        o->log_scales[i * 3 + c] = lerp(ch[6 + c], ch[9 + c], unorm_f(w[2] >> sh3[c], b3[c]));
        float col = unorm_f(w[3] >> (24 - 8 * c), 8);
        if (chunk_floats == CHUNK_FLOATS) col = lerp(ch[12 + c], ch[15 + c], col);
        o->sh[(size_t)i * CS_SH_COEFFS(o->sh_degree) * 3 + c] = (col - 0.5f) / SH_C0;
    }
    o->logit_opacity[i] = cs_logit_u8((int)(w[3] & 255u));
    int big = (int)(w[1] >> 30);
    float q[4], s2 = 0;
    for (int c = 0, k = 0; c < 4; c++) {
        if (c == big) continue;
        q[c] = (unorm_f(w[1] >> (20 - 10 * k++), 10) - 0.5f) * 1.41421356f;
        s2 += q[c] * q[c];
    }
    q[big] = sqrtf(fmaxf(0.0f, 1.0f - s2));
    memcpy(o->quats + (size_t)i * 4, q, sizeof q);
}

int cs_cply_read(const char *path, cs_splats *out)
{
    memset(out, 0, sizeof *out);
    size_t len, off = 0;
    char *buf = cs_read_file(path, &len);
    if (!buf) return -1;
    element el[3];
    memset(el, 0, sizeof el);
    int R = 0, cf = 0;
    if (parse_header(path, buf, len, el, &off) || check_layout(path, el, &R, &cf)) {
        free(buf);
        return -1;
    }
    long n = el[1].count, nch = el[0].count;
    size_t need = (size_t)nch * cf * 4 + (size_t)n * 16 + (size_t)n * R;
    if (len - off < need) {
        free(buf);
        return cs_fail("%s: truncated: the header needs %zu data bytes, the file has %zu", path, need, len - off);
    }
    int deg = R == 45 ? 3 : R == 24 ? 2 : R == 9 ? 1 : 0, K = CS_SH_COEFFS(deg);
    if (cs_splats_alloc(out, (int)n, deg, 0)) {
        free(buf);
        return -1;
    }
    const uint8_t *p = (const uint8_t *)buf + off, *shp = p + (size_t)nch * cf * 4 + (size_t)n * 16;
    for (long i = 0; i < n; i++) {
        float ch[CHUNK_FLOATS];
        uint32_t w[4];
        memcpy(ch, p + (size_t)(i / CS_CPLY_CHUNK) * cf * 4, (size_t)cf * 4);
        for (int c = 0; c < cf; c++)
            if (!isfinite(ch[c])) {
                cs_fail("%s: chunk %ld's %s is %g", path, i / CS_CPLY_CHUNK, CHUNK_PROPS[c], ch[c]);
                cs_splats_free(out);
                free(buf);
                return -1;
            }
        memcpy(w, p + (size_t)nch * cf * 4 + (size_t)i * 16, sizeof w);
        decode_one(ch, cf, w, out, (int)i);
        for (int c = 0; c < 3; c++)
            if (!isfinite(out->means[i * 3 + c]) || !isfinite(out->log_scales[i * 3 + c])) {
                cs_fail("%s: Gaussian %ld decodes to a non-finite position or scale (chunk %ld's bounds)", path, i,
                        i / CS_CPLY_CHUNK);
                cs_splats_free(out);
                free(buf);
                return -1;
            }
        for (int c = 0; c < 3; c++)
            for (int k = 1; k < K; k++) {
                uint8_t b = shp[(size_t)i * R + c * (K - 1) + k - 1];
                float t = b == 0 ? 0.0f : b == 255 ? 1.0f : (b + 0.5f) / 256.0f;
                out->sh[(size_t)i * K * 3 + k * 3 + c] = (t - 0.5f) * 8.0f;
            }
    }
    free(buf);
    return 0;
}
