/* Reading triangle mesh PLYs (cs_mesh_read_ply, for mesh --from): clsplat's own files back,
 * other writers' layouts (ASCII polygons, big-endian, extra properties), and bad files refused
 * with the face and the file named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixtures.h"
#include "mesh.h"
#include "test.h"
#include "util.h"

/* a random mesh of distinct-cornered triangles, some vertices unused */
static int random_mesh(uint64_t *rs, cs_mesh *m)
{
    memset(m, 0, sizeof *m);
    m->nv = 10 + (size_t)(test_rand(rs) * 60), m->nt = 5 + (size_t)(test_rand(rs) * 100);
    m->pos = malloc(12 * m->nv), m->rgb = malloc(3 * m->nv), m->tri = malloc(12 * m->nt);
    CHECK(m->pos && m->rgb && m->tri, "out of memory");
    for (size_t i = 0; i < 3 * m->nv; i++) m->pos[i] = (float)(test_randn(rs) * 3), m->rgb[i] = (uint8_t)(test_rand(rs) * 256);
    for (size_t t = 0; t < m->nt; t++) {
        uint32_t a = (uint32_t)(test_rand(rs) * m->nv), b = (a + 1 + (uint32_t)(test_rand(rs) * (m->nv - 2))) % m->nv;
        uint32_t c = a;
        while (c == a || c == b) c = (uint32_t)(test_rand(rs) * m->nv);
        m->tri[3 * t] = a, m->tri[3 * t + 1] = b, m->tri[3 * t + 2] = c;
    }
    return 0;
}

/* triangle T of A and of B: the same corners (positions and colours, in order) */
static int same_triangle(const cs_mesh *a, const cs_mesh *b, size_t t)
{
    for (int k = 0; k < 3; k++) {
        uint32_t u = a->tri[3 * t + k], v = b->tri[3 * t + k];
        if (memcmp(a->pos + 3 * u, b->pos + 3 * v, 12) || memcmp(a->rgb + 3 * u, b->rgb + 3 * v, 3)) return 0;
    }
    return 1;
}

/* the mesh PLY TEXT (LEN bytes) written to NAME and read back into M */
static int read_text(const char *name, const char *text, size_t len, cs_mesh *m)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", test_tmpdir(), name);
    FILE *f = fopen(p, "wb");
    if (!f || fwrite(text, 1, len, f) != len) {
        if (f) fclose(f);
        return cs_fail("cannot write %s", p);
    }
    fclose(f);
    return cs_mesh_read_ply(p, m);
}

static const char ASCII_POLYGONS[] =
    "ply\nformat ascii 1.0\ncomment another writer\nelement vertex 6\nproperty double x\nproperty double y\n"
    "property double z\nproperty float nx\nproperty float ny\nproperty float nz\nproperty float red\n"
    "property float green\nproperty float blue\nelement face 3\nproperty uchar flags\n"
    "property list uchar uint vertex_index\nproperty float quality\nproperty list uchar float texcoord\nelement edge 0\nproperty int vertex1\n"
    "end_header\n"
    "0 0 0 0 0 1 1 0 0\n1 0 0 0 0 1 0 1 0\n1 1 0 0 0 1 0 0 1\n0 1 0 0 0 1 1 1 1\n2 0 0 0 0 1 0.5 0.5 0.5\n"
    "2 2 1 0 0 1 0 0 0\n"
    "7 4 0 1 2 3 0.5 2 0.1 0.2\n9 3 1 4 2 1.5 0\n0 5 1 4 5 2 3 -2 4 1 2 3 4\n";

/* an ASCII file of a quad, a triangle and a pentagon, with normals, float colours and face
   properties before and after the list (a scalar, and a list of texture coordinates): 2 + 1 + 3
   triangles, fanned from each first corner */
static int ascii_polygons(void)
{
    cs_mesh m;
    CHECK_OK(read_text("polygons.ply", ASCII_POLYGONS, sizeof ASCII_POLYGONS - 1, &m));
    static const uint32_t want[6][3] = {{0, 1, 2}, {0, 2, 3}, {1, 4, 2}, {1, 4, 5}, {1, 5, 2}, {1, 2, 3}};
    CHECK(m.nt == 6 && m.nv == 6, "%zu triangles of %zu vertices, want 6 of 6", m.nt, m.nv);
    /* the reader keeps the vertices in first use order: compare positions */
    static const float P[6][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {2, 0, 0}, {2, 2, 1}};
    for (size_t t = 0; t < 6; t++)
        for (int k = 0; k < 3; k++)
            CHECK(!memcmp(m.pos + 3 * m.tri[3 * t + k], P[want[t][k]], 12), "triangle %zu corner %d is not vertex %u", t,
                  k, want[t][k]);
    const uint8_t *blue = m.rgb + 3 * m.tri[2]; /* vertex 2: (0, 0, 1) as floats */
    CHECK(blue[0] == 0 && blue[1] == 0 && blue[2] == 255, "vertex 2's colour %d %d %d, want 0 0 255", blue[0], blue[1],
          blue[2]);
    cs_mesh_free(&m);
    return 0;
}

/* a big-endian file: uint8 counts, uint16 indices, a byte after each list */
static int big_endian(void)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf,
                     "ply\nformat binary_big_endian 1.0\nelement vertex 4\nproperty float x\nproperty float y\n"
                     "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\n"
                     "element face 2\nproperty list uint8 uint16 vertex_indices\nproperty uchar material\nend_header\n");
    for (int v = 0; v < 4; v++) {
        float xyz[3] = {(float)(v & 1), (float)(v >> 1), 0.5f};
        for (int c = 0; c < 3; c++) {
            uint8_t b[4];
            memcpy(b, &xyz[c], 4);
            for (int k = 0; k < 4; k++) buf[n++] = (char)b[3 - k];
        }
        buf[n++] = (char)(10 * v), buf[n++] = (char)(20 * v), buf[n++] = (char)(30 * v);
    }
    static const int faces[2][3] = {{0, 1, 3}, {0, 3, 2}};
    for (int f = 0; f < 2; f++) {
        buf[n++] = 3;
        for (int k = 0; k < 3; k++) buf[n++] = 0, buf[n++] = (char)faces[f][k];
        buf[n++] = 7;
    }
    cs_mesh m;
    CHECK_OK(read_text("big.ply", buf, (size_t)n, &m));
    CHECK(m.nt == 2 && m.nv == 4, "%zu triangles of %zu vertices, want 2 of 4", m.nt, m.nv);
    for (int f = 0; f < 2; f++)
        for (int k = 0; k < 3; k++) {
            int v = faces[f][k];
            const float *p = m.pos + 3 * m.tri[3 * f + k];
            const uint8_t *c = m.rgb + 3 * m.tri[3 * f + k];
            CHECK(p[0] == (float)(v & 1) && p[1] == (float)(v >> 1) && p[2] == 0.5f && c[0] == 10 * v && c[2] == 30 * v,
                  "face %d corner %d: (%g %g %g) colour %d, want vertex %d", f, k, p[0], p[1], p[2], c[0], v);
        }
    cs_mesh_free(&m);
    return 0;
}

/* bad files: each refused, its message naming what is wrong */
static int refusals(void)
{
    static const char *H = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n";
    static const char *V = "0 0 0\n1 0 0\n0 1 0\n";
    static const struct {
        const char *header, *faces, *why;
    } bad[] = {
        {"element face 1\nproperty list uchar int vertex_indices\nend_header\n", "2 0 1\n", "face 0 has 2 corners"},
        {"element face 2\nproperty list uchar int vertex_indices\nend_header\n", "3 0 1 2\n3 0 1 3\n",
         "face 1: corner 3 is not one of the 3 vertices"},
        {"element face 1\nproperty list uchar int vertex_indices\nend_header\n", "3 0 -1 2\n", "corner -1 is not"},
        {"element face 1\nproperty list uchar int vertex_indices\nend_header\n", "3 0 1.5 2\n", "corner 1.5 is not"},
        {"element face 2\nproperty list uchar int vertex_indices\nend_header\n", "3 0 1 2\n3 0 1\n",
         "truncated: the data ends in face 1 of 2"},
        {"element face 3\nproperty list uchar int vertex_indices\nend_header\n", "3 0 1 2\n",
         "truncated: the data ends at face 1 of 3"},
        {"end_header\n", "", "no 'face' element"},
        {"element face 2\nproperty list uchar int vertex_indices\nproperty list uchar float texcoord\nend_header\n",
         "3 0 1 2 6 0 0 1 0 0 1\n", "truncated: the data ends at face 1 of 2"},
        {"element face 1\nproperty list uchar int vertex_indices\nproperty list uchar int vertex_index\nend_header\n",
         "3 0 1 2 3 0 1 2\n", "a second list of corners"},
        {"element face 1\nproperty uchar flags\nend_header\n", "1\n", "no vertex_indices list"},
        {"element face 1\nproperty list float int vertex_indices\nend_header\n", "3 0 1 2\n", "integer count"},
        {"element face 1\nproperty list uchar float vertex_indices\nend_header\n", "3 0 1 2\n", "integer indices"},
        {"element edge 1\nproperty int a\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n",
         "0\n3 0 1 2\n", "elements between 'vertex' and 'face'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[1024];
        int n = snprintf(text, sizeof text, "%s%s%s%s", H, bad[i].header, V, bad[i].faces);
        cs_mesh m;
        CHECK(read_text("bad.ply", text, (size_t)n, &m) != 0, "case %zu accepted:\n%s", i, text);
        CHECK(strstr(cs_last_error(), bad[i].why) && strstr(cs_last_error(), "bad.ply"), "case %zu: '%s', want '%s'", i,
              cs_last_error(), bad[i].why);
    }
    /* a binary file cut in its faces */
    cs_mesh m;
    char p[700];
    uint64_t rs = test_seed() ^ 0x91e;
    CHECK_OK(random_mesh(&rs, &m));
    snprintf(p, sizeof p, "%s/whole.ply", test_tmpdir());
    CHECK_OK(cs_mesh_write_ply(p, &m));
    size_t len;
    char *data = cs_read_file(p, &len);
    CHECK(data, "%s", cs_last_error());
    cs_mesh g;
    int rc = read_text("cut.ply", data, len - 7, &g);
    free(data);
    cs_mesh_free(&m);
    CHECK(rc != 0 && strstr(cs_last_error(), "truncated: the data ends in face"), "a cut file: %s",
          rc ? cs_last_error() : "accepted");
    return 0;
}

/* clsplat's own PLY back (the same triangles, vertices in first use order, unused ones dropped),
   other writers' layouts, and bad files refused */
int test_mesh_read_ply(void)
{
    uint64_t rs = test_seed() ^ 0x9e7;
    for (int round = 0; round < 20; round++) {
        cs_mesh m, g;
        CHECK_OK(random_mesh(&rs, &m));
        char p[700];
        snprintf(p, sizeof p, "%s/own%d.ply", test_tmpdir(), round);
        CHECK_OK(cs_mesh_write_ply(p, &m));
        CHECK_OK(cs_mesh_read_ply(p, &g));
        size_t used = 0;
        for (size_t v = 0; v < m.nv; v++) {
            int u = 0;
            for (size_t i = 0; i < 3 * m.nt && !u; i++) u = m.tri[i] == v;
            used += u;
        }
        CHECK(g.nt == m.nt && g.nv == used, "round %d: %zu triangles and %zu vertices read, want %zu and %zu", round, g.nt,
              g.nv, m.nt, used);
        for (size_t t = 0; t < m.nt; t++) CHECK(same_triangle(&m, &g, t), "round %d: triangle %zu differs", round, t);
        cs_mesh_free(&m);
        cs_mesh_free(&g);
    }
    return ascii_polygons() || big_endian() || refusals();
}
