/* scene: loads a dataset folder (format detected from its files: COLMAP, Blender /
 * NeRF-synthetic, nerfstudio) into a cs_scene (dataset.h), and decodes a camera's image at
 * the training resolution. */
#ifndef CS_SCENE_H
#define CS_SCENE_H

#include "config.h"
#include "dataset.h"
#include "image.h"

/* Loads the dataset at data->path. -1 with a message naming the file and what is wrong. */
int cs_scene_load(const cs_data_cfg *data, cs_scene *out);
/* Decodes a camera's image, composites alpha over the background and resamples to the
 * training resolution. Result is 8-bit RGB. */
int cs_scene_read_image(const cs_scene *s, const cs_camera *cam, cs_image *out);

#endif
