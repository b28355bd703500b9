/* splat_file: format choice for Gaussian scene files (splat_file.h). */
#include "splat_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "ply.h"
#include "ply_compressed.h"
#include "splat32.h"
#include "spz.h"
#include "util.h"

static int ends_with(const char *s, const char *tail)
{
    size_t a = strlen(s), b = strlen(tail);
    return a >= b && !strcmp(s + a - b, tail);
}

/* The format of PATH from its first bytes (and its name for .splat). */
static int detect(const char *path, cs_splat_format *fmt)
{
    FILE *f = fopen(path, "rb");
    if (!f) return cs_fail("cannot open %s: %s", path, strerror(errno));
    static char head[65537];
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    if (n >= 4 && !memcmp(head, "ply", 3) && (head[3] == '\n' || head[3] == '\r'))
        *fmt = cs_cply_is_compressed(head) ? CS_FMT_CPLY : CS_FMT_PLY;
    else if ((n >= 2 && (unsigned char)head[0] == 0x1f && (unsigned char)head[1] == 0x8b) ||
             (n >= 4 && !memcmp(head, "NGSP", 4)))
        *fmt = CS_FMT_SPZ;
    else if (ends_with(path, ".splat"))
        *fmt = CS_FMT_SPLAT;
    else
        return cs_fail("%s: not a Gaussian scene clsplat reads (PLY, compressed PLY, .spz, or .splat by its name)", path);
    return 0;
}

int cs_splat_file_read(const char *path, cs_splats *out, cs_splat_format *fmt)
{
    cs_splat_format f = CS_FMT_PLY;
    memset(out, 0, sizeof *out);
    if (detect(path, &f)) return -1;
    if (fmt) *fmt = f;
    switch (f) {
    case CS_FMT_SPZ: return cs_spz_read(path, out, NULL);
    case CS_FMT_SPLAT: return cs_splat32_read(path, out);
    case CS_FMT_CPLY: return cs_cply_read(path, out);
    default: return cs_ply_read(path, out);
    }
}

int cs_splat_file_write(const char *path, const cs_splats *s, cs_splat_format f, const cs_export_opts *o)
{
    switch (f) {
    case CS_FMT_SPZ: return cs_spz_write(path, s, o->spz_sh_bits);
    case CS_FMT_SPLAT: return cs_splat32_write(path, s);
    case CS_FMT_CPLY: return cs_cply_write(path, s);
    default: return cs_ply_write(path, s, o->bake_ply);
    }
}
