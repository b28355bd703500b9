/* mesh: welding, simplification (meshoptimizer) and PLY output of a triangle mesh. */
#include "mesh.h"

#include <meshoptimizer.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_tex.h"
#include "ply.h"
#include "util.h"

void cs_mesh_free(cs_mesh *m)
{
    free(m->pos), free(m->rgb), free(m->tri), free(m->tex);
    memset(m, 0, sizeof *m);
}

static int alloc_mesh(cs_mesh *m, size_t nv, size_t nt)
{
    memset(m, 0, sizeof *m);
    m->pos = malloc(sizeof(float) * 3 * (nv ? nv : 1));
    m->rgb = malloc(3 * (nv ? nv : 1));
    m->tri = malloc(sizeof(uint32_t) * 3 * (nt ? nt : 1));
    m->nv = nv, m->nt = nt;
    if (m->pos && m->rgb && m->tri) return 0;
    cs_mesh_free(m);
    return cs_fail("out of host memory (a mesh of %zu vertices, %zu triangles)", nv, nt);
}

int cs_mesh_copy(const cs_mesh *src, cs_mesh *dst)
{
    size_t ntex = src->tex ? 3 * (size_t)CS_TEX_NODES(src->tex_r) * src->nt : 0;
    if (alloc_mesh(dst, src->nv, src->nt)) return -1;
    if (ntex && !(dst->tex = malloc(ntex))) {
        cs_mesh_free(dst);
        return cs_fail("out of host memory (a copy of a texture of %zu bytes)", ntex);
    }
    memcpy(dst->pos, src->pos, sizeof(float) * 3 * src->nv), memcpy(dst->rgb, src->rgb, 3 * src->nv);
    memcpy(dst->tri, src->tri, sizeof(uint32_t) * 3 * src->nt);
    if (ntex) memcpy(dst->tex, src->tex, ntex);
    dst->tex_r = src->tex_r;
    return 0;
}

int cs_mesh_weld(const cs_soup_vertex *soup, size_t nt, cs_mesh *m)
{
    memset(m, 0, sizeof *m);
    size_t nc = nt * 3;
    if (nc > 0xffffffffu) return cs_fail("%zu triangles: more than a 32-bit index can weld", nt);
    uint32_t *remap = malloc(sizeof(uint32_t) * (nc ? nc : 1));
    if (!remap) return cs_fail("out of host memory (welding %zu triangles)", nt);
    size_t nv = meshopt_generateVertexRemap(remap, NULL, nc, soup, nc, sizeof *soup);
    if (alloc_mesh(m, nv, nt)) {
        free(remap);
        return -1;
    }
    for (size_t c = 0; c < nc; c++) {
        uint32_t v = remap[c];
        memcpy(&m->pos[3 * v], soup[c].w, 12);
        for (int k = 0; k < 3; k++) m->rgb[3 * v + k] = (uint8_t)(soup[c].w[3] >> (8 * k));
    }
    size_t kept = 0;
    for (size_t t = 0; t < nt; t++) {
        uint32_t a = remap[3 * t], b = remap[3 * t + 1], c = remap[3 * t + 2];
        if (a == b || b == c || a == c) continue;
        m->tri[3 * kept] = a, m->tri[3 * kept + 1] = b, m->tri[3 * kept + 2] = c;
        kept++;
    }
    m->nt = kept;
    free(remap);
    return 0;
}

/* keeps only the vertices the triangles use, in first-use order */
static int compact(cs_mesh *m)
{
    cs_mesh c;
    uint32_t *map = malloc(sizeof(uint32_t) * (m->nv ? m->nv : 1));
    if (!map || alloc_mesh(&c, m->nv, m->nt)) {
        free(map);
        return cs_fail("out of host memory");
    }
    memset(map, 0xff, sizeof(uint32_t) * m->nv);
    size_t nv = 0;
    for (size_t i = 0; i < 3 * m->nt; i++) {
        uint32_t v = m->tri[i];
        if (map[v] == UINT32_MAX) {
            map[v] = (uint32_t)nv;
            memcpy(&c.pos[3 * nv], &m->pos[3 * v], 12);
            memcpy(&c.rgb[3 * nv], &m->rgb[3 * v], 3);
            nv++;
        }
        c.tri[i] = map[v];
    }
    c.nv = nv;
    free(map);
    cs_mesh_free(m);
    *m = c;
    return 0;
}

static uint32_t root_of(uint32_t *parent, uint32_t v)
{
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
}

static int cmp_size_desc(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* each triangle's component root in ROOT (union-find over shared vertices), the component count */
static size_t label_components(const cs_mesh *m, uint32_t *parent, uint32_t *root)
{
    for (size_t v = 0; v < m->nv; v++) parent[v] = (uint32_t)v;
    for (size_t t = 0; t < m->nt; t++) {
        uint32_t a = root_of(parent, m->tri[3 * t]);
        for (int k = 1; k < 3; k++) {
            uint32_t b = root_of(parent, m->tri[3 * t + k]);
            if (a != b) parent[b] = a;
        }
    }
    size_t n = 0;
    for (size_t v = 0; v < m->nv; v++) n += parent[v] == v;
    for (size_t t = 0; t < m->nt; t++) root[t] = root_of(parent, m->tri[3 * t]);
    return n;
}

int cs_mesh_drop_near(cs_mesh *m, const double *centres, int n, double radius, size_t *dropped)
{
    size_t nt = 0, before = m->nt;
    double r2 = radius * radius;
    for (size_t t = 0; t < m->nt; t++) {
        int near = 0;
        for (int k = 0; k < 3 && !near; k++) {
            const float *p = m->pos + 3 * (size_t)m->tri[3 * t + k];
            for (int c = 0; c < n && !near; c++) {
                double dx = p[0] - centres[3 * c], dy = p[1] - centres[3 * c + 1], dz = p[2] - centres[3 * c + 2];
                near = dx * dx + dy * dy + dz * dz < r2;
            }
        }
        if (!near) memmove(&m->tri[3 * nt++], &m->tri[3 * t], 12);
    }
    m->nt = nt;
    *dropped = before - nt;
    return *dropped ? compact(m) : 0;
}

int cs_mesh_keep_largest(cs_mesh *m, size_t keep, size_t *components)
{
    *components = 0;
    if (m->nt == 0) return 0;
    uint32_t *parent = malloc(sizeof(uint32_t) * (m->nv ? m->nv : 1)), *root = malloc(sizeof(uint32_t) * m->nt);
    size_t *count = calloc(m->nv ? m->nv : 1, sizeof(size_t)), *sizes = NULL;
    if (!parent || !root || !count) goto oom;
    *components = label_components(m, parent, root);
    for (size_t t = 0; t < m->nt; t++) count[root[t]]++;
    if (*components <= keep) goto done;
    /* the keep-th largest component's size; ties with it are kept too */
    if (!(sizes = malloc(sizeof(size_t) * *components))) goto oom;
    size_t k = 0;
    for (size_t v = 0; v < m->nv; v++)
        if (count[v]) sizes[k++] = count[v];
    qsort(sizes, k, sizeof *sizes, cmp_size_desc);
    size_t least = sizes[keep - 1 < k ? keep - 1 : k - 1], nt = 0;
    for (size_t t = 0; t < m->nt; t++)
        if (count[root[t]] >= least) memmove(&m->tri[3 * nt++], &m->tri[3 * t], 12);
    m->nt = nt;
    free(parent), free(root), free(count), free(sizes);
    return compact(m);
done:
    free(parent), free(root), free(count);
    return 0;
oom:
    free(parent), free(root), free(count), free(sizes);
    return cs_fail("out of host memory (the components of %zu triangles)", m->nt);
}

int cs_mesh_simplify(cs_mesh *m, size_t max_tris, float *error)
{
    *error = 0.f;
    if (m->nt <= max_tris) return 0;
    uint32_t *dst = malloc(sizeof(uint32_t) * 3 * m->nt);
    if (!dst) return cs_fail("out of host memory (simplifying %zu triangles)", m->nt);
    size_t n = meshopt_simplify(dst, m->tri, m->nt * 3, m->pos, m->nv, sizeof(float) * 3, max_tris * 3, 1.f, 0, error);
    if (n > max_tris * 3) /* the topology-keeping pass stopped above the budget */
        n = meshopt_simplifySloppy(dst, m->tri, m->nt * 3, m->pos, m->nv, sizeof(float) * 3, max_tris * 3, 1.f, error);
    memcpy(m->tri, dst, sizeof(uint32_t) * n);
    m->nt = n / 3;
    free(dst);
    return compact(m);
}

int cs_mesh_read_ply(const char *path, cs_mesh *m)
{
    memset(m, 0, sizeof *m);
    if (cs_ply_read_mesh(path, &m->pos, &m->rgb, &m->nv, &m->tri, &m->nt)) return -1;
    size_t n = 0;
    for (size_t t = 0; t < m->nt; t++) {
        const uint32_t *v = m->tri + 3 * t;
        if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2]) continue;
        memmove(m->tri + 3 * n++, v, 3 * sizeof *v);
    }
    m->nt = n;
    if (!compact(m)) return 0;
    cs_mesh_free(m);
    return -1;
}

int cs_mesh_write_ply(const char *path, const cs_mesh *m)
{
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return -1;
    FILE *f = af.f;
    fprintf(f, "ply\nformat binary_little_endian 1.0\ncomment clsplat mesh\nelement vertex %zu\n"
               "property float x\nproperty float y\nproperty float z\n"
               "property uchar red\nproperty uchar green\nproperty uchar blue\n"
               "element face %zu\nproperty list uchar int vertex_indices\nend_header\n",
            m->nv, m->nt);
    for (size_t v = 0; v < m->nv; v++)
        if (fwrite(&m->pos[3 * v], 4, 3, f) != 3 || fwrite(&m->rgb[3 * v], 1, 3, f) != 3) break;
    unsigned char three = 3;
    for (size_t t = 0; t < m->nt; t++)
        if (fwrite(&three, 1, 1, f) != 1 || fwrite(&m->tri[3 * t], 4, 3, f) != 3) break;
    return cs_atomic_commit(&af);
}

static int edge_cmp(const void *a, const void *b)
{
    const uint64_t *x = a, *y = b;
    return *x < *y ? -1 : *x > *y;
}

/* every triangle's edges as (low << 32 | high) vertex pairs, sorted: 3 nt of them, or NULL */
static uint64_t *sorted_edges(const cs_mesh *m)
{
    uint64_t *e = malloc(sizeof(uint64_t) * 3 * (m->nt ? m->nt : 1));
    if (!e) return NULL;
    for (size_t t = 0; t < m->nt; t++)
        for (int k = 0; k < 3; k++) {
            uint64_t a = m->tri[3 * t + k], b = m->tri[3 * t + (k + 1) % 3];
            e[3 * t + k] = a < b ? a << 32 | b : b << 32 | a;
        }
    qsort(e, 3 * m->nt, sizeof *e, edge_cmp);
    return e;
}

void cs_mesh_edge_counts(const cs_mesh *m, size_t *boundary, size_t *nonmanifold)
{
    *boundary = *nonmanifold = 0;
    uint64_t *e = sorted_edges(m);
    if (!e) return;
    size_t n = 3 * m->nt;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && e[j] == e[i]) j++;
        if (j - i == 1) (*boundary)++;
        if (j - i > 2) (*nonmanifold)++;
        i = j;
    }
    free(e);
}

int cs_mesh_open_edges(const cs_mesh *m, cs_mesh_edge_list *out)
{
    size_t boundary, nonmanifold;
    cs_mesh_edge_counts(m, &boundary, &nonmanifold);
    uint64_t *e = sorted_edges(m);
    out->n = 0;
    out->v = malloc(sizeof(uint32_t) * 2 * (boundary ? boundary : 1));
    if (!e || !out->v) {
        free(e), free(out->v);
        out->v = NULL;
        return cs_fail("out of host memory listing the edges of %zu triangles", m->nt);
    }
    size_t n = 3 * m->nt;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && e[j] == e[i]) j++;
        if (j - i == 1) out->v[2 * out->n] = (uint32_t)(e[i] >> 32), out->v[2 * out->n + 1] = (uint32_t)e[i], out->n++;
        i = j;
    }
    free(e);
    return 0;
}
