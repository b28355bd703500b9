/* ply_compressed: PlayCanvas / SuperSplat's compressed PLY (the layout splat-transform writes
 * and reads): Gaussians in Morton order, in chunks of 256; element `chunk` holds each chunk's
 * float min/max of position, log-scale (clamped to +-20) and DC colour (0.5 + C0 dc);
 * element `vertex` 4 uints a Gaussian: position and log-scale as 11-10-11 bits within the
 * chunk's box, the rotation as 2 bits for the largest component's index (x y z w = PLY's
 * rot_0..3) and 10 bits for each other one, colour and opacity (sigmoid) as 8-8-8-8 bits;
 * element `sh` (degree > 0) the f_rest_* values as bytes: trunc((v / 8 + 0.5) 256). The axes
 * are the PLY's. A 3D filter is folded in (cs_splats_baked_row). */
#ifndef CS_PLY_COMPRESSED_H
#define CS_PLY_COMPRESSED_H

#include "splats.h"

#define CS_CPLY_CHUNK 256

/* Writes S to PATH atomically. -1 with a message (SH degree over 3). */
int cs_cply_write(const char *path, const cs_splats *s);
/* True when the PLY header in HEAD (the file's first bytes, NUL-terminated) has a chunk element. */
int cs_cply_is_compressed(const char *head);
/* Reads PATH into OUT. -1 with a message naming the file and what is wrong. */
int cs_cply_read(const char *path, cs_splats *out);

#endif
