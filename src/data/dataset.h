/* dataset: what a reader makes of a dataset folder (cameras, initial points, background),
 * its train / test split and graphdeco's scene extent. Readers fill it; scene.h loads it. */
#ifndef CS_DATASET_H
#define CS_DATASET_H

#include <stdint.h>

#include "camera.h"

enum { CS_SCENE_COLMAP, CS_SCENE_BLENDER, CS_SCENE_NERFSTUDIO };

/* An undistortion map: for each pixel of a WIDTH x HEIGHT ideal pinhole, where the photo (at the
   training resolution) holds it (cs_lens_map). */
typedef struct {
    float *xy;
    int width, height;
} cs_undistort_map;

/* A vertical prism over a rectangle of a ground frame: block training's expanded region
   (block_plan.h), which decides the pixels a block trains on (data.block_mask, masks.h). */
typedef struct {
    int on;
    double origin[3], u[3], v[3]; /* the ground frame: (u, v) of x = ((x - origin).u, (x - origin).v) */
    double rect[4];               /* u0 u1 v0 v1, +-INFINITY on open sides */
    float *points;                /* (n_points, 3) the whole scene's sparse points: the surface a pixel sees */
    int n_points;
} cs_ground_region;

typedef struct {
    int kind;             /* CS_SCENE_* */
    cs_camera *cams;
    int n_cams;
    float *points;        /* (P, 3) initial points, or NULL */
    uint8_t *colors;      /* (P, 3) */
    int n_points;
    float background[3];
    int background_photos; /* the training photos background's colour was taken from (data.background border), or 0 */
    cs_undistort_map *maps; /* one per distinct distorted camera (lens and size) */
    int n_maps;
    /* the ground truth carries a weight channel (masks, alpha as mask, invalid borders of
       undistorted photos): 4 bytes a pixel instead of 3 */
    int weighted;
    int alpha_as_mask, invert_masks; /* data.alpha_as_mask, data.invert_masks */
    cs_ground_region block_region; /* on: pixels whose surface lies outside it get weight 0 (masks.h) */
} cs_scene;

/* Bytes (channels) a ground-truth pixel takes: 3 (RGB), 4 with a weight channel. */
int cs_scene_gt_channels(const cs_scene *s);

/* Camera indices of each split. */
typedef struct {
    int *train, n_train;
    int *test, n_test;
} cs_split;

/* Frees the cameras and points; S is empty afterwards. */
void cs_scene_free(cs_scene *s);
/* Counts of train (TEST 0) or test (TEST 1) cameras. */
int cs_scene_count(const cs_scene *s, int test);
/* Sorts cameras by name and, with EVAL, marks every 8th as test (graphdeco's llffhold). */
void cs_scene_split_every8(cs_scene *s, int eval);
/* graphdeco's "nerf++ norm" radius: 1.1 x the largest training camera-centre distance from
 * their mean (1 when there is none). */
double cs_scene_extent(const cs_scene *s);
/* The camera indices of each split, in camera order. -1 with a message (out of memory). */
int cs_split_of(const cs_scene *s, cs_split *out);
/* Frees the index lists; SP is empty afterwards. */
void cs_split_free(cs_split *sp);

#endif
