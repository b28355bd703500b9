/* splat32: antimatter15's .splat (github.com/antimatter15/splat): 32 bytes a Gaussian, no header,
 * no spherical harmonics: position (3 float32), linear scale (3 float32), RGBA (4 bytes: the
 * DC colour 0.5 + C0 dc and the opacity sigmoid, times 255) and the unit quaternion w x y z as
 * 4 bytes (q 128 + 128). Written most important first (volume times opacity, descending), as
 * the original converter does, so a viewer that streams it shows the big splats first. The
 * axes are the PLY's (no conversion). A 3D filter is folded in (cs_splats_baked_row). */
#ifndef CS_SPLAT32_H
#define CS_SPLAT32_H

#include "splats.h"

#define CS_SPLAT32_BYTES 32

/* Writes S to PATH atomically (SH beyond the DC colour is dropped). -1 with a message. */
int cs_splat32_write(const char *path, const cs_splats *s);
/* Reads PATH (SH degree 0). -1 with a message naming the file. */
int cs_splat32_read(const char *path, cs_splats *out);

#endif
