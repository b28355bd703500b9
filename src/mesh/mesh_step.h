/* mesh_step: the geometry stage's step (mesh_geom.h) chosen per scene by held-out training
 * views (#38, clsplat mesh --refine-step auto or a list). No one step serves every capture: on
 * the H100 a plush dog's mesh gained 0.3-0.65 dB from two to four times the captures' 0.025,
 * south_building's lost 0.4-1.2 dB from the same (README, "Meshes"). So each step of a list
 * runs the refinement's colour and geometry stages (mesh_refine.h; no texture), shortened to
 * CS_MESH_STEP_TRIAL_SHARE of their views, from the same mesh on the training views less a
 * held-out eighth, each result is drawn at those views
 * (mesh_eval.h) and the step of the highest PSNR is chosen (ties: the first); the caller then
 * refines with it on every training view. On captures it is the default (cs_mesh_steps_to_try):
 * on the H100 the trials took 18 s on the dog and 47 s on south_building at 1M triangles. */
#ifndef CS_MESH_STEP_H
#define CS_MESH_STEP_H

#include <stdint.h>

#include "cl_runtime.h"
#include "dataset.h"
#include "mesh.h"
#include "mesh_exposure.h"
#include "mesh_refine.h"

/* the most steps a list holds, and those `auto` tries (the captures' default, twice and four times it) */
#define CS_MESH_STEPS_MAX 4
#define CS_MESH_STEPS_AUTO_N 3
#define CS_MESH_STEPS_AUTO {0.025, 0.05, 0.1}
/* one training view in this many is held out to judge the steps (mesh_eval's fallback's share) */
#define CS_MESH_STEP_HOLD_EVERY 8
/* a trial runs this share of the refinement's colour and geometry views (each stage at least
   one): on PoCL the half and the quarter ranked the steps of a plush dog and south_building as
   the whole refinement did (README), at a quarter of its time */
#define CS_MESH_STEP_TRIAL_SHARE 0.25

typedef struct {
    int n;      /* steps tried */
    int held;   /* training views held out (judged) */
    int chosen; /* index of the step chosen */
    double step[CS_MESH_STEPS_MAX], psnr[CS_MESH_STEPS_MAX], psnr_min[CS_MESH_STEPS_MAX], secs[CS_MESH_STEPS_MAX];
    double secs_trials; /* the trials' seconds, all steps */
} cs_mesh_step_choice;

/* Every CS_MESH_STEP_HOLD_EVERY-th training view of SCENE (from the first) marked in HELD (one
 * a camera, 1: held out) and listed in VIEWS (room for n_cams); how many. 0 (none marked) where
 * that would leave no training view to refine on. */
int cs_mesh_held_out(const cs_scene *scene, uint8_t *held, int *views);

/* The steps to try into STEPS (room for CS_MESH_STEPS_MAX), how many (0: one step, no trials):
 * LIST's N where N > 1; else, where no step was GIVEN, on a capture (not a Blender scene) with
 * at least two training views, the auto list (the captures' default: a building wants 0.025, an
 * object captured all round 0.1, README); else none. */
int cs_mesh_steps_to_try(const cs_scene *scene, const double *list, int n, int given, double *steps);

/* a trial's share of a stage of N views (cs_mesh_refine_opts' iterations or geometry): at least
   one where N is positive, 0 otherwise */
int cs_mesh_trial_views(int n);

/* Refines a copy of M with O (its texture stage left out, each stage's views cut by
 * cs_mesh_trial_views) once for each of the N steps STEPS
 * on SCENE's training views less those cs_mesh_held_out holds out, draws each at the held-out
 * views (under X, the model's exposure; NULL: none) with O->samples a side of each pixel, and
 * fills OUT; a line for each step when PROGRESS. M is left as it was. -1 with a message (also
 * where no view can be held out). */
int cs_mesh_choose_step(const cs_mesh *m, const cs_scene *scene, cs_cl *cl, const cs_mesh_refine_opts *o,
                        const cs_mesh_exposure *x, const double *steps, int n, int progress, cs_mesh_step_choice *out);

#endif
