/* tsdf: the device side of clsplat mesh (#23): a slab of a dense voxel grid that fuses rendered
 * depth and colour views into a truncated signed distance (cl/mesh.cl: tsdf_fuse), and the
 * marching-tetrahedra extraction of its surface into a triangle soup (mc_count, a scan,
 * mc_emit). Consecutive slabs share one layer of voxels, so the soups meet exactly. All
 * buffers are accounted (CS_MEM_OTHER). */
#ifndef CS_TSDF_H
#define CS_TSDF_H

#include "cl_mem.h"
#include "contract.h"
#include "cl_runtime.h"
#include "kernels.h"
#include "mesh.h"
#include "render.h"
#include "sort.h"

typedef struct {
    int nx, ny, nz;    /* voxels */
    float origin[3];   /* centre of voxel (0, 0, 0), world units */
    float voxel;       /* voxel side */
    float trunc;       /* truncation of the signed distance, world units */
    float max_depth;   /* depths past this (camera z) are taken as no surface */
    int plane;         /* the depth fused: 0 expected, 1 median (render.h's depth_img planes) */
    cs_contract ct;    /* origin and voxel place grid points; ct takes them to the world (s 0: none) */
    float carve;       /* a voxel a view sees past (more than trunc in front of its surface) weighs 1 + this */
} cs_tsdf_grid;

typedef struct {
    cs_cl *cl;
    const cs_kernels *k;
    cs_tsdf_grid g;
    int z0, layers; /* the slab: grid layers z0 .. z0 + layers - 1 */
    int passes;     /* emission passes so far (a slab's triangles are emitted in as many as the budget needs) */
    cs_buf tsdf, colour, count, tris;
    cs_sort_scratch scan;
} cs_tsdf;

/* Device bytes a slab of LAYERS layers holds at most, before its triangles (TRI_BYTES each). */
size_t cs_tsdf_slab_bytes(const cs_tsdf_grid *g, int layers);
#define CS_TSDF_TRI_BYTES (3 * sizeof(cs_soup_vertex))
/* Allocates and clears the slab of LAYERS (>= 2) layers from grid layer Z0. */
int cs_tsdf_begin(cs_tsdf *t, cs_cl *cl, const cs_kernels *k, const cs_tsdf_grid *g, int z0, int layers);
/* Enqueues the fusion of the view V whose render and depths are in R (want_depth). */
int cs_tsdf_fuse(cs_tsdf *t, const cs_renderer *r, const cs_view *v);
/* Extracts the slab's surface (blocks) and appends its triangles to *SOUP (*NT triangles, room
 * for *CAP; grown with realloc). The triangles go through a device buffer of what the memory
 * budget leaves (at least 1024 triangles), in as many passes as that takes. */
int cs_tsdf_extract(cs_tsdf *t, cs_soup_vertex **soup, size_t *nt, size_t *cap);
/* Releases the slab. */
void cs_tsdf_free(cs_tsdf *t);

#endif
