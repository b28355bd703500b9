/* init: the initial Gaussians of a scene: one per sparse point (colour as the DC SH term) or,
 * without points, random points in [-1.3, 1.3]^3 (graphdeco's synthetic-scene rule), or with
 * optim.init_random, random points in 3x the camera extent around the cameras; scales from the
 * mean squared distance to the 3 nearest neighbours times optim.init_scale, identity
 * rotations, opacity optim.init_opacity (0.1 graphdeco, 0.5 for MCMC). */
#ifndef CS_INIT_H
#define CS_INIT_H

#include "config.h"
#include "dataset.h"
#include "splats.h"

/* Fills OUT for MODEL's SH degree and 3D filter by O (random points and seed; the init_*
 * settings resolved, cs_config_strategy_defaults). -1 with a message (out of host memory). */
int cs_init_splats(const cs_scene *scene, const cs_model_cfg *model, const cs_optim_cfg *o, cs_splats *out);

#endif
