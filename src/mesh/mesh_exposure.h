/* mesh_exposure: a model's per-view exposure (optim.exposure, exposure.h) in the mesh stage
 * (#38). A model trained with exposures is the scene at the identity: each training photo is
 * that scene under its view's 3 x 4 colour transform. The refinement (mesh_refine.h) compares
 * each training view's drawing under that view's transform with its photo (the pseudo-views,
 * drawn by the model, at the identity), so the mesh's colours are the scene's and not each
 * place's exposure; `--psnr` (mesh_eval.h) draws a held-out view under the blend of its nearest
 * training views' transforms, as the splat evaluation does. The mesh written is at the identity. */
#ifndef CS_MESH_EXPOSURE_H
#define CS_MESH_EXPOSURE_H

#include "dataset.h"
#include "exposure.h"
#include "image.h"

typedef struct {
    cs_split split; /* the scene's training cameras: the rows' order */
    float *rows;    /* (split.n_train, CS_EXPOSURE_W) */
    int found;      /* training views the file names (the others: the identity) */
} cs_mesh_exposure;

/* The rows of SCENE's training views from PATH (a model's exposure.json). -1 with a message. */
int cs_mesh_exposure_load(cs_mesh_exposure *x, const cs_scene *scene, const char *path);
void cs_mesh_exposure_free(cs_mesh_exposure *x);
/* Camera CAM's transform (its own row, or a held-out view's blend) applied to IMG (8-bit RGB,
 * CAM's drawing) in place, each value rounded and clamped to 0-255. */
void cs_mesh_exposure_apply(const cs_mesh_exposure *x, const cs_scene *scene, int cam, cs_image *img);

#endif
