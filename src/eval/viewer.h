/* viewer: a saved model on the device for forward-only work (render, eval, mesh): the program
 * built for its SH degree and 3D filter, the model uploaded, a renderer and a loss. */
#ifndef CS_VIEWER_H
#define CS_VIEWER_H

#include "config.h"
#include "kernels.h"
#include "loss.h"
#include "model.h"
#include "render.h"
#include "scene.h"
#include "splats.h"

typedef struct {
    cs_kernels k;
    cs_model m;
    cs_renderer r;
    cs_loss loss;
    int ready;
} cs_viewer;

/* Builds PROGRAMS (CS_PROGS_* bits) for S's SH degree and 3D filter (with CFG's storage and
 * antialias mode) and the stored tuning choice (never measures), uploads S; its loss measures
 * against SCENE's ground truth. */
int cs_viewer_open(cs_viewer *w, cs_cl *cl, const cs_config *cfg, const cs_splats *s, const cs_scene *scene,
                   unsigned programs);
/* Releases everything cs_viewer_open made (nothing when it failed). */
void cs_viewer_close(cs_viewer *w, cs_cl *cl);

#endif
