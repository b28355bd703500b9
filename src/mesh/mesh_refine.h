/* mesh_refine: the appearance stage of #38's refinement under a triangle budget: a mesh's
 * vertex colours fitted to the training photos by Adam through the visibility buffer
 * (mesh_raster.h). The geometry is fixed in this stage, so each pixel's triangle and weights
 * are exact and the drawing is linear in the colours. On the device (mesh_device.h) the loss is
 * training's, (1 - W) L1 + W D-SSIM over the drawn image; on the host, the reference, it is
 * L = mean over covered pixels and channels of |w0 c_0 + w1 c_1 + w2 c_2 - photo|, dL/dc_k =
 * w_k sign(residual) / count (the device's at W 0, up to the mean's count). Views are drawn one
 * an iteration in a fixed shuffled order, photos decoded once and kept on the host. */
#ifndef CS_MESH_REFINE_H
#define CS_MESH_REFINE_H

#include "cl_runtime.h"
#include "dataset.h"
#include "image.h"
#include "mesh.h"
#include "mesh_exposure.h"
#include "mesh_geom.h"
#include "mesh_pseudo.h"

typedef struct {
    int iterations; /* views drawn (one an iteration) */
    int samples;    /* on the device: each photo pixel fitted with the mean of SAMPLES x SAMPLES samples of the
                       drawing (mesh_device.h; 0, 1: its centre, as the host always does) */
    double lr;      /* Adam's step on colours in [0, 1], at each stage's first view (cs_mesh_refine_lr) */
    double dssim;   /* on the device: the loss is (1 - this) L1 + this D-SSIM over the drawn image, as
                       training's (the host, the reference, takes L1 over the drawn pixels) */
    unsigned seed;  /* the view order */
    int geometry;   /* views of the geometry stage after the colours' (device only; 0: none): the
                       positions of the vertices below NMOVE and the colours fitted together */
    size_t nmove;
    cs_mesh_geom_opts geom; /* its step (decayed to a tenth over the stage) and regularisers */
    int profile;            /* on the device: time every launch, print each kernel's share */
    int texture;            /* then a texture of this many subdivisions (cl/mesh_tex.h; 0: none), made from
                               the refined vertex colours and fitted over TEXTURE_VIEWS more views
                               (device only; mesh_texture_dev.h) */
    int texture_views;
    const cs_mesh_pseudo *pseudo; /* more views, drawn by the splat model, shuffled in with the photos (NULL: none) */
    const cs_mesh_exposure *exposure; /* the model's per-view exposure (device only; NULL: none): each training
                                         view's drawing is compared with its photo under the view's transform,
                                         the pseudo-views' at the identity */
    double exposure_lr;           /* > 0 (device only): the training views' exposures are learned with the colours
                                     and positions (from EXPOSURE's rows, or the identity), Adam at this step
                                     falling to a tenth, their mean held at the identity; the texture stage keeps
                                     them */
    cs_mesh_exposure *learned;    /* with exposure_lr: the rows learned (the caller frees them; NULL: not kept) */
    const uint8_t *held_out;      /* per scene camera: 1 leaves that training view out of the refinement, kept
                                     to judge it (mesh_step.h; NULL: none) */
} cs_mesh_refine_opts;

typedef struct {
    double l1_first, l1_last; /* mean loss of the first and of the last tenth of the iterations */
    double tex_first, tex_last; /* the same over the texture stage's views */
    double tex_seconds;
    int views;
    double seconds;
} cs_mesh_refine_stats;

/* Every Adam step of the refinement falls from LR to LR x CS_MESH_LR_DECAY over its views: the
 * colours' over the colour and geometry stages together, the positions' over the geometry stage,
 * the texture's over its own, the exposures' over all but the texture's. A constant step leaves
 * the colours where the last few views pulled them (south_building's mesh at 1M triangles: +0.35 dB
 * on the H100 from the decay, README). The step of view IT (from 0) of N. */
#define CS_MESH_LR_DECAY 0.1
double cs_mesh_refine_lr(double lr, int it, int n);

/* The loss of camera C's drawing of M with float colours COL (nv x 3, 0-1) against PHOTO (its
 * training-size ground truth, RGB or RGB + weight), and, when GRAD is not NULL, its gradient
 * added into GRAD (nv x 3). TRI and W: the view's visibility buffer. *COUNT: covered pixels
 * weighed (the loss is a mean over them). */
double cs_mesh_color_loss(const cs_mesh *m, const float *col, const cs_image *photo, const int32_t *tri, const float *w,
                          float *grad, double *count);

/* Fits M's vertex colours to SCENE's training views (O), then with O->geometry its positions
 * too, then with O->texture a texture (m->tex): on CL's device (mesh_device.h, mesh_geom.h,
 * mesh_texture_dev.h), or with CL NULL on the host (the colours' reference the tests compare
 * the device with; no geometry, texture or exposure). A progress line each tenth of the iterations
 * when PROGRESS. -1 with a message. */
int cs_mesh_refine_colors(cs_mesh *m, const cs_scene *scene, cs_cl *cl, const cs_mesh_refine_opts *o, int progress,
                          cs_mesh_refine_stats *st);

#endif
