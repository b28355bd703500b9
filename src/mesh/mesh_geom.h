/* mesh_geom: #38's geometry stage, the vertex positions of a refined mesh fitted to the photos
 * on the device (cl/mesh_geom.cl): the drawing anti-aliased at silhouette edges so that their
 * corners get a gradient, the gradient inside triangles through the perspective-correct weights,
 * both taken through the camera to world positions, a Laplacian and a normal-consistency
 * regulariser, and a sparse Adam (only the vertices the view gave a gradient move). The host
 * reference of every kernel is tests/ref_mesh.c. */
#ifndef CS_MESH_GEOM_H
#define CS_MESH_GEOM_H

#include "mesh.h"
#include "mesh_device.h"

/* A mesh's connectivity: for each triangle t and corner k the triangle across the edge
 * opposite k (NBR[3 t + k]; -1 where the edge has one triangle, more than two, or two of
 * opposite windings), each edge once (EDGES: va, vb, ta, tb; tb -1 as above) and for each vertex
 * 1 / the count of its neighbours (INV_DEG, 0 for none). */
typedef struct {
    int32_t *nbr, *edges;
    float *inv_deg;
    size_t ne;
} cs_mesh_topo;

int cs_mesh_topology(const cs_mesh *m, cs_mesh_topo *t);
void cs_mesh_topo_free(cs_mesh_topo *t);

/* the regularisers' weights, per the refinement: Laplacian sum_v |d_v|^2 and normal
   consistency sum over edges (1 - n_a . n_b), with the mean edge length's scale taken out */
typedef struct {
    double lr;        /* Adam's step, in mean edge lengths */
    double laplacian; /* weight of the mean over vertices of |d_v|^2 / (mean edge)^2 */
    double normal;    /* weight of the mean over edges of 1 - n_a . n_b */
} cs_mesh_geom_opts;

/* Allocates the geometry stage's buffers on D: the positions of vertices below NMOVE move (the
 * others, a background shell, stay). -1 with a message (the budget). */
int cs_mesh_dev_geom_open(cs_mesh_dev *d, const cs_mesh *m, size_t nmove);
/* After cs_mesh_dev_visibility(C): draws, anti-aliases, takes the training loss against PHOTO
 * ((1 - LAMBDA) L1 + LAMBDA D-SSIM) and its gradient to the colours (into d->grad) and the
 * positions, adds the regularisers' gradients and steps the positions (Adam step STEP, from 1).
 * *LOSS when not NULL (then it blocks). */
int cs_mesh_dev_geom_step(cs_mesh_dev *d, const cs_camera *c, const cs_image *photo, float lambda,
                          const cs_mesh_geom_opts *o, int step, double *loss);
/* The pieces of that step, for the tests: the drawing and its anti-aliased image (3, H, W)
   (enqueued), then, given the loss's image gradient V_OUT on the device (3, H, W), the
   gradient before the anti-aliasing (d->v_pre) and per vertex (du, dv, dz) (d->gv). */
int cs_mesh_dev_draw_aa(cs_mesh_dev *d);
int cs_mesh_dev_aa_backward(cs_mesh_dev *d, const cs_buf *v_out);
/* d->gv to world positions at camera C, into d->gp (x, y, z, seen), gv cleared */
int cs_mesh_dev_project_backward(cs_mesh_dev *d, const cs_camera *c);
/* the regularisers' gradients into d->gp with the raw weights KL (Laplacian) and KN (normals) */
int cs_mesh_dev_regularize(cs_mesh_dev *d, float kl, float kn);
/* the positions out (nv x 3) */
int cs_mesh_dev_read_positions(cs_mesh_dev *d, float *pos);

#endif
