/* mesh_texture: a mesh's texture on the host (mesh_texture.h). */
#include "mesh_texture.h"

#include <math.h>
#include <stdlib.h>

#include "util.h"

/* the atlas's cells in a row for NT triangles */
static size_t atlas_cols(size_t nt)
{
    size_t c = (size_t)ceil(sqrt((double)(nt ? nt : 1)));
    while (c * c < nt) c++;
    return c;
}

int cs_mesh_tex_auto(size_t nt)
{
    size_t cols = atlas_cols(nt);
    for (int r = CS_TEX_MAX_R; r >= 1; r--)
        if (cols * (size_t)(r + 1) <= CS_TEX_ATLAS_SIDE) return r;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* the projected edge (sqrt of twice the area, pixels) of every triangle of M camera C sees
   in front with its centre inside its image, appended to E (*N of them) */
static void edges_seen(const cs_mesh *m, const cs_camera *c, double *e, size_t *n)
{
    for (size_t t = 0; t < m->nt; t++) {
        double u[3], v[3], z[3];
        int front = 1;
        for (int k = 0; k < 3 && front; k++) front = cs_camera_project(c, m->pos + 3 * m->tri[3 * t + k], &u[k], &v[k], &z[k]);
        double cu = (u[0] + u[1] + u[2]) / 3, cv = (v[0] + v[1] + v[2]) / 3;
        if (!front || !(cu >= 0 && cu < c->width && cv >= 0 && cv < c->height)) continue;
        e[(*n)++] = sqrt(fabs((u[1] - u[0]) * (v[2] - v[0]) - (u[2] - u[0]) * (v[1] - v[0])));
    }
}

int cs_mesh_tex_footprint(const cs_mesh *m, const cs_camera *cams, int n, double *median)
{
    *median = 0;
    int most = cs_mesh_tex_auto(m->nt), views = n < 8 ? n : 8;
    if (most == 0) return 0;
    double *e = malloc(sizeof(double) * (m->nt * (size_t)views + 1));
    size_t ne = 0;
    if (!e) return 1; /* no memory for the estimate: the smallest lattice */
    for (int k = 0; k < views; k++) edges_seen(m, &cams[(size_t)k * n / views], e, &ne);
    int r = 1;
    if (ne) {
        qsort(e, ne, sizeof *e, cmp_double);
        *median = e[ne / 2];
        double want = ceil(2 * *median);
        r = want < 1 ? 1 : want > most ? most : (int)want;
    }
    free(e);
    return r;
}

static uint8_t to_u8(double v)
{
    v = floor(v + 0.5);
    return (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
}

int cs_mesh_tex_from_vertices(cs_mesh *m, int r)
{
    if (r < 1 || r > CS_TEX_MAX_R) return cs_fail("a texture of %d subdivisions: 1 to %d", r, CS_TEX_MAX_R);
    size_t k = CS_TEX_NODES(r);
    uint8_t *tex = malloc(3 * k * (m->nt ? m->nt : 1));
    if (!tex) return cs_fail("out of host memory (a texture of %zu nodes)", k * m->nt);
    for (size_t t = 0; t < m->nt; t++) {
        const uint8_t *c[3] = {m->rgb + 3 * m->tri[3 * t], m->rgb + 3 * m->tri[3 * t + 1], m->rgb + 3 * m->tri[3 * t + 2]};
        for (int j = 0; j <= r; j++)
            for (int i = 0; i + j <= r; i++) {
                uint8_t *o = tex + 3 * (t * k + (size_t)cs_tex_node(r, i, j));
                double a = (double)i / r, b = (double)j / r;
                for (int ch = 0; ch < 3; ch++) o[ch] = to_u8((1 - a - b) * c[0][ch] + a * c[1][ch] + b * c[2][ch]);
            }
    }
    free(m->tex);
    m->tex = tex, m->tex_r = r;
    return 0;
}

void cs_mesh_tex_sample(const cs_mesh *m, size_t t, float w1, float w2, float rgb[3])
{
    int idx[6];
    float wt[6];
    int n = cs_tex_taps(m->tex_r, w1, w2, idx, wt);
    const uint8_t *base = m->tex + 3 * t * (size_t)CS_TEX_NODES(m->tex_r);
    rgb[0] = rgb[1] = rgb[2] = 0.f;
    for (int q = 0; q < n; q++)
        for (int ch = 0; ch < 3; ch++) rgb[ch] += wt[q] * base[3 * idx[q] + ch];
}

/* triangle T's cell of (R + 1)^2 texels into the atlas at (X0, Y0): the nodes, then each texel
   past the diagonal continuing the square below-left of it planarly (cl/mesh_tex.h) */
static void fill_cell(const cs_mesh *m, size_t t, cs_image *img, size_t x0, size_t y0)
{
    int r = m->tex_r, n = r + 1;
    float v[(CS_TEX_MAX_R + 1) * (CS_TEX_MAX_R + 1) * 3];
    const uint8_t *base = m->tex + 3 * t * (size_t)CS_TEX_NODES(r);
    for (int d = 0; d <= 2 * r; d++) /* by anti-diagonals, so each texel's three are there */
        for (int j = 0; j <= r; j++) {
            int i = d - j;
            if (i < 0 || i > r) continue;
            for (int ch = 0; ch < 3; ch++)
                v[3 * (j * n + i) + ch] = d <= r ? base[3 * cs_tex_node(r, i, j) + ch]
                                                 : v[3 * ((j - 1) * n + i) + ch] + v[3 * (j * n + i - 1) + ch] -
                                                       v[3 * ((j - 1) * n + i - 1) + ch];
        }
    for (int j = 0; j <= r; j++)
        for (int i = 0; i <= r; i++)
            for (int ch = 0; ch < 3; ch++)
                img->px[3 * ((y0 + (size_t)j) * img->width + x0 + (size_t)i) + ch] = to_u8(v[3 * (j * n + i) + ch]);
}

int cs_mesh_tex_atlas(const cs_mesh *m, cs_image *img, float *uv)
{
    int r = m->tex_r, cell = r + 1;
    size_t cols = atlas_cols(m->nt), rows = (m->nt + cols - 1) / cols;
    if (!m->tex || r < 1 || r > CS_TEX_MAX_R) return cs_fail("the mesh has no texture");
    if (cols * cell > CS_TEX_ATLAS_SIDE || rows * cell > CS_TEX_ATLAS_SIDE)
        return cs_fail("%zu triangles of %d subdivisions need an atlas of %zux%zu texels, more than %d a side", m->nt, r,
                       cols * cell, rows * cell, CS_TEX_ATLAS_SIDE);
    img->width = (int)(cols * cell), img->height = (int)((rows ? rows : 1) * cell), img->channels = 3;
    img->px = calloc((size_t)img->width * img->height, 3);
    if (!img->px) return cs_fail("out of host memory (a %dx%d texture atlas)", img->width, img->height);
    for (size_t t = 0; t < m->nt; t++) {
        size_t x0 = (t % cols) * cell, y0 = (t / cols) * cell;
        fill_cell(m, t, img, x0, y0);
        const int corner[3][2] = {{0, 0}, {r, 0}, {0, r}};
        for (int k = 0; k < 3; k++) {
            uv[6 * t + 2 * k] = (float)((x0 + corner[k][0] + 0.5) / img->width);
            uv[6 * t + 2 * k + 1] = (float)((y0 + corner[k][1] + 0.5) / img->height);
        }
    }
    return 0;
}
