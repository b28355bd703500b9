/* spz: .spz write (version 3) and read (versions 2 and 3); the layout is in spz.h. */
#include "spz.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util.h"

#define SPZ_MAGIC 0x5053474eu  /* "NGSP" */
#define SPZ_HEADER 16
#define SPZ_COLOR_SCALE 0.15f  /* DC colour: byte = dc * 0.15 * 255 + 127.5 */
#define SPZ_SH1_BITS 5          /* the reference packer's defaults (sh_bits 0): degree 1 at 5 bits, */
#define SPZ_SHREST_BITS 4       /* higher degrees at 4 (zero low bits compress better) */
#define SQRT1_2 0.70710678118654752f

/* RDF <-> RUB (y and z negated): the sign of each rest SH coefficient, graphdeco's order
 * (band 1: y z x; band 2: xy yz zz xz xx-yy; band 3), from the parity of its basis in y and z;
 * also that of the quaternion's x y z (conjugation by a half turn about x). */
static const float SH_FLIP[24] = {-1, -1, 1, -1, 1, 1, -1, 1, -1, 1, -1, -1, 1, -1, 1,
                                  /* degree 4 (spz allows it; clsplat trains up to 3) */
                                  -1, 1, -1, 1, 1, -1, 1, -1, -1};
static const float Q_FLIP[3] = {1, -1, -1};

static float sigmoidf_(float x) { return 1.0f / (1.0f + expf(-x)); }

/* quantised to 8 bits, then to the centre of a bucket of BUCKET values (the reference's rule) */
static uint8_t quantize_sh(float x, int bucket)
{
    int q = (int)roundf(x * 128.0f) + 128;
    q = (q + bucket / 2) / bucket * bucket;
    return (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
}

static int sh_rest(int degree) { return CS_SH_COEFFS(degree) - 1; }

/* The smallest-three packing of unit quaternion Q (x y z w order, RUB). */
static uint32_t pack_quat(const float q[4])
{
    int big = 0;
    for (int i = 1; i < 4; i++)
        if (fabsf(q[i]) > fabsf(q[big])) big = i;
    int negate = q[big] < 0;
    uint32_t comp = (uint32_t)big;
    for (int i = 0; i < 4; i++) {
        if (i == big) continue;
        uint32_t neg = (uint32_t)((q[i] < 0) ^ negate);
        uint32_t mag = (uint32_t)(511.0f * (fabsf(q[i]) / SQRT1_2) + 0.5f);
        if (mag > 511) mag = 511;
        comp = (comp << 10) | (neg << 9) | mag;
    }
    return comp;
}

static void unpack_quat(uint32_t comp, float q[4])
{
    int big = (int)(comp >> 30);
    float sum = 0;
    for (int i = 3; i >= 0; i--) {
        if (i == big) continue;
        float v = SQRT1_2 * (float)(comp & 511u) / 511.0f;
        q[i] = (comp >> 9) & 1u ? -v : v;
        sum += q[i] * q[i];
        comp >>= 10;
    }
    q[big] = sqrtf(fmaxf(0.0f, 1.0f - sum));
}

/* The largest fractional bit count <= 12 (the reference's) that keeps every coordinate in 24 bits. */
static int fractional_bits(const cs_splats *s)
{
    float m = 0;
    for (long i = 0; i < (long)s->n * 3; i++) m = fmaxf(m, fabsf(s->means[i]));
    int bits = 12;
    while (bits > 0 && (double)m * (1 << bits) > 8388607.0) bits--;
    return (double)m > 8388607.0 ? -1 : bits;
}

static size_t payload_bytes(long n, int degree, int version)
{
    return (size_t)n * (9 + 1 + 3 + 3 + (version >= 3 ? 4 : 3) + 3 * (size_t)sh_rest(degree));
}

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The uncompressed stream of S (header and attributes). */
static uint8_t *pack(const cs_splats *s, int bits, int sh_bits, size_t *len)
{
    long n = s->n;
    int K = CS_SH_COEFFS(s->sh_degree), R = sh_rest(s->sh_degree);
    *len = SPZ_HEADER + payload_bytes(n, s->sh_degree, 3);
    uint8_t *buf = calloc(*len, 1);
    if (!buf) return NULL;
    put_u32(buf, SPZ_MAGIC);
    put_u32(buf + 4, 3);
    put_u32(buf + 8, (uint32_t)n);
    buf[12] = (uint8_t)s->sh_degree, buf[13] = (uint8_t)bits;
    buf[14] = s->filter_3d ? CS_SPZ_FLAG_ANTIALIASED : 0;
    uint8_t *pos = buf + SPZ_HEADER, *alpha = pos + n * 9, *col = alpha + n, *scl = col + n * 3, *rot = scl + n * 3;
    uint8_t *sh = rot + n * 4;
    int b1 = sh_bits ? sh_bits : SPZ_SH1_BITS, br = sh_bits ? sh_bits : SPZ_SHREST_BITS;
    for (long i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            int32_t v = (int32_t)lroundf(s->means[i * 3 + c] * Q_FLIP[c] * (float)(1 << bits));
            for (int b = 0; b < 3; b++) pos[i * 9 + c * 3 + b] = (uint8_t)((uint32_t)v >> (8 * b));
        }
        float ls[3], op;
        cs_splats_baked_row(s, (int)i, ls, &op);
        alpha[i] = cs_u8_round(sigmoidf_(op) * 255.0f);
        const float *f = s->sh + (size_t)i * K * 3;
        for (int c = 0; c < 3; c++) {
            col[i * 3 + c] = cs_u8_round(f[c] * (SPZ_COLOR_SCALE * 255.0f) + 127.5f);
            scl[i * 3 + c] = cs_u8_round((ls[c] + 10.0f) * 16.0f);
        }
        const float *g = s->quats + i * 4; /* w x y z */
        float norm = sqrtf(g[0] * g[0] + g[1] * g[1] + g[2] * g[2] + g[3] * g[3]);
        float q[4] = {0, 0, 0, 1}; /* x y z w, RUB; a zero quaternion becomes the identity */
        if (norm > 0)
            for (int c = 0; c < 4; c++) q[c] = (c < 3 ? g[c + 1] * Q_FLIP[c] : g[0]) / norm;
        put_u32(rot + i * 4, pack_quat(q));
        for (int k = 0; k < R; k++)
            for (int c = 0; c < 3; c++)
                sh[(size_t)i * R * 3 + k * 3 + c] =
                    quantize_sh(f[(k + 1) * 3 + c] * SH_FLIP[k], 1 << (8 - (k < 3 ? b1 : br)));
    }
    return buf;
}

int cs_spz_write(const char *path, const cs_splats *s, int sh_bits)
{
    if (sh_bits < 0 || sh_bits > 8) return cs_fail("%s: SPZ SH bits %d (1-8, or 0 for 5 and 4)", path, sh_bits);
    if (s->sh_degree > 4) return cs_fail("%s: SPZ holds SH degrees up to 4, the model has %d", path, s->sh_degree);
    int bits = fractional_bits(s);
    if (bits < 0) return cs_fail("%s: a position is beyond +-8388607, which SPZ's 24-bit fixed point cannot hold", path);
    size_t len;
    uint8_t *raw = pack(s, bits, sh_bits, &len);
    if (!raw) return cs_fail("out of host memory (SPZ of %d Gaussians)", s->n);
    z_stream z;
    memset(&z, 0, sizeof z);
    uLong cap = compressBound((uLong)len) + 64;
    uint8_t *gz = malloc(cap);
    int ok = gz && deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY) == Z_OK;
    if (ok) {
        z.next_in = raw, z.avail_in = (uInt)len, z.next_out = gz, z.avail_out = (uInt)cap;
        ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
        deflateEnd(&z);
    }
    int rc = ok ? cs_write_file_atomic(path, gz, z.total_out) : cs_fail("%s: gzip compression failed", path);
    free(raw);
    free(gz);
    return rc;
}

/* Inflates the next N bytes of Z into OUT; 0 when all came. */
static int inflate_n(z_stream *z, uint8_t *out, size_t n)
{
    z->next_out = out, z->avail_out = (uInt)n;
    while (z->avail_out) {
        int r = inflate(z, Z_NO_FLUSH);
        if (r == Z_STREAM_END) break;
        if (r != Z_OK) return -1;
    }
    return z->avail_out ? -1 : 0;
}

static void decode(const uint8_t *p, long n, int version, int bits, cs_splats *o)
{
    int K = CS_SH_COEFFS(o->sh_degree), R = sh_rest(o->sh_degree);
    const uint8_t *alpha = p + n * 9, *col = alpha + n, *scl = col + n * 3, *rot = scl + n * 3;
    const uint8_t *sh = rot + n * (version >= 3 ? 4 : 3);
    for (long i = 0; i < n; i++) {
        for (int c = 0; c < 3; c++) {
            const uint8_t *b = p + i * 9 + c * 3;
            uint32_t u = b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16;
            int32_t v = (int32_t)(u & 0x800000u ? u | 0xff000000u : u);
            o->means[i * 3 + c] = (float)v / (float)(1 << bits) * Q_FLIP[c];
            o->log_scales[i * 3 + c] = scl[i * 3 + c] / 16.0f - 10.0f;
        }
        o->logit_opacity[i] = cs_logit_u8(alpha[i]);
        float q[4]; /* x y z w, RUB */
        if (version >= 3) {
            unpack_quat(get_u32(rot + i * 4), q);
        } else {
            float s2 = 0;
            for (int c = 0; c < 3; c++) q[c] = rot[i * 3 + c] / 127.5f - 1.0f, s2 += q[c] * q[c];
            q[3] = sqrtf(fmaxf(0.0f, 1.0f - s2));
        }
        float *g = o->quats + i * 4;
        g[0] = q[3], g[1] = q[0] * Q_FLIP[0], g[2] = q[1] * Q_FLIP[1], g[3] = q[2] * Q_FLIP[2];
        float *f = o->sh + (size_t)i * K * 3;
        for (int c = 0; c < 3; c++) f[c] = (col[i * 3 + c] / 255.0f - 0.5f) / SPZ_COLOR_SCALE;
        for (int k = 0; k < R; k++)
            for (int c = 0; c < 3; c++) f[(k + 1) * 3 + c] = (sh[(size_t)i * R * 3 + k * 3 + c] - 128.0f) / 128.0f * SH_FLIP[k];
    }
}

#define SPZ_MAX_RATIO 64

/* 0 when Z is at the end of its gzip stream with the CRC-32 and length of the trailer checked
   (zlib checks them at the end) and nothing after it */
static int at_stream_end(z_stream *z)
{
    uint8_t extra;
    z->next_out = &extra, z->avail_out = 1;
    int r = inflate(z, Z_FINISH);
    return r == Z_STREAM_END && z->avail_out == 1 ? 0 : -1;
}

/* Checks the header H of PATH (compressed size CSIZE); 0 with the fields. */
static int check_header(const char *path, const uint8_t *h, size_t csize, cs_spz_info *inf, long *n, int *deg)
{
    if (get_u32(h) != SPZ_MAGIC) return cs_fail("%s: not an SPZ file (no NGSP magic after gunzip)", path);
    inf->version = (int)get_u32(h + 4);
    if (inf->version < 2 || inf->version > 3)
        return cs_fail("%s: SPZ version %d is not read (clsplat reads versions 2 and 3%s)", path, inf->version,
                       inf->version == 1 ? "; version 1 stores float16 positions" : "");
    uint32_t count = get_u32(h + 8);
    *deg = h[12], inf->fractional_bits = h[13], inf->flags = h[14];
    if (*deg > 3) return cs_fail("%s: SH degree %d (clsplat handles degrees 0-3)", path, *deg);
    if (inf->fractional_bits > 23) return cs_fail("%s: %d fractional bits in a 24-bit position", path, inf->fractional_bits);
    /* real SPZ data compresses 2-3x (8x for a model without higher SH): a count that would need
       more than SPZ_MAX_RATIO times the compressed bytes is refused before anything is
       allocated (deflate itself allows ~1032x: a file of compressed zeros would take 3.6 GB of
       host memory from 778 KB) */
    if (count > 0x7fffffffu || payload_bytes(count, *deg, inf->version) > (csize + 64) * SPZ_MAX_RATIO)
        return cs_fail("%s: the header claims %u Gaussians, %zu bytes of data: more than %d times the %zu compressed "
                       "bytes, which no real SPZ compresses to",
                       path, count, payload_bytes(count, *deg, inf->version), SPZ_MAX_RATIO, csize);
    *n = (long)count;
    return 0;
}

int cs_spz_read(const char *path, cs_splats *out, cs_spz_info *info)
{
    cs_spz_info inf_local;
    cs_spz_info *inf = info ? info : &inf_local;
    memset(out, 0, sizeof *out);
    size_t csize;
    uint8_t *file = (uint8_t *)cs_read_file(path, &csize);
    if (!file) return -1;
    if (csize >= 4 && get_u32(file) == SPZ_MAGIC) {
        free(file);
        return cs_fail("%s: SPZ version 4 or later (zstd streams) is not read; save it as version 3", path);
    }
    z_stream z;
    memset(&z, 0, sizeof z);
    z.next_in = file, z.avail_in = (uInt)csize;
    if (csize < 2 || file[0] != 0x1f || file[1] != 0x8b || inflateInit2(&z, 15 + 16) != Z_OK) {
        free(file);
        return cs_fail("%s: not an SPZ file (not gzip-compressed)", path);
    }
    uint8_t h[SPZ_HEADER], *p = NULL;
    long n = 0;
    int deg = 0, rc = -1;
    if (inflate_n(&z, h, SPZ_HEADER)) {
        cs_fail("%s: truncated or corrupt (the 16-byte header did not inflate)", path);
    } else if (!check_header(path, h, csize, inf, &n, &deg)) {
        size_t need = payload_bytes(n, deg, inf->version);
        if (!(p = malloc(need ? need : 1)) || cs_splats_alloc(out, (int)n, deg, 0))
            cs_fail("out of host memory for %ld Gaussians (%s)", n, path);
        else if (inflate_n(&z, p, need))
            cs_fail("%s: truncated or corrupt: the header says %ld Gaussians of SH degree %d, the data ends early", path, n, deg);
        else if (at_stream_end(&z))
            cs_fail("%s: truncated or corrupt: the gzip stream does not end with its checksum and length after the "
                    "data (or has data past it)", path);
        else
            decode(p, n, inf->version, inf->fractional_bits, out), rc = 0;
    }
    inflateEnd(&z);
    free(p);
    free(file);
    if (rc) cs_splats_free(out);
    return rc;
}
