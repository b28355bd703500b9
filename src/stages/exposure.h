/* exposure: per-view exposure (optim.exposure), graphdeco's per-image exposure: every training
 * view learns an affine colour transform (layout.h, CS_EXPOSURE_W) that the loss applies to
 * the render before comparing it with the view's photo, so the photos' differences in exposure
 * and white balance go into the views' rows instead of into the model. The model itself, and
 * every drawing of it (evaluation, exports, meshes), stays at the identity. */
#ifndef CS_EXPOSURE_H
#define CS_EXPOSURE_H

#include "cl_mem.h"
#include "kernels.h"

typedef struct {
    cs_cl *cl;
    const cs_kernels *k;
    int n_views;
    cs_buf rows, m, v;        /* (n_views, CS_EXPOSURE_W) float: the transforms, Adam's m and v */
    cs_buf out;               /* (3, H, W) the exposed render of the last forward */
    cs_buf partials;          /* (groups, CS_EXPOSURE_W) float: the last backward's gradient parts */
    int *steps;               /* (n_views) each row's Adam steps, for its bias correction */
    int row;                  /* the view the forward and backward transform (cs_exposure_select) */
    unsigned n_groups;        /* groups of the last backward: what the Adam step sums */
} cs_exposure;

/* N_VIEWS identity rows and zero moments on CL (accounted as parameters and optimizer state);
 * -1 on failure (out of memory), with the message set. */
int cs_exposure_open(cs_exposure *e, cs_cl *cl, const cs_kernels *k, int n_views);
void cs_exposure_free(cs_exposure *e);
/* Frees the exposed render's scratch (the rows, moments and the last gradient stay). */
void cs_exposure_trim(cs_exposure *e);
/* The view whose row the next forward, backward and step use (0 <= ROW < n_views). */
void cs_exposure_select(cs_exposure *e, int row);
/* Enqueues e->out = the selected row's transform of IMG ((3, H, W) floats). */
int cs_exposure_forward(cs_exposure *e, const cs_buf *img, int W, int H);
/* Enqueues the backward of the last forward over IMG: V_IMG ((3, H, W), d loss / d e->out)
 * becomes d loss / d IMG in place, and the row's gradient is left in parts for the step. */
int cs_exposure_backward(cs_exposure *e, const cs_buf *img, cs_buf *v_img, int W, int H);
/* Enqueues Adam (beta 0.9, 0.999) at learning rate LR on the selected row with the gradient
 * of the last backward (the row's own step count drives its bias correction), then moves every
 * row by the same amount so that their mean is the identity: a common colour change of all the
 * views is the model's to make (held-out views are drawn at the identity). */
int cs_exposure_step(cs_exposure *e, double lr);
/* Reads every row ((n_views, CS_EXPOSURE_W) floats into OUT). */
int cs_exposure_read(cs_exposure *e, float *out);
/* Writes the rows to PATH (atomically) as graphdeco's exposure.json: an object whose keys are the
 * views' names (NAMES, n_views of them, in row order) and values their 3 x 4 matrices (rows
 * (A_c0, A_c1, A_c2, b_c)). */
int cs_exposure_save(cs_exposure *e, const char *path, const char *const *names);
/* Scratch bytes per pixel of the largest image while training (for the memory plan). */
size_t cs_exposure_bytes_per_pixel(void);

#endif
