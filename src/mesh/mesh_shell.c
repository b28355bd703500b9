/* mesh_shell: a geodesic background sphere (mesh_shell.h). */
#include "mesh_shell.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

size_t cs_mesh_shell_triangles(int level)
{
    return (size_t)20 << (2 * level);
}

/* the shell under construction: unit vertices, triangles, and each edge's midpoint (open
   addressing on the edge's two vertex numbers) */
typedef struct {
    double *v;
    uint32_t *t;
    size_t nv, nt;
    uint64_t *keys;
    uint32_t *mid;
    size_t slots; /* a power of two */
} sphere;

static uint32_t midpoint(sphere *s, uint32_t a, uint32_t b)
{
    uint64_t key = a < b ? (uint64_t)a << 32 | b : (uint64_t)b << 32 | a;
    size_t h = (size_t)(cs_hash_u32((uint32_t)key ^ cs_hash_u32((uint32_t)(key >> 32))) & (s->slots - 1));
    while (s->keys[h] != UINT64_MAX && s->keys[h] != key) h = (h + 1) & (s->slots - 1);
    if (s->keys[h] == key) return s->mid[h];
    double *p = s->v + 3 * s->nv, n = 0;
    for (int k = 0; k < 3; k++) p[k] = s->v[3 * a + k] + s->v[3 * b + k], n += p[k] * p[k];
    for (int k = 0; k < 3; k++) p[k] /= sqrt(n);
    s->keys[h] = key, s->mid[h] = (uint32_t)s->nv;
    return (uint32_t)s->nv++;
}

/* the icosahedron, faces counter-clockwise seen from outside */
static void icosahedron(sphere *s)
{
    const double g = (1 + sqrt(5.0)) / 2;
    const double v[12][3] = {{-1, g, 0}, {1, g, 0}, {-1, -g, 0}, {1, -g, 0}, {0, -1, g}, {0, 1, g},
                             {0, -1, -g}, {0, 1, -g}, {g, 0, -1}, {g, 0, 1}, {-g, 0, -1}, {-g, 0, 1}};
    const uint32_t f[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11}, {1, 5, 9}, {5, 11, 4},
                               {11, 10, 2}, {10, 7, 6}, {7, 1, 8},  {3, 9, 4},  {3, 4, 2},   {3, 2, 6}, {3, 6, 8},
                               {3, 8, 9},  {4, 9, 5},  {2, 4, 11}, {6, 2, 10}, {8, 6, 7},   {9, 8, 1}};
    double n = sqrt(1 + g * g);
    for (int i = 0; i < 12; i++)
        for (int k = 0; k < 3; k++) s->v[3 * i + k] = v[i][k] / n;
    memcpy(s->t, f, sizeof f);
    s->nv = 12, s->nt = 20;
}

/* each triangle into four (corners and edge midpoints), in place from the back */
static void subdivide(sphere *s)
{
    memset(s->keys, 0xff, sizeof(uint64_t) * s->slots);
    size_t nt = s->nt;
    for (size_t i = nt; i-- > 0;) {
        uint32_t a = s->t[3 * i], b = s->t[3 * i + 1], c = s->t[3 * i + 2];
        uint32_t ab = midpoint(s, a, b), bc = midpoint(s, b, c), ca = midpoint(s, c, a);
        uint32_t q[12] = {a, ab, ca, ab, b, bc, ca, bc, c, ab, bc, ca};
        memcpy(s->t + 12 * i, q, sizeof q);
    }
    s->nt = 4 * nt;
}

int cs_mesh_add_shell(cs_mesh *m, const double centre[3], double radius, int level)
{
    if (level < 0 || level > CS_MESH_SHELL_MAX_LEVEL) return cs_fail("a shell of level %d (0 to %d)", level, CS_MESH_SHELL_MAX_LEVEL);
    size_t nt = cs_mesh_shell_triangles(level), nv = nt / 2 + 2, edges = nt * 3 / 2;
    sphere s = {0};
    s.slots = 64;
    while (s.slots < 2 * edges) s.slots *= 2;
    s.v = malloc(sizeof(double) * 3 * nv), s.t = malloc(sizeof(uint32_t) * 3 * nt);
    s.keys = malloc(sizeof(uint64_t) * s.slots), s.mid = malloc(sizeof(uint32_t) * s.slots);
    float *pos = s.v ? realloc(m->pos, sizeof(float) * 3 * (m->nv + nv)) : NULL;
    if (pos) m->pos = pos;
    uint8_t *rgb = pos ? realloc(m->rgb, 3 * (m->nv + nv)) : NULL;
    if (rgb) m->rgb = rgb;
    uint32_t *tri = rgb ? realloc(m->tri, sizeof(uint32_t) * 3 * (m->nt + nt)) : NULL;
    if (tri) m->tri = tri;
    if (!s.t || !s.keys || !s.mid || !tri) {
        free(s.v), free(s.t), free(s.keys), free(s.mid);
        return cs_fail("out of host memory (a background shell of %zu triangles)", nt);
    }
    icosahedron(&s);
    for (int l = 0; l < level; l++) subdivide(&s);
    for (size_t i = 0; i < s.nv; i++)
        for (int k = 0; k < 3; k++) {
            m->pos[3 * (m->nv + i) + k] = (float)(centre[k] + radius * s.v[3 * i + k]);
            m->rgb[3 * (m->nv + i) + k] = 128;
        }
    for (size_t i = 0; i < s.nt; i++) { /* turned inward: seen from the centre, counter-clockwise */
        uint32_t *o = m->tri + 3 * (m->nt + i);
        o[0] = (uint32_t)m->nv + s.t[3 * i], o[1] = (uint32_t)m->nv + s.t[3 * i + 2], o[2] = (uint32_t)m->nv + s.t[3 * i + 1];
    }
    m->nv += s.nv, m->nt += s.nt;
    free(s.v), free(s.t), free(s.keys), free(s.mid);
    return 0;
}
