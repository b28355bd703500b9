/* spz: Niantic's .spz Gaussian format (github.com/nianticlabs/spz), written as version 3 and
 * read in versions 2 and 3: one gzip stream holding a 16-byte header (magic "NGSP", version,
 * count, SH degree, fractional bits, flags) and the attributes one after the other: positions
 * as 24-bit fixed point, alpha, DC colour, log-scale (8 bits each), rotation (the smallest three
 * components, 10 bits each; version 2: x y z, 8 bits), SH coefficients (8 bits, coefficient-major
 * with the channel inside). The format stores the RUB axes (OpenGL's: right, up, back); clsplat
 * and graphdeco's PLY use RDF (OpenCV's: right, down, forward), so y and z are negated on the
 * way out and back, with the quaternion and SH signs that go with it. A 3D filter is folded in
 * (cs_splats_baked_row) and the antialiased flag set. Version 4 (zstd streams) is refused. */
#ifndef CS_SPZ_H
#define CS_SPZ_H

#include "splats.h"

#define CS_SPZ_FLAG_ANTIALIASED 0x1

typedef struct {
    int version;
    int fractional_bits;
    int flags;
} cs_spz_info;

/* Writes S to PATH atomically (gzip level 9), the SH coefficients rounded to SH_BITS of their
 * 8 (1-8; 0: the reference packer's 5 for degree 1 and 4 above; readers need not know). -1
 * with a message (e.g. positions too far out for 24-bit fixed point, SH degree over 4). */
int cs_spz_write(const char *path, const cs_splats *s, int sh_bits);
/* Reads PATH into OUT (no 3D filter); INFO may be NULL. -1 with a message naming the file. */
int cs_spz_read(const char *path, cs_splats *out, cs_spz_info *info);

#endif
