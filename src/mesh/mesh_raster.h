/* mesh_raster: a vertex-coloured mesh (mesh.h) drawn through a pinhole camera on the host with
 * a depth buffer, for judging a mesh against the photos it came from (clsplat mesh --eval).
 * A pixel is covered when its centre lies in a triangle (edges count as inside); its colour
 * and depth are the perspective-correct interpolation of the corners'; the nearest triangle
 * wins. Triangles with a corner closer than CS_MESH_RASTER_NEAR to the camera plane are left
 * out (no clipping): meshes are seen from outside. No face culling (either winding is drawn). */
#ifndef CS_MESH_RASTER_H
#define CS_MESH_RASTER_H

#include "camera.h"
#include "image.h"
#include "mesh.h"

#define CS_MESH_RASTER_NEAR 1e-4f

/* The visibility buffer of M as camera C sees it at C's training resolution: for each pixel the
 * nearest triangle (TRI, -1 where none) and its corners' perspective-correct weights (W, 3 a
 * pixel, summing to 1): a colour per vertex c_k draws as w0 c_0 + w1 c_1 + w2 c_2, linear in
 * the colours (mesh_refine.h differentiates that). TRI: W x H, W: W x H x 3. Drawn by THREADS
 * threads on bands of rows (0: the cores, at most 16), the same buffer for any count. */
int cs_mesh_visibility(const cs_mesh *m, const cs_camera *c, int threads, int32_t *tri, float *w);
/* Renders M as camera C sees it at C's training resolution into OUT (new 8-bit RGB), pixels
 * no triangle covers in BG (0-1). Each pixel is the mean of SAMPLES x SAMPLES samples on a
 * regular grid inside it (the visibility buffer drawn at SAMPLES times the size; 0, 1: the
 * pixel's centre alone, as the refinement draws). COVERED (or NULL): the fraction of samples a
 * triangle covers; DRAWN (or NULL, W x H): 1 where a triangle covers at least half the pixel's
 * samples, else 0. Takes 12 bytes a vertex and 20 a sample of scratch; -1 with a message when
 * host memory runs out. */
#define CS_MESH_RASTER_MAX_SAMPLES 4
/* Camera C at S times its size: pixel (x, y)'s S x S samples are the pixels (S x + i, S y + j)
 * of the returned camera (the drawing both samplings above and the refinement's, mesh_device.h, use) */
cs_camera cs_mesh_raster_camera(const cs_camera *c, int S);
int cs_mesh_rasterize(const cs_mesh *m, const cs_camera *c, const float bg[3], int samples, cs_image *out,
                      double *covered, uint8_t *drawn);

#endif
