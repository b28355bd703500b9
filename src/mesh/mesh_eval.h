/* mesh_eval: a mesh judged against the photos (clsplat mesh --eval): drawn with its vertex
 * colours at the scene's test views (mesh_raster.h) and compared with each photo by PSNR, on
 * the host in threads, one view per thread at a time. */
#ifndef CS_MESH_EVAL_H
#define CS_MESH_EVAL_H

#include "dataset.h"
#include "mesh.h"

typedef struct {
    int views;           /* views compared */
    const char *split;   /* "test", or "train" when the scene has no test views */
    double psnr, psnr_min; /* mean and lowest over the views, dB */
    double coverage;     /* fraction of the pixels a triangle covers, over the views */
    double secs;
} cs_mesh_eval_result;

/* Compares M with SCENE's test views (every 8th training view when there are none); with
 * RENDERS, each view's drawing is written there as <stem>.png (atomically). PSNR is over the
 * RGB channels at the training resolution, weighted by the mask where the scene has one. */
int cs_mesh_eval(const cs_mesh *m, const cs_scene *scene, const char *renders, cs_mesh_eval_result *r);

#endif
