/* densify: graphdeco adaptive density control on the device (statistics, clone, split,
 * prune, opacity reset) within a Gaussian budget, and the mip-splatting 3D filter. */
#ifndef CS_DENSIFY_H
#define CS_DENSIFY_H

#include "config.h"
#include "model.h"
#include "render.h"
#include "scene.h"

typedef struct {
    cs_buf flags, counts, offsets, keep, scratch, dist, maxbits, cams;
    int ncams;
    float max_focal;
    cs_buf score, mask; /* the error score (N) and a view's high-error mask (3, H, W) */
    int score_views;    /* views scored since the last refinement */
    float score_weight; /* their sum of 1 / pixel area: the divisor of the mean score */
    long wanted;        /* the rows the last cs_densify_step's candidates asked for, before MAX_N held them back */
} cs_densifier;

/* Accumulates view-space gradient statistics of the last backward. */
int cs_densify_stats(cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_renderer *r, int W, int H);
/* The error score of view V (densify.error_views): renders it with the model M, marks the
 * pixels whose mean absolute error against GT (8-bit, GT_CHANNELS a pixel at GT_OFF) is above
 * THRESHOLD, and adds each Gaussian's blend weight over them (the rasterizer's backward of the
 * mask, cs_render_backward_2d) into d->score, counted in d->score_views; the next
 * cs_densify_step reads both and clears them. The model's gradients are left alone. A view
 * drawn smaller than the camera's full size gives PIXEL_AREA > 1, the full-size pixels one of
 * its pixels stands for: its scores count PIXEL_AREA times (d->score_weight grows by 1 /
 * PIXEL_AREA, and the mean score is the sum over it). */
int cs_error_score_view(cs_densifier *d, cs_renderer *r, const cs_model *m, const cs_view *v, int active_degree,
                        const float bg[3], cs_buf *gt, unsigned gt_off, int gt_channels, float threshold,
                        float pixel_area);
/* Clone / split / prune. MAX_N caps the count (highest-gradient candidates first). With views
 * scored (cs_error_score_view), a Gaussian whose mean score reaches cfg->error_score is a
 * candidate too, unless the candidates are over MAX_N (then the gradient ranks them alone).
 * CHECK_SIZE enables the screen / world size prune. Stats are zeroed afterwards. Blocks to
 * read the candidate counts (and, over budget, the statistics). */
int cs_densify_step(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_model *m, const cs_densify_cfg *cfg, double extent,
                    int check_size, int max_n, unsigned seed);
/* The rows an importance prune keeps: FLAGS[i] = 1 for the KEEP rows of largest SCORE (of N;
 * a NaN counts as 0; among rows tied at the cut, the lowest indices), 0 for the others, and,
 * unless OFFSETS is NULL, OFFSETS[i] = the kept rows before i (the compaction's destinations).
 * -1 with a message when out of host memory or KEEP is outside 0 .. N. */
int cs_prune_keep_flags(const float *score, int n, int keep, cl_uint *flags, cl_uint *offsets);
/* densify.prune_fraction: drops FRACTION of the rows (rounded down), those with the least score
 * summed over the views scored since the last use (cs_error_score_view with a threshold below 0
 * marks every pixel, so the score is the blend weight over the whole view: the importance), and
 * compacts the model, moving each row's parameters, moments and statistics. Blocks to read the
 * scores. -1 with a message when no view was scored. */
int cs_importance_prune(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_model *m, double fraction);
/* Enqueues opacity <- min(opacity, 0.01), or with DECAY in (0, 1) opacity * DECAY where that stays
   at least 1/255 (densify.opacity_decay), with the opacity moments zeroed; does not block. */
int cs_densify_reset_opacity(cs_cl *cl, const cs_kernels *k, cs_model *m, float decay);
/* Uploads the training cameras for the 3D filter (blocks). */
int cs_filter3d_setup(cs_cl *cl, cs_densifier *d, const cs_scene *s);
/* Recomputes every Gaussian's 3D filter from the training cameras (mip-splatting's
 * compute_3D_filter); enqueued, does not block. */
int cs_filter3d_compute(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_model *m);
/* Frees the densification scratch (the cameras stay). */
void cs_densifier_trim(cs_cl *cl, cs_densifier *d);
/* Frees everything. */
void cs_densifier_free(cs_cl *cl, cs_densifier *d);

#endif
