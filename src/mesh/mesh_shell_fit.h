/* mesh_shell_fit: the background shell (mesh_shell.h) brought in to where the views see the
 * background (#38). A far sphere draws a near backdrop (the table and sheet behind a toy) with
 * the wrong parallax: each view sees it at another place, so the refinement's colours blur. The
 * shell is a sphere round CENTRE, so each direction from there takes one radius: the median
 * distance of the background the training views see that way. Background: the depths the depth
 * check drops (depth_check.h: a plain backdrop that no two views place alike) and those past
 * the fusion's depth limit; what the fusion keeps is the scene's own surface. A direction is
 * fitted where background is at least as much of what the views see there as kept surface;
 * elsewhere the shell stays far. The training cameras stay inside it (and the views between
 * them). Directions are the cells of a cube map (CS_SHELL_FIT_RES a side), radii binned in
 * logarithmic steps; the shell's vertices take their cell's radius, smoothed over their
 * neighbours (log radius), so a fitted patch slopes out to the far shell round it. */
#ifndef CS_MESH_SHELL_FIT_H
#define CS_MESH_SHELL_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "mesh.h"

/* cube-map cells a face side, and the radius bins (logarithmic, from far / CS_SHELL_FIT_RANGE to far) */
#define CS_SHELL_FIT_RES 32
#define CS_SHELL_FIT_BINS 160
#define CS_SHELL_FIT_RANGE 1000.0
/* background samples a cell needs to be fitted */
#define CS_SHELL_FIT_MIN_SAMPLES 16
/* smoothing passes over the shell's vertices (log radius, each the mean of itself and its neighbours) */
#define CS_SHELL_FIT_SMOOTH 8

typedef struct {
    double centre[3], far;
    uint32_t *bg, *kept;        /* (6 * RES * RES, BINS): background and kept surface seen */
    double *cams;               /* (ncams, 3): the training cameras' centres */
    int ncams;
} cs_shell_fit;

/* F round CENTRE, FAR the unfitted shell's radius, with the NCAMS training cameras' centres CAMS
   (x y z each, copied: the shell keeps each camera and the views between it and its neighbours
   inside). -1 with a message (host memory). */
int cs_shell_fit_init(cs_shell_fit *f, const double centre[3], double far, const double *cams, int ncams);
/* a surface at world point P: BACKGROUND (1) or the scene's own (0) */
void cs_shell_fit_surface(cs_shell_fit *f, const float p[3], int background);
/* Moves M's vertices FIRST .. FIRST + N - 1 (a shell of M's triangles FIRST_TRI on, round F's
 * centre) to the fitted radii; *FITTED: how many vertices moved in. -1 with a message (memory). */
int cs_shell_fit_apply(const cs_shell_fit *f, cs_mesh *m, size_t first, size_t n, size_t first_tri, size_t *fitted);
void cs_shell_fit_free(cs_shell_fit *f);

#endif
