/* mesh_gltf: a cs_mesh as binary glTF 2.0 (.glb; Khronos' glTF 2.0 specification): one mesh of
 * one indexed triangle primitive with POSITION (float, with its bounds), COLOR_0 (linear RGBA as
 * normalized unsigned shorts, alpha 1: glTF's colours are linear, the mesh's are sRGB bytes) and
 * uint32 indices, and one material whose base colour is
 * white and which asks for KHR_materials_unlit (the colours are what the photos saw, not an
 * albedo; a loader without the extension falls back to a rough, non-metallic surface). The
 * coordinates are the model's as they are, as in the PLY. */
#ifndef CS_MESH_GLTF_H
#define CS_MESH_GLTF_H

#include <stdbool.h>

#include "mesh.h"

/* Whether PATH names a .glb (by its ending, any case): clsplat mesh writes that, else PLY. */
bool cs_mesh_is_glb(const char *path);
/* The IEC 61966-2-1 sRGB curve, inverted: a linear value of an sRGB value in [0, 1]. */
double cs_srgb_to_linear(double c);
/* Writes M to PATH as .glb, atomically. -1 with a message (a mesh with no triangle, more
 * vertices or indices than glTF's 32-bit counts hold, a failed write). */
int cs_mesh_write_glb(const char *path, const cs_mesh *m);

#endif
