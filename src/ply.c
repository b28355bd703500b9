/* ply: graphdeco-layout PLY read/write (x y z nx ny nz f_dc_* f_rest_* opacity scale_* rot_*
 * [filter_3D]); f_rest is channel-major: f_rest_{c*(K-1) + (k-1)} = sh[k][c]. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ply.h"
#include "util.h"

int cs_splats_alloc(cs_splats *s, int n, int deg, int with_filter)
{
    memset(s, 0, sizeof *s);
    size_t N = n > 0 ? (size_t)n : 1;
    int K = CS_SH_COEFFS(deg);
    s->n = n;
    s->sh_degree = deg;
    s->means = calloc(N * 3, sizeof(float));
    s->log_scales = calloc(N * 3, sizeof(float));
    s->quats = calloc(N * 4, sizeof(float));
    s->logit_opacity = calloc(N, sizeof(float));
    s->sh = calloc(N * K * 3, sizeof(float));
    if (with_filter) s->filter_3d = calloc(N, sizeof(float));
    if (!s->means || !s->log_scales || !s->quats || !s->logit_opacity || !s->sh || (with_filter && !s->filter_3d)) {
        cs_splats_free(s);
        return cs_fail("out of host memory for %d Gaussians", n);
    }
    return 0;
}

void cs_splats_free(cs_splats *s)
{
    free(s->means);
    free(s->log_scales);
    free(s->quats);
    free(s->logit_opacity);
    free(s->sh);
    free(s->filter_3d);
    memset(s, 0, sizeof *s);
}

/* ---- reading -------------------------------------------------------------------------- */

enum { P_I8, P_U8, P_I16, P_U16, P_I32, P_U32, P_F32, P_F64 };
static const struct { const char *a, *b; int size; } PTYPES[] = {
    {"char", "int8", 1}, {"uchar", "uint8", 1}, {"short", "int16", 2}, {"ushort", "uint16", 2},
    {"int", "int32", 4}, {"uint", "uint32", 4}, {"float", "float32", 4}, {"double", "float64", 8},
};

typedef struct {
    char name[64];
    int type;
    int offset;
} ply_prop;

static double read_scalar(const unsigned char *p, int type, int swap)
{
    unsigned char b[8];
    int sz = PTYPES[type].size;
    for (int i = 0; i < sz; i++) b[i] = swap ? p[sz - 1 - i] : p[i];
    switch (type) {
    case P_I8: return (double)(int8_t)b[0];
    case P_U8: return b[0];
    case P_I16: { int16_t v; memcpy(&v, b, 2); return v; }
    case P_U16: { uint16_t v; memcpy(&v, b, 2); return v; }
    case P_I32: { int32_t v; memcpy(&v, b, 4); return v; }
    case P_U32: { uint32_t v; memcpy(&v, b, 4); return v; }
    case P_F32: { float v; memcpy(&v, b, 4); return v; }
    default: { double v; memcpy(&v, b, 8); return v; }
    }
}

static int find_prop(const ply_prop *props, int np, const char *name)
{
    for (int i = 0; i < np; i++)
        if (strcmp(props[i].name, name) == 0) return i;
    return -1;
}

int cs_ply_read(const char *path, cs_splats *out)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *data = cs_read_file(path, &len);
    if (!data) return -1;
    int ret = -1;
    ply_prop *props = NULL;
    int np = 0, cap = 0, format = -1; /* 0 ascii, 1 binary LE, 2 binary BE */
    long nvert = -1;
    int in_vertex = 0, elements_before = 0, line_no = 0;
    char *p = data, *end = data + len;
    if (len < 4 || strncmp(data, "ply", 3) != 0 || (data[3] != '\n' && data[3] != '\r')) {
        cs_fail("%s: not a PLY file (missing 'ply' magic)", path);
        goto done;
    }
    /* header */
    for (;;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            cs_fail("%s: truncated header (no end_header)", path);
            goto done;
        }
        line_no++;
        char line[512];
        size_t ll = (size_t)(nl - p);
        if (ll >= sizeof line) ll = sizeof line - 1;
        memcpy(line, p, ll);
        line[ll] = '\0';
        if (ll && line[ll - 1] == '\r') line[ll - 1] = '\0';
        p = nl + 1;
        char w1[64] = "", w2[64] = "", w3[64] = "";
        int nw = sscanf(line, "%63s %63s %63s", w1, w2, w3);
        if (nw <= 0 || strcmp(w1, "comment") == 0 || strcmp(w1, "obj_info") == 0 || strcmp(w1, "ply") == 0) continue;
        if (strcmp(w1, "end_header") == 0) break;
        if (strcmp(w1, "format") == 0) {
            if (strcmp(w2, "ascii") == 0) format = 0;
            else if (strcmp(w2, "binary_little_endian") == 0) format = 1;
            else if (strcmp(w2, "binary_big_endian") == 0) format = 2;
            else {
                cs_fail("%s: header line %d: unknown format '%s'", path, line_no, w2);
                goto done;
            }
        } else if (strcmp(w1, "element") == 0) {
            if (nw < 3) {
                cs_fail("%s: header line %d: malformed element line", path, line_no);
                goto done;
            }
            char *e;
            long cnt = strtol(w3, &e, 10);
            if (*e || cnt < 0) {
                cs_fail("%s: header line %d: bad element count '%s'", path, line_no, w3);
                goto done;
            }
            in_vertex = strcmp(w2, "vertex") == 0;
            if (in_vertex) nvert = cnt;
            else if (nvert < 0 && cnt > 0) elements_before = 1;
        } else if (strcmp(w1, "property") == 0) {
            if (!in_vertex) continue;
            if (strcmp(w2, "list") == 0) {
                cs_fail("%s: header line %d: list properties in 'vertex' are not supported", path, line_no);
                goto done;
            }
            int t = -1;
            for (int i = 0; i < 8; i++)
                if (strcmp(w2, PTYPES[i].a) == 0 || strcmp(w2, PTYPES[i].b) == 0) t = i;
            if (t < 0 || nw < 3) {
                cs_fail("%s: header line %d: unknown property type '%s'", path, line_no, w2);
                goto done;
            }
            if (np == cap) {
                cap = cap ? cap * 2 : 64;
                ply_prop *np2 = realloc(props, sizeof *props * cap);
                if (!np2) {
                    cs_fail("out of host memory");
                    goto done;
                }
                props = np2;
            }
            snprintf(props[np].name, sizeof props[np].name, "%s", w3);
            props[np].type = t;
            props[np].offset = np ? props[np - 1].offset + PTYPES[props[np - 1].type].size : 0;
            np++;
        } else {
            cs_fail("%s: header line %d: unexpected '%s'", path, line_no, w1);
            goto done;
        }
    }
    if (format < 0 || nvert < 0) {
        cs_fail("%s: header lacks %s", path, format < 0 ? "a format line" : "a vertex element");
        goto done;
    }
    if (elements_before) {
        cs_fail("%s: elements before 'vertex' are not supported", path);
        goto done;
    }
    if (nvert > 200000000) {
        cs_fail("%s: implausible vertex count %ld", path, nvert);
        goto done;
    }
    static const char *req[] = {"x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity",
                                "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"};
    int idx[14];
    for (int i = 0; i < 14; i++) {
        idx[i] = find_prop(props, np, req[i]);
        if (idx[i] < 0) {
            cs_fail("%s: missing property '%s' (not a Gaussian splat PLY?)", path, req[i]);
            goto done;
        }
    }
    int nrest = 0;
    while (1) {
        char nm[32];
        snprintf(nm, sizeof nm, "f_rest_%d", nrest);
        if (find_prop(props, np, nm) < 0) break;
        nrest++;
    }
    int deg = -1;
    for (int d = 0; d <= 3; d++)
        if (3 * (CS_SH_COEFFS(d) - 1) == nrest) deg = d;
    if (deg < 0) {
        cs_fail("%s: %d f_rest properties do not match any SH degree 0..3 (0, 9, 24 or 45)", path, nrest);
        goto done;
    }
    int ifilt = find_prop(props, np, "filter_3D");
    if (cs_splats_alloc(out, (int)nvert, deg, ifilt >= 0)) goto done;
    int K = CS_SH_COEFFS(deg);
    int rowsz = np ? props[np - 1].offset + PTYPES[props[np - 1].type].size : 0;
    double *row = malloc(sizeof(double) * (np ? np : 1));
    if (!row) {
        cs_fail("out of host memory");
        goto done;
    }
    int *rest_idx = malloc(sizeof(int) * (nrest ? nrest : 1));
    for (int j = 0; j < nrest; j++) {
        char nm[32];
        snprintf(nm, sizeof nm, "f_rest_%d", j);
        rest_idx[j] = find_prop(props, np, nm);
    }
    for (long v = 0; v < nvert; v++) {
        if (format == 0) {
            for (int j = 0; j < np; j++) {
                while (p < end && isspace((unsigned char)*p)) p++;
                char *e;
                row[j] = strtod(p, &e);
                if (e == p) {
                    cs_fail("%s: vertex %ld: expected %d numbers (truncated or malformed ASCII data)", path, v, np);
                    free(row);
                    free(rest_idx);
                    goto done;
                }
                p = e;
            }
        } else {
            if ((size_t)(end - p) < (size_t)rowsz) {
                cs_fail("%s: truncated: data ends at vertex %ld of %ld", path, v, nvert);
                free(row);
                free(rest_idx);
                goto done;
            }
            for (int j = 0; j < np; j++) row[j] = read_scalar((unsigned char *)p + props[j].offset, props[j].type, format == 2);
            p += rowsz;
        }
        for (int c = 0; c < 3; c++) {
            out->means[v * 3 + c] = (float)row[idx[c]];
            out->sh[(size_t)v * K * 3 + c] = (float)row[idx[3 + c]];
            out->log_scales[v * 3 + c] = (float)row[idx[7 + c]];
        }
        out->logit_opacity[v] = (float)row[idx[6]];
        for (int c = 0; c < 4; c++) out->quats[v * 4 + c] = (float)row[idx[10 + c]];
        for (int c = 0; c < 3; c++)
            for (int k = 1; k < K; k++) out->sh[(size_t)v * K * 3 + k * 3 + c] = (float)row[rest_idx[c * (K - 1) + (k - 1)]];
        if (ifilt >= 0) out->filter_3d[v] = (float)row[ifilt];
    }
    free(row);
    free(rest_idx);
    ret = 0;
done:
    if (ret) cs_splats_free(out);
    free(props);
    free(data);
    return ret;
}

/* ---- writing -------------------------------------------------------------------------- */

int cs_ply_write(const char *path, const cs_splats *s, int bake)
{
    int K = CS_SH_COEFFS(s->sh_degree);
    int with_filter = s->filter_3d && !bake;
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return -1;
    FILE *f = af.f;
    fprintf(f, "ply\nformat binary_little_endian 1.0\nelement vertex %d\n", s->n);
    const char *head[] = {"x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"};
    for (int i = 0; i < 9; i++) fprintf(f, "property float %s\n", head[i]);
    for (int j = 0; j < 3 * (K - 1); j++) fprintf(f, "property float f_rest_%d\n", j);
    fprintf(f, "property float opacity\n");
    for (int j = 0; j < 3; j++) fprintf(f, "property float scale_%d\n", j);
    for (int j = 0; j < 4; j++) fprintf(f, "property float rot_%d\n", j);
    if (with_filter) fprintf(f, "property float filter_3D\n");
    fprintf(f, "end_header\n");
    int nf = 9 + 3 * (K - 1) + 1 + 3 + 4 + with_filter;
    float *row = malloc(sizeof(float) * nf);
    if (!row) {
        cs_atomic_abort(&af);
        return cs_fail("out of host memory");
    }
    for (int i = 0; i < s->n; i++) {
        int o = 0;
        const float *sh = s->sh + (size_t)i * K * 3;
        for (int c = 0; c < 3; c++) row[o++] = s->means[i * 3 + c];
        for (int c = 0; c < 3; c++) row[o++] = 0.0f;
        for (int c = 0; c < 3; c++) row[o++] = sh[c];
        for (int c = 0; c < 3; c++)
            for (int k = 1; k < K; k++) row[o++] = sh[k * 3 + c];
        float op = s->logit_opacity[i];
        float ls[3] = {s->log_scales[i * 3], s->log_scales[i * 3 + 1], s->log_scales[i * 3 + 2]};
        if (bake && s->filter_3d) {
            /* mip-splatting: s' = sqrt(s^2 + f^2), o' = o * sqrt(prod s^2 / prod s'^2) */
            double f2 = (double)s->filter_3d[i] * s->filter_3d[i], ratio = 1.0;
            for (int c = 0; c < 3; c++) {
                double s2 = exp(2.0 * ls[c]);
                ratio *= s2 / (s2 + f2);
                ls[c] = (float)(0.5 * log(s2 + f2));
            }
            double o = 1.0 / (1.0 + exp(-(double)op)) * sqrt(ratio);
            o = o < 1e-12 ? 1e-12 : o > 1 - 1e-7 ? 1 - 1e-7 : o;
            op = (float)log(o / (1.0 - o));
        }
        row[o++] = op;
        for (int c = 0; c < 3; c++) row[o++] = ls[c];
        for (int c = 0; c < 4; c++) row[o++] = s->quats[i * 4 + c];
        if (with_filter) row[o++] = s->filter_3d[i];
        if (fwrite(row, sizeof(float), nf, f) != (size_t)nf) break;
    }
    free(row);
    return cs_atomic_commit(&af);
}
