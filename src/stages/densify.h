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
} cs_densifier;

/* Accumulates view-space gradient statistics of the last backward. */
int cs_densify_stats(cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_renderer *r, int W, int H);
/* Clone / split / prune. MAX_N caps the count (highest-gradient candidates first).
 * CHECK_SIZE enables the screen / world size prune. Stats are zeroed afterwards. Blocks to
 * read the candidate counts (and, over budget, the statistics). */
int cs_densify_step(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_model *m, const cs_densify_cfg *cfg, double extent,
                    int check_size, int max_n, unsigned seed);
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
