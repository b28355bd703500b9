/* trainer: `clsplat train`: the training loop and the files a run writes under
 * cfg->output.dir (config.json, cfg_args, cameras.json, input.ply, train_log.jsonl,
 * metrics.json, memory.json, point_cloud/iteration_N/, checkpoints/, <split>/ours_N/). */
#ifndef CS_TRAINER_H
#define CS_TRAINER_H

#include <signal.h>
#include <stdbool.h>

#include "cl_runtime.h"
#include "config.h"
#include "dataset.h"
#include "splats.h"

typedef struct {
    const char *resume;     /* checkpoint path or NULL */
    volatile sig_atomic_t *stop; /* non-zero (a signal handler): save a checkpoint and return */
    /* train --view: while WANTED says so (NULL: always), SNAPSHOT gets a host copy of the
       model (its own: it frees it) at the first iteration, then every SNAPSHOT_SECONDS of wall
       time, and at the last. The download is the run's time (measured and printed). NULL:
       none. */
    void (*snapshot)(void *ctx, cs_splats *model, int iteration);
    bool (*snapshot_wanted)(void *ctx);
    void *snapshot_ctx;
    double snapshot_seconds;
    bool profile; /* train --profile: each kernel's time over the loop (the device opened with profiling) */
} cs_train_opts;

/* Trains on SCENE (loaded from cfg->data, borrowed) with CFG (optim.steps_scale is applied
 * here; config.json and cfg_args get CFG as given); writes everything under cfg->output.dir,
 * which the caller has prepared (run_dir.h). Blocks until done. Returns 0, -1 with a message,
 * or 2 when stopped through OPT->stop: after saving a checkpoint during training, or before
 * the first iteration (set-up honours the stop between its phases) with nothing to save. */
int cs_train(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_train_opts *opt);

#endif
