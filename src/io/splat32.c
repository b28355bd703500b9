/* splat32: .splat write and read (splat32.h). */
#include "splat32.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define SH_C0 ((float)CS_SH_C0)

typedef struct {
    float key;
    int index;
} ranked;

static int by_key_desc(const void *a, const void *b)
{
    float x = ((const ranked *)a)->key, y = ((const ranked *)b)->key;
    if (x != y) return x < y ? 1 : -1;
    return ((const ranked *)a)->index - ((const ranked *)b)->index; /* stable order on ties */
}

static void encode(const cs_splats *s, int i, uint8_t *rec)
{
    float ls[3], op;
    cs_splats_baked_row(s, i, ls, &op);
    float f[6];
    for (int c = 0; c < 3; c++) f[c] = s->means[i * 3 + c], f[3 + c] = expf(ls[c]);
    memcpy(rec, f, sizeof f);
    const float *dc = s->sh + (size_t)i * CS_SH_COEFFS(s->sh_degree) * 3;
    for (int c = 0; c < 3; c++) rec[24 + c] = cs_u8_round((0.5f + SH_C0 * dc[c]) * 255.0f);
    rec[27] = cs_u8_round(255.0f / (1.0f + expf(-op)));
    const float *q = s->quats + i * 4;
    float n = sqrtf(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (int c = 0; c < 4; c++) rec[28 + c] = n > 0 ? cs_u8_round(q[c] / n * 128.0f + 128.0f) : (c ? 128 : 255);
}

int cs_splat32_write(const char *path, const cs_splats *s)
{
    size_t n = s->n > 0 ? (size_t)s->n : 0;
    ranked *order = malloc((n ? n : 1) * sizeof *order);
    uint8_t *buf = malloc((n ? n : 1) * CS_SPLAT32_BYTES);
    if (!order || !buf) {
        free(order);
        free(buf);
        return cs_fail("out of host memory (.splat of %d Gaussians)", s->n);
    }
    for (size_t i = 0; i < n; i++) {
        float ls[3], op;
        cs_splats_baked_row(s, (int)i, ls, &op);
        order[i].key = expf(ls[0] + ls[1] + ls[2]) / (1.0f + expf(-op));
        order[i].index = (int)i;
    }
    qsort(order, n, sizeof *order, by_key_desc);
    for (size_t i = 0; i < n; i++) encode(s, order[i].index, buf + i * CS_SPLAT32_BYTES);
    int rc = cs_write_file_atomic(path, buf, n * CS_SPLAT32_BYTES);
    free(order);
    free(buf);
    return rc;
}

int cs_splat32_read(const char *path, cs_splats *out)
{
    memset(out, 0, sizeof *out);
    size_t len;
    uint8_t *buf = (uint8_t *)cs_read_file(path, &len);
    if (!buf) return -1;
    /* no header: a model of no Gaussians is an empty file, as clsplat writes it */
    if (len % CS_SPLAT32_BYTES || len / CS_SPLAT32_BYTES > 0x7fffffff) {
        free(buf);
        return cs_fail("%s: a .splat file is whole 32-byte records; this one is %zu bytes", path, len);
    }
    int n = (int)(len / CS_SPLAT32_BYTES);
    if (cs_splats_alloc(out, n, 0, 0)) {
        free(buf);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        const uint8_t *rec = buf + (size_t)i * CS_SPLAT32_BYTES;
        float f[6];
        memcpy(f, rec, sizeof f);
        for (int c = 0; c < 6; c++) {
            if (!isfinite(f[c]) || (c >= 3 && f[c] < 0)) {
                cs_fail("%s: Gaussian %d has a %s %g", path, i, c < 3 ? "position" : "scale", f[c]);
                cs_splats_free(out);
                free(buf);
                return -1;
            }
        }
        for (int c = 0; c < 3; c++) {
            out->means[i * 3 + c] = f[c];
            out->log_scales[i * 3 + c] = logf(fmaxf(f[3 + c], 1e-30f));
            out->sh[i * 3 + c] = (rec[24 + c] / 255.0f - 0.5f) / SH_C0;
        }
        out->logit_opacity[i] = cs_logit_u8(rec[27]);
        float q[4], norm = 0;
        for (int c = 0; c < 4; c++) q[c] = (rec[28 + c] - 128.0f) / 128.0f, norm += q[c] * q[c];
        norm = sqrtf(norm);
        for (int c = 0; c < 4; c++) out->quats[i * 4 + c] = norm > 0 ? q[c] / norm : (c == 0);
    }
    free(buf);
    return 0;
}
