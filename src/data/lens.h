/* lens: COLMAP's camera models (ids, names and parameters as COLMAP numbers them), their lens
 * distortion in normalised image coordinates, its inverse by Newton iterations, and the ideal
 * pinhole camera a distorted one is resampled to (principal point centred, the original focal
 * lengths, the image size chosen from where the undistorted border lands). Pure double math.
 *
 * Normalised coordinates: u = (x - cx) / fx, v = (y - cy) / fy for pixel coordinates (x, y)
 * whose pixel centres are at +0.5 (the convention of camera.h). Distortion maps an ideal
 * (pinhole) point to where the lens puts it:
 *   SIMPLE_RADIAL / RADIAL / OPENCV / FULL_OPENCV: the Brown-Conrady polynomials (radial k's,
 *   FULL_OPENCV as a ratio, tangential p1 p2);
 *   OPENCV_FISHEYE / SIMPLE_RADIAL_FISHEYE / RADIAL_FISHEYE: the equidistant model,
 *   theta = atan(r), theta_d = theta (1 + k1 theta^2 + k2 theta^4 + ...), point scaled by theta_d / r. */
#ifndef CS_LENS_H
#define CS_LENS_H

typedef enum {
    CS_LENS_SIMPLE_PINHOLE = 0, CS_LENS_PINHOLE, CS_LENS_SIMPLE_RADIAL, CS_LENS_RADIAL, CS_LENS_OPENCV,
    CS_LENS_OPENCV_FISHEYE, CS_LENS_FULL_OPENCV, CS_LENS_FOV, CS_LENS_SIMPLE_RADIAL_FISHEYE, CS_LENS_RADIAL_FISHEYE,
    CS_LENS_THIN_PRISM_FISHEYE, CS_LENS_NMODELS
} cs_lens_model;

#define CS_LENS_MAX_PARAMS 12

typedef struct {
    cs_lens_model model;
    double fx, fy, cx, cy;
    double k[CS_LENS_MAX_PARAMS]; /* distortion coefficients in COLMAP's order after the intrinsics */
} cs_lens;

/* COLMAP's name of MODEL ("OPENCV"), and its parameter count. */
const char *cs_lens_model_name(cs_lens_model model);
int cs_lens_model_params(cs_lens_model model);
/* The model called NAME, or -1. */
int cs_lens_model_by_name(const char *name);
/* True for the models clsplat undistorts (all but FOV and THIN_PRISM_FISHEYE). */
int cs_lens_supported(cs_lens_model model);
/* Fills L from COLMAP's parameter list P (cs_lens_model_params(MODEL) values). */
void cs_lens_from_params(cs_lens *l, cs_lens_model model, const double *p);
/* True when L has no distortion (the pinholes, or a non-fisheye model with every coefficient 0). */
int cs_lens_is_pinhole(const cs_lens *l);

/* Where the lens puts the ideal normalised point (U, V). */
void cs_lens_distort(const cs_lens *l, double u, double v, double *ud, double *vd);
/* The ideal point the lens puts at (UD, VD): Newton iterations on cs_lens_distort. 0 when they
 * converged (to 1e-12), -1 when not (outside the model's valid region). */
int cs_lens_undistort(const cs_lens *l, double ud, double vd, double *u, double *v);

/* The ideal pinhole a W x H image of L is resampled to: the same fx, fy, the principal point in
 * the centre, and a size symmetric about the optical axis; CROP_FULL 0 keeps the largest such
 * rectangle whose every pixel the photo covers (colmap image_undistorter's default), 1 the one
 * that holds the whole photo (pixels it does not cover are invalid). -1 with a message when
 * the border cannot be undistorted, or the full view would be over CS_UNDISTORT_MAX_GROWTH
 * times the photo's sides. */
#define CS_UNDISTORT_MAX_GROWTH 4
int cs_lens_ideal(const cs_lens *l, int w, int h, int crop_full, double *fx, double *fy, double *cx, double *cy,
                  int *out_w, int *out_h);

/* The undistortion map of a W x H ideal pinhole (FX FY CX CY) of lens L: for each of its pixels
 * (row-major) the photo's pixel coordinates (x, y) that the lens puts that ray at, as 2 floats
 * (MAP holds 2 W H). Pixel centres at +0.5 on both sides. */
void cs_lens_map(const cs_lens *l, double fx, double fy, double cx, double cy, int w, int h, float *map);

#endif
