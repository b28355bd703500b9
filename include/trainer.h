/* trainer: `clsplat train` and `clsplat eval`: the training loop, evaluation, outputs and
 * checkpoints. */
#ifndef CS_TRAINER_H
#define CS_TRAINER_H

#include "cl_runtime.h"
#include "config.h"
#include "scene.h"
#include "splats.h"

typedef struct {
    const char *resume;     /* checkpoint path or NULL */
    volatile int *stop;     /* set by a signal handler: save a checkpoint and return */
} cs_train_opts;

/* Trains on the dataset of CFG; writes everything under cfg->output.dir. */
int cs_train(cs_cl *cl, const cs_config *cfg, const cs_train_opts *opt);
/* Evaluates SPLATS on the test views of SCENE (forward only), writing metrics and renders. */
int cs_evaluate_splats(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const char *out_dir,
                       int iteration);
/* Initial Gaussians from the scene's points (or random points for synthetic scenes). */
int cs_init_splats(const cs_config *cfg, const cs_scene *scene, cs_splats *out);

#endif
