/* ref_mesh: the CPU reference of cl/mesh_geom.cl, #38's geometry stage: the anti-aliasing of a
 * mesh's drawing at silhouette edges and its backward, the gradient inside triangles through
 * the perspective-correct weights, the camera's backward to world positions, and the
 * regularisers' energy. The tests check the backward against central differences of the
 * forward (cs_mesh_visibility, the drawing, ref_mesh_aa_fwd) and the device against this. */
#ifndef CS_REF_MESH_H
#define CS_REF_MESH_H

#include "camera.h"
#include "mesh.h"
#include "mesh_geom.h"

typedef struct {
    int W, H;
    const uint32_t *tris;
    const int32_t *nbr;  /* the topology's */
    const float *uvz;    /* nv x 3: pixels and depth; u, v NaN behind the camera */
    const int32_t *tri;  /* the visibility buffer, -1 where none */
    const float *depth;  /* each pixel's nearest depth (+inf where none) */
} ref_mesh_view;

/* every vertex projected as the device does (z <= 1e-6: u, v NaN) */
void ref_mesh_project(const cs_mesh *m, const cs_camera *c, float *uvz);
/* the drawing (3, H, W) of colours COL (nv x 3) with weights W over BG, and each pixel's depth */
void ref_mesh_draw(const cs_mesh *m, const float *col, const int32_t *tri, const float *w, const float *uvz, int npx,
                   const float bg[3], float *img, float *depth);
/* OUT = IN plus the silhouette blends (both (3, H, W)); CODE (2 H W, or NULL): for each pixel
   and its right, then lower neighbour, -1 or which edge blends which pixel (the drawing is
   smooth in the positions where no code and no pixel's triangle changes) */
void ref_mesh_aa_fwd(const ref_mesh_view *v, const float *in, double *out, int *code);
/* its backward: V_IN = V_OUT plus the blends', G (nv x 3: du, dv, dz) += the edges' corners' */
void ref_mesh_aa_bwd(const ref_mesh_view *v, const float *in, const double *v_out, double *v_in, double *g);
/* the gradient V (3, H, W) of the drawing through the weights to the corners' (u, v, z), into G */
void ref_mesh_interior_bwd(const ref_mesh_view *v, const float *col, const double *vimg, double *g);
/* G (nv x 3: du, dv, dz) through camera C to world positions GP (nv x 3) */
void ref_mesh_project_bwd(const cs_camera *c, const cs_mesh *m, const double *g, double *gp);
/* KL sum_v |p_v - mean of its neighbours|^2 + KN sum over edges of two triangles (1 - n_a . n_b) */
double ref_mesh_reg_energy(const cs_mesh *m, const cs_mesh_topo *t, double kl, double kn);

/* the device tests' view: a 96x72 pinhole camera 3 units before the origin, looking down +z */
void ref_mesh_test_camera(cs_camera *c);
/* the test camera moved to C, looking at the origin (96x72, 62 degrees across) */
void ref_mesh_ring_camera(cs_camera *c, const double C[3]);
/* NT random overlapping triangles in that view (POS: 9 floats each, corners unshared), every
   37th with a corner behind the camera */
void ref_mesh_random_soup(float *pos, int nt, uint64_t *rs);
/* that soup as a mesh M over the caller's arrays (POS 9 NT, COL and RGB 9 NT, TRI 3 NT): random
   colours, RGB the bytes and COL the same as 0-1 floats */
void ref_mesh_random_mesh(cs_mesh *m, float *pos, float *col, uint8_t *rgb, uint32_t *tri, int nt, uint64_t *rs);

#endif
