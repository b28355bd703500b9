/* camera: one pinhole view of a dataset (world-to-camera pose, intrinsics at the training
 * resolution, its image file, its lens distortion and mask) and the helpers the readers and the
 * outputs share. */
#ifndef CS_CAMERA_H
#define CS_CAMERA_H

#include <stddef.h>

#include "lens.h"

typedef struct {
    char name[256];       /* image file name, used for output names */
    char path[4096];      /* file to decode */
    char mask_path[4096]; /* its mask ("" none): 0 = left out of the loss, 255 = kept */
    int width, height;    /* training resolution (of the ideal pinhole, for a distorted photo) */
    int file_width, file_height; /* size of the file's pixels, upright when orientation > 1 */
    int orientation;      /* EXIF orientation applied when decoding (0, 1: the stored pixels) */
    int exif_orientation; /* the file's EXIF orientation tag (0, 1: none or upright) */
    double fx, fy, cx, cy; /* pixels at training resolution; pixel (i,j) centre is at (i+0.5, j+0.5) */
    double R[9], t[3];    /* world-to-camera, row-major, x right / y down / z forward */
    int is_test;
    /* a distorted photo: readers set lens.model and lens.k (zero: none); the scene's loader
       moves the intrinsics above into lens, scaled to the training resolution, and replaces
       them by the ideal pinhole the photo is resampled to (undistort.h) */
    cs_lens lens;
    int photo_width, photo_height; /* the photo at the training resolution, before undistortion */
    int map;                       /* the scene's undistortion map of this camera; -1: none */
} cs_camera;

/* Sets width/height from the file size by data.resolution (graphdeco's rule: 1, 2, 4, 8
 * divide; -1 caps the width at 1600; else a target width) and scales the intrinsics. -1 with a
 * message when the result is empty. */
int cs_camera_apply_resolution(cs_camera *c, int resolution);
/* Normalised quaternion (w, x, y, z) to a row-major rotation. */
void cs_quat_to_rot(const double q[4], double R[9]);
/* Sets R, t from an OpenGL camera-to-world 4x4 (row-major). */
void cs_camera_from_gl_c2w(cs_camera *c, const double m[16]);
/* Sets C's translation so that its centre (for its rotation R) is CENTRE: t = -R centre. */
void cs_camera_place(cs_camera *c, const double centre[3]);
/* Camera centre in world space. */
void cs_camera_center(const cs_camera *c, double out[3]);
/* World point X through camera C's pinhole: pixel coordinates (*U, *V; a pixel's centre at
 * i + 0.5) and camera depth *Z. 1 when X lies in front of the camera (Z > 1e-6); else 0 and
 * U, V are not set. Not clipped to the image. */
int cs_camera_project(const cs_camera *c, const float x[3], double *u, double *v, double *z);
/* The image name without its extension ("r_3.png" -> "r_3"), for output names. */
void cs_camera_stem(const cs_camera *c, char *out, size_t n);

#endif
