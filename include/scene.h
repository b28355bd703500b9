/* scene: cameras, image sources and initial points of a dataset (COLMAP, Blender /
 * NeRF-synthetic, nerfstudio), at the training resolution. */
#ifndef CS_SCENE_H
#define CS_SCENE_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "image.h"

typedef struct {
    char name[256];       /* image file name, used for output names */
    char path[4096];      /* file to decode */
    int width, height;    /* training resolution */
    int file_width, file_height; /* size of the file on disk */
    double fx, fy, cx, cy; /* pixels at training resolution; pixel (i,j) centre is at (i+0.5, j+0.5) */
    double R[9], t[3];    /* world-to-camera, row-major, x right / y down / z forward */
    int is_test;
} cs_camera;

enum { CS_SCENE_COLMAP, CS_SCENE_BLENDER, CS_SCENE_NERFSTUDIO };

typedef struct {
    int kind;
    cs_camera *cams;
    int n_cams;
    float *points;        /* (P, 3) initial points, or NULL */
    uint8_t *colors;      /* (P, 3) */
    int n_points;
    float background[3];
} cs_scene;

/* Loads the dataset at cfg->data.path (format detected from its files). -1 with a message
 * naming the file and what is wrong. */
int cs_scene_load(const cs_config *cfg, cs_scene *out);
void cs_scene_free(cs_scene *s);
/* Decodes a camera's image, composites alpha over the background and resamples to the
 * training resolution. Result is 8-bit RGB. */
int cs_scene_read_image(const cs_scene *s, const cs_camera *cam, cs_image *out);
/* graphdeco's "nerf++ norm" radius: 1.1 x the largest camera-centre distance from their mean. */
double cs_scene_extent(const cs_scene *s);
/* Camera centre in world space. */
void cs_camera_center(const cs_camera *c, double out[3]);
/* The image name without its extension ("r_3.png" -> "r_3"), for output names. */
void cs_camera_stem(const cs_camera *c, char *out, size_t n);
/* Counts of train / test cameras. */
int cs_scene_count(const cs_scene *s, int test);

/* internal, per format */
int cs_scene_load_colmap(const cs_config *cfg, cs_scene *out);
int cs_scene_load_blender(const cs_config *cfg, cs_scene *out);
int cs_scene_load_nerfstudio(const cs_config *cfg, cs_scene *out);
/* Sets width/height and scales intrinsics from the file size by data.resolution. */
int cs_camera_apply_resolution(cs_camera *c, int resolution);
void cs_quat_to_rot(const double q[4], double R[9]);
/* Sets R, t from an OpenGL camera-to-world 4x4 (row-major). */
void cs_camera_from_gl_c2w(cs_camera *c, const double m[16]);
/* Sorts cameras by name and marks every 8th as test. */
void cs_scene_split_every8(cs_scene *s, int eval);

#endif
