/* mesh_device: a vertex-coloured mesh on the device for #38's refinement (cl/mesh_raster.cl):
 * its visibility buffer at a camera, drawn by the host rasterizer's rule (mesh_raster.h, the
 * reference: the same triangle and weights at every pixel up to float rounding), and the
 * colour stage's L1 loss, gradient and Adam step on float colours. Every buffer is accounted
 * (CS_MEM_OTHER). */
#ifndef CS_MESH_DEVICE_H
#define CS_MESH_DEVICE_H

#include "camera.h"
#include "cl_mem.h"
#include "image.h"
#include "kernels.h"
#include "mesh.h"

typedef struct {
    cs_cl *cl;
    cs_kernels k;  /* the mesh program */
    size_t nv, nt, max_px;
    int W, H;      /* the view last drawn */
    cs_buf pos, tris, uvz, depth, tri, wts, gt, col, grad, m1, m2, parts;
    cl_float2 *parts_host;
} cs_mesh_dev;

/* Uploads M (positions, triangles, its colours as 0-1 floats) for views of at most MAX_PX
 * pixels. -1 with a message (the budget, the build). */
int cs_mesh_dev_open(cs_mesh_dev *d, cs_cl *cl, const cs_mesh *m, size_t max_px);
/* Draws the visibility buffer of camera C at its training size (enqueued, does not block). */
int cs_mesh_dev_visibility(cs_mesh_dev *d, const cs_camera *c);
/* The last visibility buffer: TRI (W x H, -1 where none), W (W x H x 3). */
int cs_mesh_dev_read_visibility(cs_mesh_dev *d, int32_t *tri, float *w);
/* The L1 loss of the last view's drawing against PHOTO (its size; RGB, or RGB + a weight):
 * *SUM over covered pixels and channels and *COUNT the weighted pixels (the loss is SUM / (3
 * COUNT)); its gradient times 3 COUNT is added into the device's gradient. Blocks. */
int cs_mesh_dev_color_grad(cs_mesh_dev *d, const cs_image *photo, double *sum, double *count);
/* Adam step STEP (from 1) on the colours with the gradient times SCALE; clears the gradient. */
int cs_mesh_dev_color_adam(cs_mesh_dev *d, double scale, double lr, int step);
/* The colours (nv x 3, 0-1) and the gradient (nv x 3) out, either may be NULL. */
int cs_mesh_dev_read_colors(cs_mesh_dev *d, float *col, float *grad);
void cs_mesh_dev_close(cs_mesh_dev *d);

#endif
