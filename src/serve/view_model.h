/* view_model: the model the viewer page draws (/model.bin and /model.json of view_server.h).
 *
 * The blob (little-endian, laid out as the page's WebGL2 textures take it):
 *   0   "CSVM"            4   u32 version (1)       8   u32 N
 *   12  u32 SH degree     16  i32 iteration (-1: unknown)
 *   20  u32 SH texels a Gaussian: ceil(3 (degree+1)^2 / 4)          24  8 bytes zero
 *   32  f32 geometry, 12 a Gaussian (3 RGBA32F texels): x y z opacity | Sxx Sxy Sxz Syy |
 *       Syz Szz 0 0, where opacity is the activated one and Sigma = R diag(s^2) R^T, both with a
 *       mip-splatting 3D filter folded in (cs_splats_baked_row)
 *   then u16 SH, 4 x texels a Gaussian (RGBA16F texels): IEEE half floats, coefficient k of
 *       channel c at 3k + c, zero padded (model.h's cs_float_to_half)
 * A Gaussian with a non-finite value is left out (so N can be below the model's count).
 *
 * The holder keeps the newest model for the server's threads: a live run publishes snapshots
 * into it (handed over as they are: the server's thread encodes one when a page asks, so the
 * trainer pays for the download only); otherwise it reads the run folder's newest
 * point_cloud/iteration_N/point_cloud.ply, again whenever a newer iteration is saved. */
#ifndef CS_VIEW_MODEL_H
#define CS_VIEW_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "splats.h"
#include "util.h"

#define CS_VIEW_MODEL_HEADER 32
#define CS_VIEW_MODEL_GEO_FLOATS 12

/* The blob of S at ITERATION into OUT (emptied first). -1 with a message (out of memory). */
int cs_view_model_encode(const cs_splats *s, int iteration, cs_bytes *out);

typedef struct cs_view_model cs_view_model;

/* A holder for the run folder RUN_DIR. NULL when out of memory. */
cs_view_model *cs_view_model_new(const char *run_dir);
/* Hands S at ITERATION to the holder (a live run's snapshot; *S is emptied, the holder frees
 * it), replacing any snapshot not yet asked for; from then on the holder no longer reads the
 * run folder's PLYs. */
void cs_view_model_publish(cs_view_model *m, cs_splats *s, int iteration);
/* Whether a page asked for the model (get or peek) in the last SECONDS. */
bool cs_view_model_watched(cs_view_model *m, double seconds);
/* (get, peek: a published snapshot is encoded here, on the caller's thread.)
 * A copy of the newest blob (*DATA, *N; the caller frees it) and its iteration. -1 with a
 * message when there is none yet (no snapshot published, no PLY saved). */
int cs_view_model_get(cs_view_model *m, char **data, size_t *n, int *iteration);
/* The newest blob's iteration and Gaussian count without copying it (-1, 0 when none). */
void cs_view_model_peek(cs_view_model *m, int *iteration, int *count);
void cs_view_model_free(cs_view_model *m);

#endif
