/* ref_raster: double-precision CPU reference of the projection and rasterizer forward, with
 * a per-pixel flag for pixels whose result sits within rounding of a discrete decision
 * (alpha threshold, saturation, transmittance cut-off, tile rectangle, radius), and its
 * analytic backward. The tests check the backward against central finite differences of the
 * forward, and the OpenCL backward against this backward. */
#ifndef CS_REF_RASTER_H
#define CS_REF_RASTER_H

#include "render.h"
#include "splats.h"

typedef struct {
    int active_degree;
    int antialias;      /* CS_AA_* */
    double kernel_size;
    int filter_3d;
    int sh_half;        /* SH values are rounded to half first, as the device stores them */
    double bg[3];
    int tile;           /* tile side in pixels (0 = 16) */
} ref_opts;
#define TILE_OF(o) ((o)->tile ? (o)->tile : 16)

/* img: (3, H, W) or NULL; ambiguous: (H, W) or NULL, 1 where some Gaussian's alpha sits within
   rounding of the 1/255 cut or the clamp, the transmittance of the stop, two blended Gaussians'
   depths within 1e-6 of each other (an order float may swap), or a tile rectangle on a rounding
   edge reaches the pixel: float may decide such a pixel either way. */
void ref_render(const cs_splats *s, const cs_view *v, const ref_opts *o, double *img, unsigned char *ambiguous);

/* ref_render and the depths rasterize_fwd_depth writes, DEPTH (2, H, W): expected (sum of
   w z over sum of w, 0 where nothing is blended) and median (z of the Gaussian at which T falls
   below 0.5, 0 where it never does); AMB also marks pixels whose T lands within rounding of 0.5. */
void ref_render_depth(const cs_splats *s, const cs_view *v, const ref_opts *o, double *img, double *depth,
                      unsigned char *amb);

/* Gradients of sum(v_img * image): grad_geo (N, 11) = means, log-scales, quaternion, logit
   opacity; grad_sh (N, K, 3). edge (N) or NULL: 1 for the Gaussians that sit on such a
   decision at some pixel (the pixels ref_render flags). The decision moves the gradient of
   every Gaussian blended at that pixel, by about the edge Gaussian's alpha: a check to a tight
   bound zeroes those pixels' weights instead (test_raster.c, drop_edge_pixels). */
void ref_backward(const cs_splats *s, const cs_view *v, const ref_opts *o, const double *v_img, double *grad_geo,
                  double *grad_sh, unsigned char *edge);

#endif
