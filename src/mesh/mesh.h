/* mesh: a triangle mesh with 8-bit vertex colours on the host (clsplat mesh's output, #23):
 * welded from the extraction's triangle soup, simplified to a triangle budget with
 * meshoptimizer, written as a binary PLY (x y z, red green blue; face lists of 3). */
#ifndef CS_MESH_H
#define CS_MESH_H

#include <stddef.h>
#include <stdint.h>

/* one corner of the soup as the device writes it: float bits of x, y, z, and r | g << 8 | b << 16 */
typedef struct {
    uint32_t w[4];
} cs_soup_vertex;

typedef struct {
    float *pos;   /* (nv, 3) */
    uint8_t *rgb; /* (nv, 3) */
    uint32_t *tri; /* (nt, 3) */
    size_t nv, nt;
    uint8_t *tex;  /* NULL, or each triangle's lattice of colours (mesh_tex.h; nt x nodes x 3) */
    int tex_r;     /* its subdivisions (cl/mesh_tex.h) */
} cs_mesh;

/* Welds NT triangles of SOUP (3 corners each) into M: corners of equal bits become one vertex;
 * triangles that lose a corner to the weld (two equal corners) are dropped. */
int cs_mesh_weld(const cs_soup_vertex *soup, size_t nt, cs_mesh *m);
/* Simplifies M to at most MAX_TRIS triangles (meshopt_simplify, then meshopt_simplifySloppy if
 * that stops above the budget), dropping the vertices no triangle uses. *ERROR: the relative
 * error meshoptimizer reports (0 when nothing was done). */
int cs_mesh_simplify(cs_mesh *m, size_t max_tris, float *error);
/* Keeps the triangles of M's KEEP largest connected components (by triangles; components tied
 * with the KEEP-th are kept too), dropping unused vertices; *COMPONENTS: how many M had. KEEP
 * must be at least 1. */
int cs_mesh_keep_largest(cs_mesh *m, size_t keep, size_t *components);
/* Drops the triangles of M with a corner nearer than RADIUS to one of the N points CENTRES (x y z
 * each; the cameras: what sits against a lens is a floater, not the scene), then the vertices
 * no triangle uses; *DROPPED: how many triangles went. */
int cs_mesh_drop_near(cs_mesh *m, const double *centres, int n, double radius, size_t *dropped);
/* Reads M from a triangle mesh PLY (ply.h's cs_ply_read_mesh: polygons as fans of triangles),
 * dropping triangles with a corner twice and the vertices no triangle uses; -1 with a message naming the file. */
int cs_mesh_read_ply(const char *path, cs_mesh *m);
/* Writes M as a binary little-endian PLY, atomically. */
int cs_mesh_write_ply(const char *path, const cs_mesh *m);
/* Edges used by one triangle only (0: closed) and edges used by more than two (0: manifold). */
void cs_mesh_edge_counts(const cs_mesh *m, size_t *boundary, size_t *nonmanifold);
/* The edges used by one triangle only, as vertex pairs (v: 2 n, the caller frees it). */
typedef struct {
    uint32_t *v;
    size_t n;
} cs_mesh_edge_list;
int cs_mesh_open_edges(const cs_mesh *m, cs_mesh_edge_list *out);
/* DST a copy of SRC (its texture too); -1 with a message (host memory). */
int cs_mesh_copy(const cs_mesh *src, cs_mesh *dst);
void cs_mesh_free(cs_mesh *m);

#endif
