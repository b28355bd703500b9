/* mesh_device: a vertex-coloured mesh on the device for #38's refinement (cl/mesh_raster.cl):
 * its visibility buffer at a camera, drawn by the host rasterizer's rule (mesh_raster.h, the
 * reference: the same triangle and weights at every pixel up to float rounding), and the
 * colour stage: the drawing, the training loss (loss.h: (1 - lambda) L1 + lambda D-SSIM) and its
 * gradient taken to the vertex colours, and Adam on them. Every buffer is accounted.
 * Supersampled (S > 1), a view is drawn at S times its size and each photo pixel compared with
 * the mean of its S x S samples (the host's --psnr-samples drawing, mesh_raster.h), the loss's
 * gradient spread back over them: the refinement fits the anti-aliased drawing. */
#ifndef CS_MESH_DEVICE_H
#define CS_MESH_DEVICE_H

#include "camera.h"
#include "cl_mem.h"
#include "image.h"
#include "kernels.h"
#include "loss.h"
#include "mesh.h"
#include "mesh_raster.h"

/* the profiling bucket of the refinement's launches, after training's stages (clsplat mesh
   --profile; with profiling off no event is made) */
#define CS_MESH_PROF_STAGE CS_STAGE_COUNT

typedef struct {
    cs_cl *cl;
    cs_kernels k;  /* the mesh and loss programs */
    cs_loss loss;
    size_t nv, nt, max_px; /* max_px: the largest photo */
    int S;         /* samples a side of a photo pixel (1: its centre alone) */
    int W, H;      /* the view last drawn, at S times the photo's size */
    int pw, ph;    /* its photo's size */
    cl_float4 bg;  /* where no triangle is drawn */
    cs_buf pos, tris, uvz, depth, tri, wts, gt, img, col, grad, m1, m2;
    cs_buf lo, v_hi; /* with S > 1: the drawing boxed down to the photo's size, the loss's gradient spread
                        back over the samples */
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

/* Uploads M (positions, triangles, its colours as 0-1 floats) for photos of at most MAX_PX
 * pixels, each drawn with SAMPLES x SAMPLES samples a pixel (1 to CS_MESH_RASTER_MAX_SAMPLES)
 * over the background BG (0-1). -1 with a message (the budget, the build). */
int cs_mesh_dev_open(cs_mesh_dev *d, cs_cl *cl, const cs_mesh *m, size_t max_px, int samples, const float bg[3]);
/* Camera C at the drawing's size: S times its training size */
cs_camera cs_mesh_dev_camera(const cs_mesh_dev *d, const cs_camera *c);
/* Draws the visibility buffer of camera C at S times its training size (enqueued, does not block). */
int cs_mesh_dev_visibility(cs_mesh_dev *d, const cs_camera *c);
/* The last visibility buffer: TRI (d->W x d->H, -1 where none), W (d->W x d->H x 3). */
int cs_mesh_dev_read_visibility(cs_mesh_dev *d, int32_t *tri, float *w);
/* The training loss of the last view's drawing against PHOTO (its size; RGB, or RGB + a weight),
 * (1 - LAMBDA) L1 + LAMBDA (1 - SSIM), means over the whole image as training takes them: its
 * gradient added into the device's colour gradient, its value and L1 into *LOSS and *L1 (NULL:
 * not read, nothing blocks). */
int cs_mesh_dev_color_grad(cs_mesh_dev *d, const cs_image *photo, float lambda, double *loss, double *l1);
/* Its pieces, which the geometry and texture stages (mesh_geom.h, mesh_texture_dev.h) share:
 * PHOTO (the last view's size, RGB or RGB + a weight) uploaded as the loss's ground truth; the
 * drawing of the last visibility buffer with the colours into d->img; the training loss of a
 * drawing IMG (3, H, W at the drawing's size) against the photo, boxed down first when S > 1,
 * with *V the loss's gradient at the drawing's size; the image gradient V (3, H, W) taken to the
 * colours' gradient through the same weights (all enqueued). */
int cs_mesh_dev_set_photo(cs_mesh_dev *d, const cs_image *photo);
int cs_mesh_dev_draw(cs_mesh_dev *d);
int cs_mesh_dev_loss(cs_mesh_dev *d, const cs_buf *img, float lambda, const cs_buf **v);
int cs_mesh_dev_scatter(cs_mesh_dev *d, const cs_buf *v);
/* Adam step STEP (from 1) on the colours with the gradient times SCALE; clears the gradient. */
int cs_mesh_dev_color_adam(cs_mesh_dev *d, double scale, double lr, int step);
/* The colours (nv x 3, 0-1) and the gradient (nv x 3) out, either may be NULL. */
int cs_mesh_dev_read_colors(cs_mesh_dev *d, float *col, float *grad);
void cs_mesh_dev_close(cs_mesh_dev *d);

#endif
