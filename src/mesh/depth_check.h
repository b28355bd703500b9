/* depth_check: the rendered depths of a capture's training views checked against each other
 * before they are fused (#38). On a capture with a plain backdrop (a toy before a sheet) the
 * model may put the backdrop's Gaussians at any depth along each view's rays: every depth draws
 * the same colour. Each view's median depth then places surface where no other view sees any,
 * and the fused mesh fills the room with shards the test views see in front of the object. A
 * depth pixel is kept when at least MIN_AGREE of its view's neighbours (the nearest training
 * cameras looking the same way) see a surface at the same place: the point, taken into the
 * neighbour, lies within a relative CS_DCHECK_TOL of the neighbour's own depth there. Others are dropped
 * (fused as no surface; with carve_dropped as free space in front of the dropped depth only:
 * its negative, which tsdf_fuse takes so). The neighbours' depths are kept on the host, every STRIDE-th pixel
 * each way, within a host budget. */
#ifndef CS_DEPTH_CHECK_H
#define CS_DEPTH_CHECK_H

#include <stddef.h>

#include "render.h"

/* neighbours a view is checked against */
#define CS_DCHECK_NEIGHBOURS 8
/* relative depth difference that counts as the same surface */
#define CS_DCHECK_TOL 0.02f
/* the host memory the neighbours' depth maps may take */
#define CS_DCHECK_HOST_BYTES ((size_t)512 << 20)

typedef struct {
    int n;            /* views */
    cs_view *view;    /* each view at its full size */
    int stride;       /* the stored maps keep every stride-th pixel each way */
    int *sw, *sh;     /* the stored maps' sizes */
    float **depth;    /* the stored maps (NULL until cs_depth_check_store) */
    int *nb;          /* CS_DCHECK_NEIGHBOURS a view: its neighbours' indices, -1 past the last */
    int min_agree;    /* neighbours that must agree */
    int carve_dropped; /* a dropped depth becomes its negative (free space in front of it), not 0 */
} cs_depth_check;

/* C for the N views V (copied) with the MIN_AGREE rule, stored maps within HOST_BYTES.
   -1 with a message when out of host memory. */
int cs_depth_check_init(cs_depth_check *c, const cs_view *v, int n, int min_agree, size_t host_bytes);
/* keeps view K's depth map DEPTH (its full width x height, camera z, 0: no surface) */
int cs_depth_check_store(cs_depth_check *c, int k, const float *depth);
/* zeroes (with carve_dropped: negates) the pixels of view K's depth map DEPTH (full size) that
   fewer than min_agree of its neighbours' stored maps agree with; returns how many it dropped
   (of *SEEN pixels with a depth) */
long cs_depth_check_filter(const cs_depth_check *c, int k, float *depth, long *seen);
/* calls FN(ARG, K, P, DEPTH, DROPPED) for every EVERY-th stored pixel (each way) of view K with a
   depth: P its world point, DROPPED whether cs_depth_check_filter drops it */
typedef void (*cs_dcheck_point_fn)(void *arg, int k, const float p[3], float depth, int dropped);
void cs_depth_check_points(const cs_depth_check *c, int k, int every, cs_dcheck_point_fn fn, void *arg);
void cs_depth_check_free(cs_depth_check *c);

#endif
