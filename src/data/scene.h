/* scene: loads a dataset folder (format detected from its files: COLMAP, Blender /
 * NeRF-synthetic, nerfstudio) into a cs_scene (dataset.h) with its masks and undistortion
 * maps, and decodes a camera's image at the training resolution. */
#ifndef CS_SCENE_H
#define CS_SCENE_H

#include <stdio.h>

#include "config.h"
#include "dataset.h"
#include "image.h"

/* Loads the dataset at data->path. -1 with a message naming the file and what is wrong. */
int cs_scene_load(const cs_data_cfg *data, cs_scene *out);
/* Decodes a camera's image, composites alpha over the background, resamples to the training
 * resolution and undistorts it (undistort.h). Result is 8-bit RGB, or RGB and a weight (masks.h)
 * when the scene is weighted (cs_scene_gt_channels). */
int cs_scene_read_image(const cs_scene *s, const cs_camera *cam, cs_image *out);
/* A camera's photo's alpha at the training resolution (*ALPHA: W x H, new; NULL when the photo
 * has no alpha channel, or is undistorted: only straight photos of objects carry one). */
int cs_scene_read_alpha(const cs_camera *cam, uint8_t **alpha);
/* The training cameras' largest distance from their centroid (CENTRE, when not NULL); -1 without
   training cameras. */
double cs_scene_camera_spread(const cs_scene *s, double centre[3]);
/* Twice the training cameras' largest distance from their centroid: a depth past which a view
 * holds no part of the scene worth meshing or scaling depth maps to (0 with one camera position,
 * -1 with no training view). */
double cs_scene_far_depth(const cs_scene *s);
/* One line for lens distortion and one for masks, when the scene has them. */
void cs_scene_describe(const cs_scene *s, FILE *out);

#endif
