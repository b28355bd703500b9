/* mesh_shell: the background a mesh of an unbounded capture can carry (#38): a geodesic sphere
 * (an icosahedron, each triangle split in four LEVEL times: 20 * 4^LEVEL triangles) around the
 * scene, far behind everything the depth limit keeps, its faces turned inward. Its vertex
 * colours start grey; the refinement (mesh_refine.h) fits them to the photos, so the sky and
 * the far background a view sees draw where the fused surface has nothing. */
#ifndef CS_MESH_SHELL_H
#define CS_MESH_SHELL_H

#include "mesh.h"

#define CS_MESH_SHELL_MAX_LEVEL 9

/* triangles of a shell of LEVEL */
size_t cs_mesh_shell_triangles(int level);
/* Appends to M the shell of LEVEL (0 to CS_MESH_SHELL_MAX_LEVEL) centred at CENTRE with RADIUS;
 * its triangles come after M's. -1 with a message (host memory). */
int cs_mesh_add_shell(cs_mesh *m, const double centre[3], double radius, int level);

#endif
