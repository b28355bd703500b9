/* readers (private to the scene module): one entry point per dataset format. Each fills S
 * from the folder DATA->path at DATA's resolution and split rules; -1 with a message naming
 * the file and what is wrong. Only scene.c calls them. */
#ifndef CS_READERS_H
#define CS_READERS_H

#include "config.h"
#include "dataset.h"
#include "missing_photos.h"

/* The folder of ROOT's COLMAP model into OUT: sparse/0, or sparse/ itself when it holds
 * cameras.bin or cameras.txt (a single model exported flat, as gsplat reads it). */
void cs_colmap_model_dir(const char *root, char *out, size_t n);
/* COLMAP: {cameras,images,points3D}.{bin,txt} in cs_colmap_model_dir and the image folder. */
int cs_read_colmap(const cs_data_cfg *data, cs_scene *s);
/* Blender / NeRF-synthetic: transforms_train.json (+ transforms_test.json). */
int cs_read_blender(const cs_data_cfg *data, cs_scene *s);
/* nerfstudio: transforms.json. */
int cs_read_nerfstudio(const cs_data_cfg *data, cs_scene *s);

#endif
