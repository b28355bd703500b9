/* splat_file: a Gaussian scene file in any format clsplat reads and writes: graphdeco's PLY
 * (ply.h), compressed PLY (ply_compressed.h), .spz (spz.h) and .splat (splat32.h). Reading
 * tells the format from the content (PLY header with a chunk element, gzip or NGSP magic),
 * and .splat, which has no header, from its name. */
#ifndef CS_SPLAT_FILE_H
#define CS_SPLAT_FILE_H

#include "splats.h"

/* Reads PATH in whichever format it is into OUT; FMT (may be NULL) gets the format. */
int cs_splat_file_read(const char *path, cs_splats *out, cs_splat_format *fmt);
typedef struct {
    int bake_ply;    /* fold the 3D filter into a PLY (the compact formats always do) */
    int spz_sh_bits; /* cs_spz_write's SH_BITS (output.spz_sh_bits) */
} cs_export_opts;

/* Writes S to PATH atomically in format F with options O. */
int cs_splat_file_write(const char *path, const cs_splats *s, cs_splat_format f, const cs_export_opts *o);

#endif
