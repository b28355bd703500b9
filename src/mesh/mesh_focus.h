/* mesh_focus: the part of a capture its training views look at together (#38). On a capture
 * taken walking round an object the Gaussians' box is set by the room behind it, and a grid of
 * at most 512 voxels along that box gives the object coarse voxels. The focus is the box of the
 * opaque Gaussians that at least a share of the training views see (inside the image, in front
 * of the camera, within the depth limit): the object and what stands near it. */
#ifndef CS_MESH_FOCUS_H
#define CS_MESH_FOCUS_H

#include <stddef.h>

#include "scene.h"
#include "splats.h"

/* the share of the training views a Gaussian must be seen by to count (mesh --focus) */
#define CS_MESH_FOCUS_SHARE 0.5

/* BOX (lo[3], hi[3]): the 0.5 - 99.5 percentiles per axis of the centres of the Gaussians over
   MIN_LOGIT opacity that at least SHARE of SCENE's training views see within MAX_DEPTH (a
   sample of at most a few million Gaussian-view pairs); *KEPT: how many of the sampled counted,
   *SAMPLED: of how many. 1 when fewer than 10 count (BOX untouched), -1 with a message on
   failure, else 0. */
int cs_mesh_focus_box(const cs_scene *scene, const cs_splats *s, float min_logit, double max_depth, double share,
                      float box[6], size_t *kept, size_t *sampled);

#endif
