/* mesh_eval: a mesh judged against the photos (clsplat mesh --eval): drawn with its colours
 * (per vertex, or its texture) at the scene's test views (mesh_raster.h) and compared with each
 * photo by PSNR, on the host in threads, one view per thread at a time. */
#ifndef CS_MESH_EVAL_H
#define CS_MESH_EVAL_H

#include "dataset.h"
#include "mesh.h"
#include "mesh_exposure.h"

typedef struct {
    int views;           /* views compared */
    const char *split;   /* "test", or "train" when the scene has no test views */
    double psnr, psnr_min; /* mean and lowest over the views, dB */
    char worst[128];     /* the lowest view's name */
    double coverage;     /* fraction of the pixels a triangle covers, over the views */
    /* on scenes whose photos have alpha (Blender): the share of the object's pixels (alpha >= 0.5)
       the mesh leaves undrawn (holes, thin silhouettes) and of the others it draws; the
       object's share of the pixels. -1 without alpha */
    double object_missed, background_drawn, object_share;
    double secs;
} cs_mesh_eval_result;

/* Compares M with SCENE's test views (every 8th training view when there are none); with
 * RENDERS, each view's drawing is written there as <stem>.png (atomically). PSNR is over the
 * RGB channels at the training resolution, weighted by the mask where the scene has one; on a
 * Blender scene the drawn pixels are also compared with the photos' alpha. With EXPOSURE (the
 * model's per-view exposure; NULL: none) each drawing is taken under its view's transform (a
 * held-out view's: the blend of its nearest training views') before it is compared or written. SAMPLES:
 * each pixel the mean of SAMPLES x SAMPLES samples (mesh_raster.h; 0, 1: its centre). */
int cs_mesh_eval(const cs_mesh *m, const cs_scene *scene, const cs_mesh_exposure *exposure, int samples,
                 const char *renders, cs_mesh_eval_result *r);
/* The same over the N scene cameras VIEWS (training views under their own transforms) with no
 * drawings written; r->split is SPLIT. */
int cs_mesh_eval_views(const cs_mesh *m, const cs_scene *scene, const cs_mesh_exposure *exposure, int samples,
                       const int *views, int n, const char *split, cs_mesh_eval_result *r);

#endif
