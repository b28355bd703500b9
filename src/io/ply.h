/* ply: graphdeco-layout Gaussian PLY files (x y z, nx ny nz, f_dc_*, f_rest_*, opacity,
 * scale_*, rot_*, optional filter_3D), read in any property order, ASCII or binary; and point
 * clouds (initial points of a dataset). */
#ifndef CS_PLY_H
#define CS_PLY_H

#include "splats.h"

/* Reads a PLY into OUT. -1 with a message naming the file and what is wrong. */
int cs_ply_read(const char *path, cs_splats *out);
/* Reads a point cloud PLY (x y z, optional red green blue as bytes or floats in [0, 1]; grey
 * without): *N points into new arrays *XYZ (3 floats each) and *RGB (3 bytes each). -1 with a
 * message naming the file. */
int cs_ply_read_points(const char *path, float **xyz, uint8_t **rgb, int *n);
/* Reads a triangle mesh PLY (ASCII or binary): *NV vertices (x y z, optional red green blue as
 * for points) into new arrays *XYZ and *RGB, and the 'face' element's polygons, each its one
 * vertex_indices (or vertex_index) list, as a fan of triangles: *NT of them into new *TRI (3
 * indices each, below *NV). Other face properties, scalars and lists, are skipped. -1 with a message naming the file and the face when a
 * face has fewer than 3 corners, a corner that is not a vertex, or the data ends. */
int cs_ply_read_mesh(const char *path, float **xyz, uint8_t **rgb, size_t *nv, uint32_t **tri, size_t *nt);
/* Writes binary little-endian graphdeco layout atomically; with BAKE_FILTER the 3D filter is
 * folded into scales and opacity and no filter_3D property is written. */
int cs_ply_write(const char *path, const cs_splats *s, int bake_filter);

#endif
