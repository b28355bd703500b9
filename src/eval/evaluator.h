/* evaluator: forward-only evaluation of a model on a split's views (L1, PSNR, SSIM), the
 * metrics.json records of an output folder (every evaluation kept: the training's, later
 * `clsplat eval` runs'), renders written as PNG, and `clsplat eval` / `clsplat render` of a
 * saved model. It borrows the renderer, loss and image store of whoever runs it (the trainer,
 * or cs_evaluate_model's own); its own state is the output folder and the records. */
#ifndef CS_EVALUATOR_H
#define CS_EVALUATOR_H

#include <jansson.h>
#include <stdbool.h>

#include "config.h"
#include "driver_mem.h"
#include "image_store.h"
#include "loss.h"
#include "lpips.h"
#include "render.h"
#include "splats.h"
#include "tb_events.h"

typedef struct {
    cs_cl *cl;
    const cs_scene *scene;
    cs_renderer *r;
    cs_loss *loss;
    cs_image_store *images; /* ground truth of any camera (cs_images_get_camera) */
    cs_driver_mem *dm;      /* driver-reported memory, or NULL */
    char out[1024];
    json_t *records;        /* metrics.json: array of evaluation records */
    const char *source;     /* "train" or "eval": who made the records added now */
    int resolution;         /* data.resolution of the views, recorded with each evaluation */
    cs_lpips lpips;         /* LPIPS of every view when lpips_on (cs_evaluator_use_lpips) */
    bool lpips_on;
    bool lpips_small_noted; /* said once that the views are too small for LPIPS */
    cs_tb_writer *tb;       /* TensorBoard: evaluation scalars and images (NULL: none) */
    int tb_views;           /* test views logged as images (render | ground truth | error) */
    int preview_views;      /* test views saved as OUT/previews/ours_<iteration>/<stem>.png for the report (0: none) */
    cs_exposure *exposure;  /* optim.exposure: each view drawn under its exposure (a training view's own,
                               a held-out view's from its nearest training views); NULL: the identity */
    double train_seconds;   /* training time so far, evaluations excluded, recorded as "train_seconds"
                               with each evaluation (the trainer sets it; < 0: not a training run) */
} cs_evaluator;

/* Evaluates into OUT_DIR/metrics.json; with KEEP the records already there are kept (a
 * resumed run, `clsplat eval`), else the file starts empty. -1 with a message. */
int cs_evaluator_open(cs_evaluator *ev, cs_cl *cl, const cs_scene *scene, cs_renderer *r, cs_loss *loss,
                      cs_image_store *images, cs_driver_mem *dm, const char *out_dir, int keep);
/* Drops the records held in memory (metrics.json has them) and the LPIPS weights. */
void cs_evaluator_close(cs_evaluator *ev);
/* LPIPS from the weights at PATH (eval.lpips_weights: a missing or bad file is an error), or
 * when PATH is empty from cs_lpips_weights_path's default (missing: LPIPS is off, said once on stdout;
 * bad: an error). K: kernels of the program that has the LPIPS kernels. */
int cs_evaluator_use_lpips(cs_evaluator *ev, const cs_kernels *k, const char *path);

/* Renders views IDX (N of them, camera indices) of split SPLIT with model M at ACTIVE_DEGREE,
 * measures them against their images (L1, PSNR, SSIM, and LPIPS when on), appends a record (source, resolution, means, per view,
 * the evaluation's own peak memory and the run's peak before it) and rewrites metrics.json;
 * with SAVE_RENDERS also OUT/<split>/ours_<iteration>/renders/<stem>.png and the ground truth
 * in .../gt/<stem>.png (graphdeco render.py's layout, which its metrics.py reads). Blocks.
 * Trims the renderer and loss pools before and after, so the peak it reports is the
 * evaluation's own. With ev->tb: the means and peak as eval/<split>/<key> scalars at step
 * ITERATION, and the first ev->tb_views test views as images/test/<stem>. */
int cs_evaluate_views(cs_evaluator *ev, const cs_model *m, const char *split, const int *idx, int n, int iteration,
                      int active_degree, int save_renders);
/* The test views, then eval.train_views training views spread over the split. */
int cs_evaluate_splits(cs_evaluator *ev, const cs_model *m, const cs_eval_cfg *cfg, const cs_split *sp, int iteration,
                       int active_degree);

/* `clsplat eval`: evaluates S on SCENE's test views (forward only, stored tuning, lazy
 * images) into OUT_DIR/metrics.json, keeping the records there. -1 with a message, also when
 * the scene has no test views. */
int cs_evaluate_model(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const char *out_dir,
                      int iteration);
/* `clsplat render`: writes OUT_DIR/<stem>.png for each view of SPLIT ("train", "test" or
 * "all"; DIR/<image folder>/<stem>.png when the views come from several folders) and, when
 * GT_DIR is not NULL, the ground truth beside them in GT_DIR. With
 * DEPTH_MAPS, also <stem>_depth_mean.png and <stem>_depth_median.png (16-bit) and
 * OUT_DIR/depth_scale.json. With EXPOSURE (a model's exposure.json; NULL: none) each view is
 * drawn under its transform, a held-out view under the blend of its nearest training views'
 * (as the evaluation draws them; the depths are the model's). Sets *COUNT to the number
 * rendered. -1 with a message, also for an unknown split or a split with no views. */
int cs_render_model_views(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const char *split,
                          const char *out_dir, const char *gt_dir, int depth_maps, const char *exposure, int *count);
/* `clsplat render --orbit N`: S from N cameras circling SCENE (orbit.h) into
 * OUT_DIR/orbit_NNN.png, and OUT_DIR/contact_sheet.png with 8 of them (fewer when N is), 4 a
 * row, each at most 320 px wide. */
int cs_render_orbit(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, int n,
                    const char *out_dir);

#endif
