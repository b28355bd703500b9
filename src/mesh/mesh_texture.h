/* mesh_texture: a mesh's texture on the host (#38): each triangle's lattice of colours
 * (cl/mesh_tex.h, the one definition of how a point takes its colour) made from the vertex
 * colours, read at a point, and laid out as a texture atlas for glTF: one (R + 1) x (R + 1)
 * cell of texels a triangle, the lattice's nodes at texel centres and the texels past the
 * triangle's diagonal holding the planar continuation that cl/mesh_tex.h draws with, so a
 * viewer's bilinear filter draws what the refinement fitted (up to 8-bit rounding, and where
 * the continuation leaves 0-255 and is clamped). */
#ifndef CS_MESH_TEXTURE_H
#define CS_MESH_TEXTURE_H

#include "camera.h"
#include "image.h"
#include "mesh.h"
#include "mesh_tex.h"

/* the atlas's longest side at most (WebGL 1 devices all take 4096) */
#define CS_TEX_ATLAS_SIDE 4096

/* The largest subdivision (1..CS_TEX_MAX_R) whose atlas for NT triangles fits
 * CS_TEX_ATLAS_SIDE; 0 when not even R = 1 does. */
int cs_mesh_tex_auto(size_t nt);
/* The subdivisions that give a lattice cell about half a training pixel: twice the median edge, in
 * pixels, of M's triangles as the N cameras CAMS see them (sqrt of twice the projected area;
 * at most 8 of the cameras, every triangle in front of one with its centre in the image), at
 * least 1 and at most cs_mesh_tex_auto(m->nt) (0 when that is 0); *MEDIAN: that edge (0: none seen). */
int cs_mesh_tex_footprint(const cs_mesh *m, const cs_camera *cams, int n, double *median);
/* M's texture of R subdivisions (1..CS_TEX_MAX_R) from its vertex colours, interpolated
 * (replacing any it had). */
int cs_mesh_tex_from_vertices(cs_mesh *m, int r);
/* The colour (0-255, unclamped) of triangle T of textured M at barycentric weights W1, W2 of
 * its corners 1 and 2. */
void cs_mesh_tex_sample(const cs_mesh *m, size_t t, float w1, float w2, float rgb[3]);
/* The atlas of textured M: IMG (new, 8-bit RGB) and UV (nt x 3 corners x 2, glTF's
 * convention: 0-1 from the image's top left). -1 with a message when it does not fit
 * CS_TEX_ATLAS_SIDE or memory runs out. */
int cs_mesh_tex_atlas(const cs_mesh *m, cs_image *img, float *uv);

#endif
