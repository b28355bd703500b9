/* mesh_step: the geometry step chosen by held-out training views (mesh_step.h). */
#include "mesh_step.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_eval.h"
#include "util.h"

int cs_mesh_held_out(const cs_scene *scene, uint8_t *held, int *views)
{
    int n = 0, train = 0;
    memset(held, 0, (size_t)scene->n_cams);
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) continue;
        if (train++ % CS_MESH_STEP_HOLD_EVERY == 0) held[i] = 1, views[n++] = i;
    }
    if (train - n >= 1) return n;
    memset(held, 0, (size_t)scene->n_cams);
    return 0;
}

int cs_mesh_steps_to_try(const cs_scene *scene, const double *list, int n, int given, double *steps)
{
    if (n > 1) return memcpy(steps, list, sizeof(double) * (size_t)n), n;
    if (given || scene->kind == CS_SCENE_BLENDER) return 0;
    int train = 0;
    for (int i = 0; i < scene->n_cams; i++) train += !scene->cams[i].is_test;
    if (train < 2) return 0; /* cs_mesh_held_out would hold out none */
    const double autos[CS_MESH_STEPS_AUTO_N] = CS_MESH_STEPS_AUTO;
    memcpy(steps, autos, sizeof autos);
    return CS_MESH_STEPS_AUTO_N;
}

int cs_mesh_trial_views(int n)
{
    if (n <= 0) return 0;
    int k = (int)(n * CS_MESH_STEP_TRIAL_SHARE + 0.5);
    return k > 0 ? k : 1;
}

/* one step's trial: a copy of M refined with O at STEP, judged at the N held-out VIEWS */
static int trial(const cs_mesh *m, const cs_scene *scene, cs_cl *cl, const cs_mesh_refine_opts *o,
                 const cs_mesh_exposure *x, double step, const int *views, int n, cs_mesh_eval_result *r)
{
    cs_mesh c;
    if (cs_mesh_copy(m, &c)) return -1;
    cs_mesh_refine_opts t = *o;
    t.iterations = cs_mesh_trial_views(o->iterations), t.geometry = cs_mesh_trial_views(o->geometry);
    t.geom.lr = step, t.texture = 0, t.texture_views = 0, t.profile = 0, t.learned = NULL;
    cs_mesh_refine_stats st;
    int rc = cs_mesh_refine_colors(&c, scene, cl, &t, 0, &st) ||
                     cs_mesh_eval_views(&c, scene, x, o->samples, views, n, "held-out training", r)
                 ? -1
                 : 0;
    cs_mesh_free(&c);
    return rc ? cs_fail_prefix("--refine-step: the trial of step %g", step) : 0;
}

int cs_mesh_choose_step(const cs_mesh *m, const cs_scene *scene, cs_cl *cl, const cs_mesh_refine_opts *o,
                        const cs_mesh_exposure *x, const double *steps, int n, int progress, cs_mesh_step_choice *out)
{
    memset(out, 0, sizeof *out);
    if (n < 1 || n > CS_MESH_STEPS_MAX) return cs_fail("--refine-step: %d steps to try (1 to %d)", n, CS_MESH_STEPS_MAX);
    if (o->geometry <= 0) return cs_fail("--refine-step with several steps needs the geometry stage (--refine-geometry)");
    uint8_t *held = malloc((size_t)(scene->n_cams ? scene->n_cams : 1));
    int *views = malloc(sizeof(int) * (size_t)(scene->n_cams ? scene->n_cams : 1));
    int rc = !held || !views ? cs_fail("out of host memory") : 0;
    if (!rc) out->held = cs_mesh_held_out(scene, held, views);
    if (!rc && !out->held)
        rc = cs_fail("--refine-step with several steps holds out every %dth training view to judge them: this scene "
                     "has too few training views (one step instead)", CS_MESH_STEP_HOLD_EVERY);
    cs_mesh_refine_opts t = *o;
    t.held_out = held;
    for (int k = 0; !rc && k < n; k++) {
        cs_mesh_eval_result r;
        double t0 = cs_now();
        rc = trial(m, scene, cl, &t, x, steps[k], views, out->held, &r);
        if (rc) break;
        out->step[k] = steps[k], out->psnr[k] = r.psnr, out->psnr_min[k] = r.psnr_min, out->secs[k] = cs_now() - t0;
        out->secs_trials += out->secs[k];
        out->n = k + 1;
        if (out->psnr[k] > out->psnr[out->chosen]) out->chosen = k;
        if (progress)
            printf("mesh: step %g: %d held-out training views drawn at %.2f dB (lowest %.2f) after refining on the "
                   "others, %.1f s\n", steps[k], out->held, r.psnr, r.psnr_min, out->secs[k]), fflush(stdout);
    }
    free(held), free(views);
    return rc;
}
