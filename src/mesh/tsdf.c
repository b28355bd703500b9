/* tsdf: launchers of the depth fusion and marching-tetrahedra kernels (cl/mesh.cl). */
#include "tsdf.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MESH_WG 64

size_t cs_tsdf_slab_bytes(const cs_tsdf_grid *g, int layers)
{
    size_t vox = (size_t)g->nx * g->ny * layers, cells = (size_t)(g->nx - 1) * (g->ny - 1) * (layers - 1) + 1;
    /* signed distance, colour + weight, a count per cell and the scan's block sums (< 1/64) */
    return vox * (4 + 16) + cells * 4 + cells / 64 * 4 + 4096;
}

static cl_float4 grid_arg(const cs_tsdf_grid *g)
{
    return (cl_float4){{g->origin[0], g->origin[1], g->origin[2], g->voxel}};
}

/* the contraction's box (centre and S, half-sizes) as the kernels take it */
static cl_float4 ct_centre(const cs_tsdf_grid *g)
{
    return (cl_float4){{g->ct.c[0], g->ct.c[1], g->ct.c[2], g->ct.s}};
}

static cl_float4 ct_half(const cs_tsdf_grid *g)
{
    return (cl_float4){{g->ct.h[0], g->ct.h[1], g->ct.h[2], 0.f}};
}

int cs_tsdf_begin(cs_tsdf *t, cs_cl *cl, const cs_kernels *k, const cs_tsdf_grid *g, int z0, int layers)
{
    memset(t, 0, sizeof *t);
    t->cl = cl, t->k = k, t->g = *g, t->z0 = z0, t->layers = layers;
    if (layers < 2 || g->nx < 2 || g->ny < 2) return cs_fail("a TSDF slab needs 2 voxels a side (%dx%dx%d)", g->nx, g->ny, layers);
    size_t vox = (size_t)g->nx * g->ny * layers, cells = (size_t)(g->nx - 1) * (g->ny - 1) * (layers - 1);
    if (cells + 1 > 0x7fffffffu) return cs_fail("a TSDF slab of %zu cells: more than the kernels index", cells);
    float zero = 0.f;
    if (cs_buf_alloc(cl, &t->tsdf, CS_MEM_OTHER, vox * 4, "TSDF volume") ||
        cs_buf_alloc(cl, &t->colour, CS_MEM_OTHER, vox * 16, "TSDF colours and weights") ||
        cs_buf_alloc(cl, &t->count, CS_MEM_OTHER, (cells + 1) * 4, "triangles per cell") ||
        cs_buf_fill(cl, &t->tsdf, 0, vox * 4, &zero, 4) || cs_buf_fill(cl, &t->colour, 0, vox * 16, &zero, 4)) {
        cs_tsdf_free(t);
        return -1;
    }
    return 0;
}

int cs_tsdf_fuse(cs_tsdf *t, const cs_renderer *r, const cs_view *v)
{
    const cs_tsdf_grid *g = &t->g;
    int n = g->nx * g->ny * t->layers;
    size_t gs = (size_t)n, l = MESH_WG;
    cl_float4 grid = grid_arg(g), ctc = ct_centre(g), cth = ct_half(g);
    return cs_cl_run(t->cl, t->k->tsdf_fuse, -1, 1, &gs, &l, CS_ARG(g->nx), CS_ARG(g->ny), CS_ARG(t->layers),
                     CS_ARG(t->z0), CS_ARG(grid), CS_ARG(ctc), CS_ARG(cth), CS_ARG(g->trunc), CS_ARG(g->max_depth), CS_ARG(g->carve), CS_ARG(v->cam),
                     CS_ARG(v->intr), CS_ARG(v->width), CS_ARG(v->height), CS_ARG(r->depth_img.mem), CS_ARG(g->plane),
                     CS_ARG(r->img.mem), CS_ARG(t->tsdf.mem), CS_ARG(t->colour.mem));
}

/* room for N more triangles in *SOUP */
static int soup_room(cs_soup_vertex **soup, size_t nt, size_t add, size_t *cap)
{
    if (nt + add <= *cap) return 0;
    size_t c = (nt + add) * 3 / 2 + 1024;
    cs_soup_vertex *s = realloc(*soup, c * CS_TSDF_TRI_BYTES);
    if (!s) return cs_fail("out of host memory (%zu triangles)", nt + add);
    *soup = s, *cap = c;
    return 0;
}

int cs_tsdf_extract(cs_tsdf *t, cs_soup_vertex **soup, size_t *nt, size_t *cap)
{
    const cs_tsdf_grid *g = &t->g;
    cs_cl *cl = t->cl;
    unsigned cells = (unsigned)((size_t)(g->nx - 1) * (g->ny - 1) * (t->layers - 1));
    size_t gs = cells, l = MESH_WG;
    cl_uint zero = 0, total = 0;
    cl_float4 grid = grid_arg(g), ctc = ct_centre(g), cth = ct_half(g);
    if (cs_buf_fill(cl, &t->count, (size_t)cells * 4, 4, &zero, 4) ||
        cs_cl_run(cl, t->k->mc_count, -1, 1, &gs, &l, CS_ARG(g->nx), CS_ARG(g->ny), CS_ARG(t->layers),
                  CS_ARG(t->tsdf.mem), CS_ARG(t->colour.mem), CS_ARG(t->count.mem)) ||
        cs_scan(cl, t->k, &t->scan, &t->count, cells + 1, -1) ||
        cs_buf_read(cl, &t->count, (size_t)cells * 4, 4, &total))
        return -1;
    if (total == 0) return 0;
    if (soup_room(soup, *nt, total, cap)) return -1;
    /* the triangles in passes of what the memory budget and the largest allocation allow */
    size_t room = cl->mem.budget != (size_t)-1 && cl->mem.budget > cl->mem.cur_total ? cl->mem.budget - cl->mem.cur_total
                                                                                       : cl->max_alloc;
    if (room > cl->max_alloc) room = cl->max_alloc;
    cl_uint per = (cl_uint)(room / CS_TSDF_TRI_BYTES < total ? room / CS_TSDF_TRI_BYTES : total);
    if (per < 1024) per = total < 1024 ? total : 1024;
    if (cs_buf_alloc(cl, &t->tris, CS_MEM_OTHER, (size_t)per * CS_TSDF_TRI_BYTES, "extracted triangles")) return -1;
    for (cl_uint lo = 0; lo < total; lo += per) {
        cl_uint hi = total - lo < per ? total : lo + per;
        if (cs_cl_run(cl, t->k->mc_emit, -1, 1, &gs, &l, CS_ARG(g->nx), CS_ARG(g->ny), CS_ARG(t->layers), CS_ARG(t->z0),
                      CS_ARG(grid), CS_ARG(ctc), CS_ARG(cth), CS_ARG(t->tsdf.mem), CS_ARG(t->colour.mem), CS_ARG(t->count.mem), CS_ARG(lo),
                      CS_ARG(hi), CS_ARG(t->tris.mem)) ||
            cs_buf_read(cl, &t->tris, 0, (size_t)(hi - lo) * CS_TSDF_TRI_BYTES, *soup + 3 * (*nt + lo)))
            return -1;
        t->passes++;
    }
    *nt += total;
    cs_buf_free(cl, &t->tris);
    return 0;
}

void cs_tsdf_free(cs_tsdf *t)
{
    if (!t->cl) return;
    cs_buf_free(t->cl, &t->tsdf);
    cs_buf_free(t->cl, &t->colour);
    cs_buf_free(t->cl, &t->count);
    cs_buf_free(t->cl, &t->tris);
    cs_sort_scratch_free(t->cl, &t->scan);
}
