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

/* A face element's layout: its properties in order, scalars and lists, one of them the corners'
   index list */
enum { CS_PLY_FACE_PROPS = 16 };
typedef struct {
    int list;       /* a list (count, then values) or a scalar */
    int count_type; /* a list's count */
    int type;       /* the values' */
} ply_face_prop;
typedef struct {
    long n;               /* -1: no face element */
    ply_face_prop props[CS_PLY_FACE_PROPS];
    int np;
    int index;            /* which property holds the corners (-1: none) */
    int elements_between; /* an element with rows between 'vertex' and 'face' */
} ply_faces;

/* The parsed header: vertex properties (offsets within a binary row), format, count; faces. */
typedef struct {
    ply_prop *props;
    int np, cap;
    int format;          /* 0 ascii, 1 binary LE, 2 binary BE, -1 unset */
    long nvert;          /* -1 unset */
    int in_vertex, in_face, elements_before;
    ply_faces faces;
} ply_header;

static int add_prop(ply_header *h, const char *name, int type)
{
    if (h->np == h->cap) {
        int cap = h->cap ? h->cap * 2 : 64;
        ply_prop *np2 = realloc(h->props, sizeof *h->props * cap);
        if (!np2) return cs_fail("out of host memory");
        h->props = np2, h->cap = cap;
    }
    ply_prop *q = &h->props[h->np];
    snprintf(q->name, sizeof q->name, "%s", name);
    q->type = type;
    q->offset = h->np ? h->props[h->np - 1].offset + PTYPES[h->props[h->np - 1].type].size : 0;
    h->np++;
    return 0;
}

static int ptype_of(const char *name)
{
    for (int i = 0; i < 8; i++)
        if (!strcmp(name, PTYPES[i].a) || !strcmp(name, PTYPES[i].b)) return i;
    return -1;
}

/* a property line of the face element (words W, NW of them) */
static int face_property(const char *path, int line_no, int nw, char w[5][64], ply_faces *f)
{
    if (f->np == CS_PLY_FACE_PROPS)
        return cs_fail("%s: header line %d: more than %d face properties", path, line_no, CS_PLY_FACE_PROPS);
    ply_face_prop *q = &f->props[f->np];
    q->list = !strcmp(w[1], "list");
    q->count_type = q->list && nw == 5 ? ptype_of(w[2]) : -1;
    q->type = ptype_of(q->list ? (nw == 5 ? w[3] : "") : w[1]);
    if (q->type < 0 || (q->list && q->count_type < 0) || nw < 3)
        return cs_fail("%s: header line %d: a malformed face property", path, line_no);
    const char *name = q->list ? w[4] : w[2];
    int corners = q->list && (!strcmp(name, "vertex_indices") || !strcmp(name, "vertex_index"));
    if (q->list && (q->count_type >= P_F32 || (corners && q->type >= P_F32)))
        return cs_fail("%s: header line %d: a face list needs an integer count%s", path, line_no,
                       corners ? " and integer indices" : "");
    if (corners && f->index >= 0) return cs_fail("%s: header line %d: a second list of corners", path, line_no);
    if (corners) f->index = f->np;
    f->np++;
    return 0;
}

/* One header line (words W, NW of them); 1 at end_header. */
static int header_line(const char *path, int line_no, int nw, char w[5][64], ply_header *h)
{
    const char *w1 = w[0], *w2 = w[1], *w3 = w[2];
    if (nw <= 0 || !strcmp(w1, "comment") || !strcmp(w1, "obj_info") || !strcmp(w1, "ply")) return 0;
    if (!strcmp(w1, "end_header")) return 1;
    if (!strcmp(w1, "format")) {
        h->format = !strcmp(w2, "ascii") ? 0 : !strcmp(w2, "binary_little_endian") ? 1
                  : !strcmp(w2, "binary_big_endian") ? 2 : -2;
        if (h->format == -2) return cs_fail("%s: header line %d: unknown format '%s'", path, line_no, w2);
    } else if (!strcmp(w1, "element")) {
        if (nw < 3) return cs_fail("%s: header line %d: malformed element line", path, line_no);
        char *e;
        long cnt = strtol(w3, &e, 10);
        if (*e || cnt < 0) return cs_fail("%s: header line %d: bad element count '%s'", path, line_no, w3);
        h->in_vertex = !strcmp(w2, "vertex");
        h->in_face = !strcmp(w2, "face") && h->faces.n < 0;
        if (h->in_vertex) h->nvert = cnt;
        else if (h->in_face) h->faces.n = cnt;
        else if (h->nvert < 0 && cnt > 0) h->elements_before = 1;
        else if (h->faces.n < 0 && cnt > 0) h->faces.elements_between = 1;
    } else if (!strcmp(w1, "property")) {
        if (h->in_face) return face_property(path, line_no, nw, w, &h->faces);
        if (!h->in_vertex) return 0;
        if (!strcmp(w2, "list"))
            return cs_fail("%s: header line %d: list properties in 'vertex' are not supported", path, line_no);
        int t = ptype_of(w2);
        if (t < 0 || nw < 3) return cs_fail("%s: header line %d: unknown property type '%s'", path, line_no, w2);
        return add_prop(h, w3, t);
    } else {
        return cs_fail("%s: header line %d: unexpected '%s'", path, line_no, w1);
    }
    return 0;
}

/* Parses the header of DATA (LEN bytes); *BODY is set to the first data byte. */
static int parse_header(const char *path, char *data, size_t len, ply_header *h, char **body)
{
    memset(h, 0, sizeof *h);
    h->format = -1, h->nvert = -1, h->faces.n = -1, h->faces.index = -1;
    if (len < 4 || strncmp(data, "ply", 3) != 0 || (data[3] != '\n' && data[3] != '\r'))
        return cs_fail("%s: not a PLY file (missing 'ply' magic)", path);
    char *p = data, *end = data + len;
    for (int line_no = 1;; line_no++) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return cs_fail("%s: truncated header (no end_header)", path);
        char line[512];
        size_t ll = (size_t)(nl - p);
        if (ll >= sizeof line) ll = sizeof line - 1;
        memcpy(line, p, ll);
        line[ll] = '\0';
        if (ll && line[ll - 1] == '\r') line[ll - 1] = '\0';
        p = nl + 1;
        char w[5][64] = {"", "", "", "", ""};
        int nw = sscanf(line, "%63s %63s %63s %63s %63s", w[0], w[1], w[2], w[3], w[4]);
        int r = header_line(path, line_no, nw, w, h);
        if (r < 0) return -1;
        if (r == 1) break;
    }
    if (h->format < 0 || h->nvert < 0)
        return cs_fail("%s: header lacks %s", path, h->format < 0 ? "a format line" : "a vertex element");
    if (h->elements_before) return cs_fail("%s: elements before 'vertex' are not supported", path);
    if (h->nvert > 200000000) return cs_fail("%s: implausible vertex count %ld", path, h->nvert);
    *body = p;
    return 0;
}

/* Where each splat field is among the properties: the 14 required ones, f_rest_*, filter_3D. */
typedef struct {
    int req[14];   /* x y z, f_dc_0..2, opacity, scale_0..2, rot_0..3 */
    int *rest;     /* f_rest_j */
    int nrest, degree, filt;
} ply_map;

static int map_props(const char *path, const ply_header *h, ply_map *m)
{
    static const char *req[] = {"x", "y", "z", "f_dc_0", "f_dc_1", "f_dc_2", "opacity",
                                "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"};
    memset(m, 0, sizeof *m);
    for (int i = 0; i < 14; i++)
        if ((m->req[i] = find_prop(h->props, h->np, req[i])) < 0)
            return cs_fail("%s: missing property '%s' (not a Gaussian splat PLY?)", path, req[i]);
    char nm[32];
    for (;; m->nrest++) {
        snprintf(nm, sizeof nm, "f_rest_%d", m->nrest);
        if (find_prop(h->props, h->np, nm) < 0) break;
    }
    m->degree = -1;
    for (int d = 0; d <= 3; d++)
        if (3 * (CS_SH_COEFFS(d) - 1) == m->nrest) m->degree = d;
    if (m->degree < 0)
        return cs_fail("%s: %d f_rest properties do not match any SH degree 0..3 (0, 9, 24 or 45)", path, m->nrest);
    m->rest = malloc(sizeof(int) * (m->nrest ? m->nrest : 1));
    if (!m->rest) return cs_fail("out of host memory");
    for (int j = 0; j < m->nrest; j++) {
        snprintf(nm, sizeof nm, "f_rest_%d", j);
        m->rest[j] = find_prop(h->props, h->np, nm);
    }
    m->filt = find_prop(h->props, h->np, "filter_3D");
    return 0;
}

/* the next number of a row at *P: of TYPE in binary, any in ASCII; -1 where the data ends */
static int next_number(const ply_header *h, char **p, const char *end, int type, double *v)
{
    if (h->format == 0) {
        while (*p < end && isspace((unsigned char)**p)) (*p)++;
        char *e;
        *v = strtod(*p, &e);
        if (e == *p) return -1;
        *p = e;
        return 0;
    }
    if (end - *p < PTYPES[type].size) return -1;
    *v = read_scalar((unsigned char *)*p, type, h->format == 2);
    *p += PTYPES[type].size;
    return 0;
}

/* Reads vertex V's properties into ROW from *P (advanced past them). */
static int read_row(const char *path, const ply_header *h, long v, char **p, const char *end, double *row)
{
    if (h->format == 0) {
        for (int j = 0; j < h->np; j++)
            if (next_number(h, p, end, P_F64, &row[j]))
                return cs_fail("%s: vertex %ld: expected %d numbers (truncated or malformed ASCII data)", path, v,
                               h->np);
        return 0;
    }
    for (int j = 0; j < h->np; j++)
        row[j] = read_scalar((unsigned char *)*p + h->props[j].offset, h->props[j].type, h->format == 2);
    *p += h->props[h->np - 1].offset + PTYPES[h->props[h->np - 1].type].size;
    return 0;
}

static void store_row(const ply_map *m, const double *row, long v, cs_splats *out)
{
    int K = CS_SH_COEFFS(m->degree);
    for (int c = 0; c < 3; c++) {
        out->means[v * 3 + c] = (float)row[m->req[c]];
        out->sh[(size_t)v * K * 3 + c] = (float)row[m->req[3 + c]];
        out->log_scales[v * 3 + c] = (float)row[m->req[7 + c]];
    }
    out->logit_opacity[v] = (float)row[m->req[6]];
    for (int c = 0; c < 4; c++) out->quats[v * 4 + c] = (float)row[m->req[10 + c]];
    for (int c = 0; c < 3; c++)
        for (int k = 1; k < K; k++) out->sh[(size_t)v * K * 3 + k * 3 + c] = (float)row[m->rest[c * (K - 1) + (k - 1)]];
    if (m->filt >= 0) out->filter_3d[v] = (float)row[m->filt];
}

/* Whether the HAVE bytes after the header can hold H's vertices: all of the binary data, or a
   number and a separator per ASCII property; checked before anything is allocated for them. */
static int check_body(const char *path, const ply_header *h, size_t have)
{
    size_t rowsz = (size_t)(h->props[h->np - 1].offset + PTYPES[h->props[h->np - 1].type].size);
    if (h->format != 0 && have / rowsz < (size_t)h->nvert)
        return cs_fail("%s: truncated: data ends at vertex %zu of %ld", path, have / rowsz, h->nvert);
    if (h->format == 0 && have / 2 / (size_t)h->np < (size_t)h->nvert)
        return cs_fail("%s: truncated: %zu bytes of ASCII data cannot hold %ld vertices of %d properties", path, have,
                       h->nvert, h->np);
    return 0;
}

int cs_ply_read(const char *path, cs_splats *out)
{
    memset(out, 0, sizeof *out);
    size_t len;
    char *data = cs_read_file(path, &len), *p = NULL;
    if (!data) return -1;
    ply_header h;
    ply_map m = {0};
    double *row = NULL;
    int ret = -1;
    if (parse_header(path, data, len, &h, &p) || map_props(path, &h, &m)) goto done;
    if (check_body(path, &h, (size_t)(data + len - p))) goto done;
    row = malloc(sizeof(double) * h.np);
    if (!row) {
        cs_fail("out of host memory");
        goto done;
    }
    if (cs_splats_alloc(out, (int)h.nvert, m.degree, m.filt >= 0)) goto done;
    for (long v = 0; v < h.nvert; v++) {
        if (read_row(path, &h, v, &p, data + len, row)) goto done;
        store_row(&m, row, v, out);
    }
    int first;
    long bad = cs_splats_count_nonfinite(out, &first);
    if (bad) {
        cs_fail("%s: %ld Gaussians have NaN or Inf values (the first is vertex %d)", path, bad, first);
        goto done;
    }
    ret = 0;
done:
    if (ret) cs_splats_free(out);
    free(row);
    free(m.rest);
    free(h.props);
    free(data);
    return ret;
}

/* H's vertices from *P: coordinates (finite) into XYZ, colours into RGB (bytes, or floats in
   [0, 1]; grey without them) */
static int read_points_body(const char *path, const ply_header *h, char **p, const char *end, float *xyz, uint8_t *rgb)
{
    static const char *names[6] = {"x", "y", "z", "red", "green", "blue"};
    int col[6];
    for (int i = 0; i < 6; i++) col[i] = find_prop(h->props, h->np, names[i]);
    if (col[0] < 0 || col[1] < 0 || col[2] < 0) return cs_fail("%s: the vertices have no x, y, z properties", path);
    if (check_body(path, h, (size_t)(end - *p))) return -1;
    double *row = malloc(sizeof(double) * h->np);
    if (!row) return cs_fail("out of host memory (%ld points of %s)", h->nvert, path);
    for (long v = 0; v < h->nvert; v++) {
        if (read_row(path, h, v, p, end, row)) return free(row), -1;
        for (int c = 0; c < 3; c++) {
            xyz[v * 3 + c] = (float)row[col[c]];
            if (!isfinite(xyz[v * 3 + c]))
                return free(row), cs_fail("%s: vertex %ld has a coordinate that is not finite", path, v);
            double k = col[3 + c] < 0 ? 128 : row[col[3 + c]];
            if (col[3 + c] >= 0 && (h->props[col[3 + c]].type == P_F32 || h->props[col[3 + c]].type == P_F64)) k *= 255;
            rgb[v * 3 + c] = (uint8_t)(k < 0 ? 0 : k > 255 ? 255 : k + 0.5);
        }
    }
    free(row);
    return 0;
}

int cs_ply_read_points(const char *path, float **xyz, uint8_t **rgb, int *n)
{
    *xyz = NULL, *rgb = NULL, *n = 0;
    size_t len;
    char *data = cs_read_file(path, &len), *p = NULL;
    if (!data) return -1;
    ply_header h;
    int ret = -1;
    if (parse_header(path, data, len, &h, &p)) goto done;
    *xyz = malloc(sizeof(float) * 3 * (size_t)(h.nvert ? h.nvert : 1));
    *rgb = malloc(3 * (size_t)(h.nvert ? h.nvert : 1));
    if (!*xyz || !*rgb) {
        cs_fail("out of host memory (%ld points of %s)", h.nvert, path);
        goto done;
    }
    if (read_points_body(path, &h, &p, data + len, *xyz, *rgb)) goto done;
    *n = (int)h.nvert;
    ret = 0;
done:
    if (ret) free(*xyz), free(*rgb), *xyz = NULL, *rgb = NULL;
    free(h.props);
    free(data);
    return ret;
}

/* the corners of face K (the values of its index list, C of them at *P) taken in as a fan of
   triangles: *N counted, and written to TRI unless it is NULL */
static int face_corners(const char *path, const ply_header *h, long k, double c, char **p, const char *end, size_t nv,
                        uint32_t *tri, size_t *n)
{
    if (c < 3) return cs_fail("%s: face %ld has %g corners (at least 3)", path, k, c);
    double idx, first = 0, prev = 0;
    for (double j = 0; j < c; j++) {
        if (next_number(h, p, end, h->faces.props[h->faces.index].type, &idx))
            return cs_fail("%s: truncated: the data ends in face %ld of %ld", path, k, h->faces.n);
        if (!(idx >= 0 && idx < (double)nv) || idx != floor(idx))
            return cs_fail("%s: face %ld: corner %g is not one of the %zu vertices", path, k, idx, nv);
        if (j >= 2 && tri) {
            uint32_t *o = tri + 3 * *n;
            o[0] = (uint32_t)first, o[1] = (uint32_t)prev, o[2] = (uint32_t)idx;
        }
        *n += j >= 2;
        if (j == 0) first = idx;
        prev = idx;
    }
    return 0;
}

/* H's faces from P, each polygon as a fan of triangles of corners below NV: counted into *NT,
   and written to TRI unless it is NULL (a first pass checks and counts, a second fills); the
   other properties, scalars and lists, are read past */
static int read_faces(const char *path, const ply_header *h, char *p, const char *end, size_t nv, uint32_t *tri,
                      size_t *nt)
{
    const ply_faces *f = &h->faces;
    size_t n = 0;
    for (long k = 0; k < f->n; k++)
        for (int q = 0; q < f->np; q++) {
            const ply_face_prop *fp = &f->props[q];
            double c, v;
            if (next_number(h, &p, end, fp->list ? fp->count_type : fp->type, &c))
                return cs_fail("%s: truncated: the data ends %s face %ld of %ld", path, q ? "in" : "at", k, f->n);
            if (q == f->index) {
                if (face_corners(path, h, k, c, &p, end, nv, tri, &n)) return -1;
                continue;
            }
            if (fp->list && (c < 0 || c != floor(c))) return cs_fail("%s: face %ld: a list of %g values", path, k, c);
            for (double j = 0; fp->list && j < c; j++)
                if (next_number(h, &p, end, fp->type, &v))
                    return cs_fail("%s: truncated: the data ends in face %ld of %ld", path, k, f->n);
        }
    *nt = n;
    return 0;
}

/* what keeps H's faces from being read, as a message; 0 when nothing does */
static int check_faces(const char *path, const ply_header *h)
{
    const ply_faces *f = &h->faces;
    if (f->n < 0) return cs_fail("%s: no 'face' element: a point cloud, not a mesh", path);
    if (f->index < 0) return cs_fail("%s: the 'face' element has no vertex_indices list", path);
    if (f->elements_between) return cs_fail("%s: elements between 'vertex' and 'face' are not supported", path);
    return 0;
}

int cs_ply_read_mesh(const char *path, float **xyz, uint8_t **rgb, size_t *nv, uint32_t **tri, size_t *nt)
{
    *xyz = NULL, *rgb = NULL, *tri = NULL, *nv = *nt = 0;
    size_t len;
    char *data = cs_read_file(path, &len), *p = NULL;
    if (!data) return -1;
    ply_header h;
    int ret = -1;
    if (parse_header(path, data, len, &h, &p) || check_faces(path, &h)) goto done;
    *xyz = malloc(sizeof(float) * 3 * (size_t)(h.nvert ? h.nvert : 1));
    *rgb = malloc(3 * (size_t)(h.nvert ? h.nvert : 1));
    if (!*xyz || !*rgb) {
        cs_fail("out of host memory (%ld vertices of %s)", h.nvert, path);
        goto done;
    }
    if (read_points_body(path, &h, &p, data + len, *xyz, *rgb)) goto done;
    *nv = (size_t)h.nvert;
    /* a triangle takes at least 1 byte of the file, so the count bounds what is allocated */
    if (read_faces(path, &h, p, data + len, *nv, NULL, nt)) goto done;
    *tri = malloc(sizeof(uint32_t) * 3 * (*nt ? *nt : 1));
    if (!*tri) {
        cs_fail("out of host memory (%zu triangles of %s)", *nt, path);
        goto done;
    }
    if (read_faces(path, &h, p, data + len, *nv, *tri, nt)) goto done;
    ret = 0;
done:
    if (ret) free(*xyz), free(*rgb), free(*tri), *xyz = NULL, *rgb = NULL, *tri = NULL, *nv = *nt = 0;
    free(h.props);
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
    int n_extra = 0;
    for (int e = 0; e < s->n_extra; e++) {
        for (int j = 0; j < s->extra[e].width; j++) fprintf(f, "property float %s_%d\n", s->extra[e].name, j);
        n_extra += s->extra[e].width;
    }
    fprintf(f, "end_header\n");
    int nf = 9 + 3 * (K - 1) + 1 + 3 + 4 + with_filter + n_extra;
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
        if (bake) cs_splats_baked_row(s, i, ls, &op);
        row[o++] = op;
        for (int c = 0; c < 3; c++) row[o++] = ls[c];
        for (int c = 0; c < 4; c++) row[o++] = s->quats[i * 4 + c];
        if (with_filter) row[o++] = s->filter_3d[i];
        for (int e = 0; e < s->n_extra; e++)
            for (int j = 0; j < s->extra[e].width; j++) row[o++] = s->extra[e].values[(size_t)i * s->extra[e].width + j];
        if (fwrite(row, sizeof(float), nf, f) != (size_t)nf) break;
    }
    free(row);
    return cs_atomic_commit(&af);
}
