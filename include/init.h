/* init: the initial Gaussians of a scene: one per sparse point (colour as the DC SH term) or,
 * without points, random points in [-1.3, 1.3]^3 (graphdeco's synthetic-scene rule); scales
 * from the mean squared distance to the 3 nearest neighbours, identity rotations, opacity 0.1. */
#ifndef CS_INIT_H
#define CS_INIT_H

#include "config.h"
#include "dataset.h"
#include "splats.h"

/* Fills OUT for MODEL's SH degree and 3D filter; RANDOM_POINTS and SEED are used when the
 * scene has no points. -1 with a message (out of host memory). */
int cs_init_splats(const cs_scene *scene, const cs_model_cfg *model, int random_points, int seed, cs_splats *out);

#endif
