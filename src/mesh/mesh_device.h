/* mesh_device: a vertex-coloured mesh on the device for #38's refinement (cl/mesh_raster.cl):
 * its visibility buffer at a camera, drawn by the host rasterizer's rule (mesh_raster.h, the
 * reference: the same triangle and weights at every pixel up to float rounding), and the
 * colour stage: the drawing, the training loss (loss.h: (1 - lambda) L1 + lambda D-SSIM) and its
 * gradient taken to the vertex colours, and Adam on them. Every buffer is accounted. */
#ifndef CS_MESH_DEVICE_H
#define CS_MESH_DEVICE_H

#include "camera.h"
#include "cl_mem.h"
#include "image.h"
#include "kernels.h"
#include "loss.h"
#include "mesh.h"

/* the profiling bucket of the refinement's launches, after training's stages (clsplat mesh
   --profile; with profiling off no event is made) */
#define CS_MESH_PROF_STAGE CS_STAGE_COUNT

typedef struct {
    cs_cl *cl;
    cs_kernels k;  /* the mesh and loss programs */
    cs_loss loss;
    size_t nv, nt, max_px;
    int W, H;      /* the view last drawn */
    cl_float4 bg;  /* where no triangle is drawn */
    cs_buf pos, tris, uvz, depth, tri, wts, gt, img, col, grad, m1, m2;
    /* the geometry stage's (mesh_geom.h), when it is open: the topology, the anti-aliased drawing
       and its gradient, per vertex (du, dv, dz, -) and (dx, dy, dz, seen), the Laplacian's sums,
       Adam's moments of the positions */
    cs_buf nbr, edges, inv_deg, img_aa, v_pre, gv, gp, acc, pm1, pm2;
    size_t ne, nmove;
    double edge_len; /* the mean edge length, the positions' scale */
    /* the texture stage's (mesh_texture_dev.h), when it is open: the lattice of colours (0-1),
       its gradient and Adam's moments, nt x nodes x 3 each */
    cs_buf tex, tgrad, tm1, tm2;
    int tex_r;
} cs_mesh_dev;

/* Uploads M (positions, triangles, its colours as 0-1 floats) for views of at most MAX_PX
 * pixels, drawn over the background BG (0-1). -1 with a message (the budget, the build). */
int cs_mesh_dev_open(cs_mesh_dev *d, cs_cl *cl, const cs_mesh *m, size_t max_px, const float bg[3]);
/* Draws the visibility buffer of camera C at its training size (enqueued, does not block). */
int cs_mesh_dev_visibility(cs_mesh_dev *d, const cs_camera *c);
/* The last visibility buffer: TRI (W x H, -1 where none), W (W x H x 3). */
int cs_mesh_dev_read_visibility(cs_mesh_dev *d, int32_t *tri, float *w);
/* The training loss of the last view's drawing against PHOTO (its size; RGB, or RGB + a weight),
 * (1 - LAMBDA) L1 + LAMBDA (1 - SSIM), means over the whole image as training takes them: its
 * gradient added into the device's colour gradient, its value and L1 into *LOSS and *L1 (NULL:
 * not read, nothing blocks). */
int cs_mesh_dev_color_grad(cs_mesh_dev *d, const cs_image *photo, float lambda, double *loss, double *l1);
/* Its pieces, which the geometry stage (mesh_geom.h) shares: PHOTO (the last view's size, RGB or
 * RGB + a weight) uploaded as the loss's ground truth; the drawing of the last visibility
 * buffer with the colours into d->img; the image gradient V (3, H, W) taken to the colours'
 * gradient through the same weights (all enqueued). */
int cs_mesh_dev_set_photo(cs_mesh_dev *d, const cs_image *photo);
int cs_mesh_dev_draw(cs_mesh_dev *d);
int cs_mesh_dev_scatter(cs_mesh_dev *d, const cs_buf *v);
/* Adam step STEP (from 1) on the colours with the gradient times SCALE; clears the gradient. */
int cs_mesh_dev_color_adam(cs_mesh_dev *d, double scale, double lr, int step);
/* The colours (nv x 3, 0-1) and the gradient (nv x 3) out, either may be NULL. */
int cs_mesh_dev_read_colors(cs_mesh_dev *d, float *col, float *grad);
void cs_mesh_dev_close(cs_mesh_dev *d);

#endif
