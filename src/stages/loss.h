/* loss: (1 - lambda) L1 + lambda (1 - SSIM) forward and backward into the renderer's v_img,
 * and the evaluation metrics (L1, PSNR, SSIM) of one image, with their scratch. */
#ifndef CS_LOSS_H
#define CS_LOSS_H

#include "exposure.h"
#include "render.h"

#define CS_LOSS_SLOTS 64 /* slots of the sums buffer */

typedef struct {
    cs_cl *cl;
    const cs_kernels *k;
    cs_buf dmap3, partials, sums;     /* scratch: 3 derivative maps, partial sums, sums */
    cs_buf v_img;                    /* (3, H, W) d loss / d rendered image, for the backward */
    cs_buf gt_small;                 /* the ground truth at a lower resolution (cs_loss_gt_scaled) */
    int n_sums;                      /* reduced slots written since the last read */
    int gt_channels;                 /* ground truth layout: 3 (RGB, the default) or 4 (RGB and a weight) */
    double slot_values[CS_LOSS_SLOTS]; /* 3 x W x H of the image each slot's sums were taken over */
    cs_exposure *exposure;           /* borrowed; set: training compares the render under the selected
                                        view's exposure (optim.exposure), the metrics never do */
} cs_loss;

typedef struct {
    double l1, mse, ssim, psnr;
} cs_metrics;

/* An empty loss on CL with K's kernels; scratch is allocated at the first image. */
void cs_loss_init(cs_loss *l, cs_cl *cl, const cs_kernels *k);
/* Frees all scratch, the sums too. */
void cs_loss_free(cs_loss *l);
/* Enqueues the loss of IMG ((3, H, W) floats: a render) against GT (8-bit, l->gt_channels a pixel, at byte offset GT_OFF
 * in GT) and its gradient into l->v_img (does not block). With a weight channel, the loss is
 * still a mean over all pixels, a masked pixel counting 0 (so an image's gradient does not grow
 * as more of it is masked), while the metrics below are means over the unmasked pixels. The
 * image's sums go to slot SLOT of the sums buffer (read with cs_loss_read); SLOT -1: no sums (one
 * launch less, for a training step whose loss nobody reads). With l->exposure the loss is that of
 * the render under the selected view's exposure, and v_img the gradient of the render itself. */
int cs_loss_forward_backward(cs_loss *l, const cs_buf *img, const cs_buf *gt, unsigned gt_off, int W, int H, float lambda,
                             int slot);
/* Enqueues the metrics only (render clamped to [0, 1] as graphdeco's evaluation does), into
 * SLOT; does not block. */
int cs_loss_metrics(cs_loss *l, const cs_buf *img, const cs_buf *gt, unsigned gt_off, int W, int H, int slot);
/* Reads slot SLOT (blocks until the sums are computed): L1, MSE, SSIM means over the image the
 * slot was last filled from, at its size (over its pixels' weights with a weight channel), and
 * the loss value for LAMBDA. */
int cs_loss_read(cs_loss *l, int slot, float lambda, cs_metrics *m, double *loss);
/* Enqueues GT (W x H at GT_OFF, l->gt_channels a pixel) box-averaged F x F into l->gt_small
 * (W / F x H / F), for a view trained at 1/F of its size; *OUT gets the buffer (offset 0). */
int cs_loss_gt_scaled(cs_loss *l, cs_buf *gt, unsigned gt_off, int W, int H, int f, cs_buf **out);
/* Frees the per-image scratch (the sums slots stay). */
void cs_loss_trim(cs_loss *l);
/* Scratch bytes per pixel of the largest image (for the memory plan): training (the loss and
 * its gradient), and metrics alone (what an evaluation allocates). */
size_t cs_loss_bytes_per_pixel(void);
size_t cs_loss_metric_bytes_per_pixel(void);

#endif
