/* splats: the host-side copy of a Gaussian scene (what PLY files and checkpoints hold; ply.h
 * reads and writes it). */
#ifndef CS_SPLATS_H
#define CS_SPLATS_H

#include <stddef.h>
#include <stdint.h>

#define CS_SH_COEFFS(deg) (((deg) + 1) * ((deg) + 1))
/* The degree-0 SH basis value: a Gaussian's base colour is 0.5 + CS_SH_C0 * dc (graphdeco). */
#define CS_SH_C0 0.28209479177387814

#define CS_SPLATS_MAX_EXTRA 4

typedef struct {
    int n;
    int sh_degree;        /* coefficients stored: CS_SH_COEFFS(sh_degree) per channel */
    float *means;         /* (N, 3) */
    float *log_scales;    /* (N, 3) */
    float *quats;         /* (N, 4) w x y z, not necessarily normalised */
    float *logit_opacity; /* (N) */
    float *sh;            /* (N, K, 3): coefficient k of channel c at [i*K*3 + k*3 + c] */
    float *filter_3d;     /* (N) mip-splatting 3D filter std, or NULL */
    /* further per-Gaussian parameters a model declares beyond these (the model schema's extra
       parameter arrays, model_layout.h): named columns of floats, which PLY files carry as
       properties NAME_0 .. NAME_{width-1} */
    int n_extra;
    struct {
        char name[32];
        int width;
        float *values; /* (N, width) */
    } extra[CS_SPLATS_MAX_EXTRA];
} cs_splats;

/* The scene file formats (splat_file.h reads and writes them). */
typedef enum { CS_FMT_PLY, CS_FMT_SPZ, CS_FMT_SPLAT, CS_FMT_CPLY, CS_FMT_COUNT } cs_splat_format;

/* "ply", "spz", "splat", "compressed-ply" */
const char *cs_splat_format_name(cs_splat_format f);
/* The file name ending: ".ply", ".spz", ".splat", ".compressed.ply" */
const char *cs_splat_format_ext(cs_splat_format f);
/* The format named NAME (as cs_splat_format_name gives). -1 with a message listing them. */
int cs_splat_format_parse(const char *name, cs_splat_format *out);

/* Allocates arrays for N Gaussians (zeroed); filter_3d only if WITH_FILTER. */
int cs_splats_alloc(cs_splats *s, int n, int sh_degree, int with_filter);
/* Adds an extra parameter column set NAME of WIDTH floats a row (zeroed); -1 with a message. */
int cs_splats_add_extra(cs_splats *s, const char *name, int width);
/* Gaussians with a NaN or Inf anywhere; *FIRST gets the first one's index (-1 when none). */
long cs_splats_count_nonfinite(const cs_splats *s, int *first);
/* Row I's log-scales and logit opacity as a renderer without the 3D filter must see them: with
 * a filter_3D, folded in the way mip-splatting's fused export does (scales grow by the filter,
 * opacity shrinks by the volume ratio); else as stored. */
void cs_splats_baked_row(const cs_splats *s, int i, float log_scales[3], float *logit_opacity);
/* Byte quantisation the compact file formats share: X rounded to the nearest of 0..255, and the
 * logit of the byte alpha V / 255 kept half a step away from 0 and 1. */
uint8_t cs_u8_round(float x);
float cs_logit_u8(int v);
/* Frees the arrays; S is empty afterwards. */
void cs_splats_free(cs_splats *s);

#endif
