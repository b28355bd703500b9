/* mesh_texture_dev: the texture stage of #38's refinement on the device (cl/mesh_tex.cl): each
 * triangle's lattice of colours (cl/mesh_tex.h) drawn through the visibility buffer of
 * mesh_device.h, the training loss's gradient taken back to the nodes through the same taps,
 * and Adam on them. The geometry is fixed in this stage, so the drawing is linear in the nodes
 * and the visibility exact, as in the colour stage. Its buffers are accounted as the rest. */
#ifndef CS_MESH_TEXTURE_DEV_H
#define CS_MESH_TEXTURE_DEV_H

#include "mesh_device.h"

/* Uploads M's texture (m->tex, m->tex_r) as 0-1 floats, with a zero gradient and moments. */
int cs_mesh_dev_tex_open(cs_mesh_dev *d, const cs_mesh *m);
/* The last visibility buffer drawn with the texture against PHOTO (the view's size, RGB or RGB +
 * a weight) under the training loss (1 - LAMBDA) L1 + LAMBDA D-SSIM: its gradient added into
 * the nodes' gradient, its value into *LOSS (NULL: not read, nothing blocks). */
int cs_mesh_dev_tex_grad(cs_mesh_dev *d, const cs_image *photo, float lambda, double *loss);
/* Adam step STEP (from 1) on the nodes, kept in 0-1; clears the gradient. */
int cs_mesh_dev_tex_adam(cs_mesh_dev *d, double lr, int step);
/* The nodes (0-1) and their gradient out (nt x nodes x 3 each; either may be NULL). */
int cs_mesh_dev_tex_read(cs_mesh_dev *d, float *tex, float *grad);

#endif
