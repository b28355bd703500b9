/* exposure: per-view exposure (optim.exposure), graphdeco's per-image exposure: every training
 * view learns an affine colour transform (layout.h, CS_EXPOSURE_W) that the loss applies to
 * the render before comparing it with the view's photo, so the photos' differences in exposure
 * and white balance go into the views' rows instead of into the model. Evaluations draw each view
 * under its exposure (cs_exposure_select_camera); the model, exports and meshes stay at the identity. */
#ifndef CS_EXPOSURE_H
#define CS_EXPOSURE_H

#include "cl_mem.h"
#include "dataset.h"
#include "kernels.h"

/* A held-out view's exposure: the inverse-distance blend of the rows of the training views
 * whose camera centres are nearest to its own. Measured on south_building (H200, 7k seeds 1
 * and 2 and 30k, test PSNR): 1 view 22.31 / 22.49 / 22.98 dB, 2 22.43 / 22.59 / 23.05, 3 22.53 /
 * 22.71 / 23.25, 5 22.56 / 22.75 / 23.27, 8 22.52 / 22.71 / 23.23 (README, "Per-view exposure"). */
#define CS_EXPOSURE_NEAREST 5

typedef struct {
    cs_cl *cl;
    const cs_kernels *k;
    const cs_scene *scene;    /* borrowed: the cameras */
    const int *cams;          /* borrowed: (n_views) the camera of each row (the training split) */
    int n_views;
    cs_buf rows, m, v;        /* (n_views + 1, CS_EXPOSURE_W) float: the transforms, the last a held-out
                                 view's blend (cs_exposure_select_camera); Adam's m and v (n_views) */
    cs_buf out;               /* (3, H, W) the exposed render of the last forward */
    cs_buf partials;          /* (groups, CS_EXPOSURE_W) float: the last backward's gradient parts */
    int *steps;               /* (n_views) each row's Adam steps, for its bias correction */
    int row;                  /* the view the forward and backward transform (cs_exposure_select) */
    unsigned n_groups;        /* groups of the last backward: what the Adam step sums */
} cs_exposure;

/* Identity rows and zero moments on CL for the N_VIEWS cameras CAMS of SCENE (the training
 * split; accounted as parameters and optimizer state); -1 on failure (out of memory), with the
 * message set. */
int cs_exposure_open(cs_exposure *e, cs_cl *cl, const cs_kernels *k, const cs_scene *scene, const int *cams,
                     int n_views);
void cs_exposure_free(cs_exposure *e);
/* Frees the exposed render's scratch (the rows, moments and the last gradient stay). */
void cs_exposure_trim(cs_exposure *e);
/* The view whose row the next forward, backward and step use (0 <= ROW < n_views). */
void cs_exposure_select(cs_exposure *e, int row);
/* Camera CAM's transform into OUT from ROWS ((N, CS_EXPOSURE_W), the rows of the N training
 * cameras CAMS of S): its own row when it is one of CAMS, else (a held-out view) the
 * inverse-distance blend of its CS_EXPOSURE_NEAREST nearest training views' rows (the
 * identity when N is 0). On the host. */
void cs_exposure_row_of(const cs_scene *s, const int *cams, int n, const float *rows, int cam, float out[CS_EXPOSURE_W]);
/* Selects camera CAM's row: its own when it is one of e->cams, else (a held-out view) the
 * blend of its CS_EXPOSURE_NEAREST nearest training views' rows, written to the spare row
 * (blocks: reads and writes the rows). */
int cs_exposure_select_camera(cs_exposure *e, int cam);
/* The K (at most N) rows whose cameras TRAIN (N of them) have the centres nearest to camera
 * CAM's, nearest first, into ROWS, with inverse-distance weights summing to 1 into W; returns
 * how many. */
int cs_exposure_neighbours(const cs_scene *s, const int *train, int n, int cam, int k, int *rows, double *w);
/* Enqueues e->out = the selected row's transform of IMG ((3, H, W) floats). */
int cs_exposure_forward(cs_exposure *e, const cs_buf *img, int W, int H);
/* Enqueues the same transform of IMG in place (an evaluation's render). */
int cs_exposure_apply(cs_exposure *e, cs_buf *img, int W, int H);
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
/* Sets every row from ROWS ((n_views, CS_EXPOSURE_W) floats). */
int cs_exposure_write(cs_exposure *e, const float *rows);
/* ROWS ((N, CS_EXPOSURE_W)) of the N training cameras CAMS of S from PATH (cs_exposure_save's
 * file), matched by the cameras' names; a camera it does not name gets the identity, *FOUND
 * how many it named. On the host; -1 with a message naming the file when it is not such a file. */
int cs_exposure_parse(const char *path, const cs_scene *s, const int *cams, int n, float *rows, int *found);
/* Sets the rows from PATH (cs_exposure_save's file), matching its names to the cameras'; a
 * camera it does not name keeps the identity. *FOUND gets how many it named. -1 with a message
 * naming the file when it is not such a file. */
int cs_exposure_load(cs_exposure *e, const char *path, int *found);
/* Scratch bytes per pixel of the largest image while training (for the memory plan). */
size_t cs_exposure_bytes_per_pixel(void);

#endif
