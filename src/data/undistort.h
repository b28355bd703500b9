/* undistort: photos taken through a distorting lens (COLMAP's radial, OpenCV and fisheye models)
 * become ideal pinhole views once, when the scene is loaded: each distinct camera (lens and
 * size) gets its ideal pinhole (cs_lens_ideal: principal point centred, the original focal
 * lengths; data.undistort_crop picks the largest all-valid rectangle or the whole field of
 * view) and an undistortion map at the training resolution (8 bytes a pixel, host memory), and
 * every decoded photo is resampled through it (cs_undistort_image) before it reaches any
 * residency mode.
 * The rest of clsplat only ever sees the pinhole cameras. */
#ifndef CS_UNDISTORT_H
#define CS_UNDISTORT_H

#include <stddef.h>

#include "dataset.h"
#include "image.h"

/* Gives each camera with lens distortion its ideal pinhole (width, height, fx, fy, cx, cy; the
 * photo's own at the training resolution move into lens, photo_width, photo_height) and a map
 * shared by the cameras of the same lens and size. CROP_FULL: 0 valid crop, 1 whole field of
 * view (the scene becomes weighted when some pixels are not covered). -1 with a message naming
 * the camera. */
int cs_undistort_prepare(cs_scene *s, int crop_full);
/* Resamples IMG (camera C's photo at photo_width x photo_height or larger: the decoded file) in
 * place to C's ideal pinhole: at the photo size, bicubic through the map; from a larger photo,
 * each pixel averages K x K bilinear samples of it (K the size ratio, up to 8), so the photo is
 * filtered once, not resized and then resampled. Pixels the photo does not cover are 0 in every
 * channel (weight 0 with a weight channel). Cameras without a map are left alone. */
int cs_undistort_image(const cs_scene *s, const cs_camera *c, cs_image *img);
/* Host bytes of the scene's maps. */
size_t cs_undistort_bytes(const cs_scene *s);
/* The number of cameras with lens distortion. */
int cs_undistort_count(const cs_scene *s);

#endif
