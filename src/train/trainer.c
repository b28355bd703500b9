/* trainer: the training loop (graphdeco train.py on the device). It opens a run, starts it
 * fresh or from a checkpoint, runs steps as the schedule plans them, acts at the marks the
 * schedule names (log, checkpoint, evaluate, save), and closes with a summary. */
#include "trainer.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "budget.h"
#include "density.h"
#include "driver_mem.h"
#include "evaluator.h"
#include "image_store.h"
#include "init.h"
#include "kernels.h"
#include "loop_profile.h"
#include "loss.h"
#include "memplan.h"
#include "model.h"
#include "optim.h"
#include "outputs.h"
#include "pass.h"
#include "progress.h"
#include "ply.h"
#include "splat_file.h"
#include "render.h"
#include "run_dir.h"
#include "schedule.h"
#include "tb_log.h"
#include "tile_choice.h"
#include "run_report.h"
#include "train_log.h"
#include "tune.h"
#include "util.h"

typedef struct {
    cs_cl *cl;
    const cs_config *user;    /* as given: written to config.json and cfg_args */
    cs_config run;            /* with optim.steps_scale applied: what the run follows */
    const cs_config *cfg;     /* &run */
    char out[1024];
    /* data */
    const cs_scene *scene;    /* borrowed */
    cs_split split;
    cs_view_order order;
    cs_image_store images;
    double extent;
    int iterations;
    /* device state */
    cs_kernels k;
    cs_model m;
    cs_renderer r;
    cs_loss loss;
    cs_exposure exposure;       /* optim.exposure: the training views' transforms (loss.exposure) */
    cs_density dens;            /* densify.strategy's row and its scratch */
    cs_mem_plan plan;
    cs_adam_lrs lrs;
    /* outputs */
    cs_loop_profile prof;     /* train --profile */
    cs_tile_choice tiles;     /* device.tile_choice */
    cs_evaluator ev;
    cs_train_log log;
    cs_tb_log tb;
    cs_driver_mem dm;
    double driver_first_mb;   /* driver-reported use at the first log line (creep baseline) */
    char last_ckpt[1400];
    /* progress */
    cs_progress bar;
    int it_last, eta_hint;
    double t_start, t_last;
    double seconds_before;    /* training seconds of the processes before a resume */
    double eval_seconds;      /* spent in evaluations since this process started training: not training time */
    /* live view (cs_train_opts.snapshot) */
    const cs_train_opts *opt;
    double snap_last, snap_seconds;
    int snaps;
} trainer;

/* ---- opening a run ----------------------------------------------------------------------- */

static int write_run_files(trainer *t)
{
    char p[1200];
    /* a background taken from the photos is stored as its colour: what eval, mesh and the
       viewer draw on, and what a repeat of the run trains on, whatever photos it reads */
    cs_config stored = *t->user;
    if (t->scene->background_photos)
        snprintf(stored.data.background, sizeof stored.data.background, "%.4f %.4f %.4f", t->scene->background[0],
                 t->scene->background[1], t->scene->background[2]);
    char *dump = cs_config_dump(&stored);
    int w = cs_path_join(p, sizeof p, t->out, "config.json") || cs_write_file_atomic(p, dump, strlen(dump));
    free(dump);
    return w || cs_path_join(p, sizeof p, t->out, "cameras.json") || cs_write_cameras_json(p, t->scene) ||
           cs_path_join(p, sizeof p, t->out, "cfg_args") || cs_write_cfg_args(p, t->user);
}

static int open_data(trainer *t)
{
    const cs_config *cfg = t->cfg;
    if (cs_split_of(t->scene, &t->split) || cs_view_order_init(&t->order, t->split.n_train, cfg->optim.seed))
        return -1;
    t->extent = cs_scene_extent(t->scene);
    printf("dataset %s: %d training and %d test views at %dx%d, scene extent %.3f\n", cfg->data.path,
           t->split.n_train, t->split.n_test, t->scene->cams[0].width, t->scene->cams[0].height, t->extent);
    cs_scene_describe(t->scene, stdout);
    return 0;
}

static int open_kernels(trainer *t, cs_kernel_opts *ko)
{
    cs_kernel_opts_of(t->cfg, ko);
    ko->programs = CS_PROGS_TRAIN;
    double tb = cs_now();
    cs_tuning tun;
    if (cs_kernels_build_tuned(t->cl, ko, t->cfg->device.tune, &t->k, &tun)) return -1;
    *ko = t->k.opts; /* as built: the memory plan sizes what these kernels use */
    char how[64];
    if (tun.source == CS_TUNED_MEASURED) /* the builds are part of the tuning's time, printed below */
        snprintf(how, sizeof how, "built while tuning");
    else
        snprintf(how, sizeof how, "%s in %.1f s", t->cl->last_build_cached ? "loaded from cache" : "built", cs_now() - tb);
    printf("kernels: %s (float atomics: %s, fast math: %s, rasterizer: %d pixel%s a work-item%s)\n", how,
           cs_atomic_path_names[t->cl->atomics], t->cl->fast_math ? "on" : "off", t->k.opts.pixels,
           t->k.opts.pixels > 1 ? "s" : "",
           t->k.opts.deterministic && !t->cfg->optim.deterministic ? ", deterministic backward: loops are limited" : "");
    cs_tuning_summary(&tun, stdout);
    if (cs_tile_choice_open(&t->tiles, t->cl, &t->k, t->cfg->device.tile_choice, t->cfg->optim.deterministic)) return -1;
    if (t->tiles.on)
        printf("tiles: %dx%d and %dx%d kernels (%dx%d built in %.1f s), the faster measured during training "
               "(device.tile_choice)\n", t->k.opts.tile, t->k.opts.tile, t->tiles.alt.opts.tile, t->tiles.alt.opts.tile,
               t->tiles.alt.opts.tile, t->tiles.alt.opts.tile, t->tiles.alt_seconds);
    if (cs_driver_mem_open(&t->dm, t->cl) == 0)
        printf("driver memory: NVML, %.1f MiB in use now\n", cs_driver_mem_sample(&t->dm) / 1048576.0);
    else
        printf("driver memory: not reported (%s)\n", t->dm.why);
    return 0;
}

static int trainer_open(trainer *t, cs_cl *cl, const cs_config *user, const cs_scene *scene, cs_kernel_opts *ko)
{
    memset(t, 0, sizeof *t);
    t->cl = cl, t->user = user, t->scene = scene;
    t->run = *user;
    cs_config_scale_steps(&t->run);
    cs_config_strategy_defaults(&t->run);
    const cs_config *cfg = t->cfg = &t->run;
    t->dens.ops = cs_density_ops_of(cfg->densify.strategy);
    snprintf(t->out, sizeof t->out, "%s", cfg->output.dir);
    t->iterations = cs_schedule_iterations(cfg, cl->is_cpu);
    if (user->optim.steps_scale != 1.0)
        printf("steps_scale %g: a schedule of %d iterations, densification from %d every %d until %d, opacity reset "
               "every %d\n", user->optim.steps_scale, cfg->optim.iterations, cfg->densify.from, cfg->densify.interval,
               cfg->densify.until, cfg->densify.opacity_reset_interval);
    if (t->iterations != cfg->optim.iterations)
        printf("training %d iterations on this CPU (optim.iterations_on_cpu; --iterations N trains N)\n", t->iterations);
    if (t->iterations <= cfg->densify.from && cfg->densify.from < cfg->densify.until) {
        cs_config full;
        cs_config_defaults(&full);
        printf("note: the run ends at iteration %d, before densification starts (densify.from %d): the model keeps the "
               "Gaussians it starts with; for a short run with the whole schedule use --set optim.steps_scale=%.4g "
               "(%d of graphdeco's %d) instead of --iterations, or set densify.from lower\n",
               t->iterations, cfg->densify.from, (double)t->iterations / full.optim.iterations, t->iterations,
               full.optim.iterations);
    }
    if (cfg->densify.prune_fraction > 0 && !cs_prune_iteration(cfg, t->iterations))
        printf("note: densify.prune_fraction is set but no iteration prunes: it needs the default strategy and "
               "densify.prune_at (or densify.until) inside the run's %d iterations\n", t->iterations);
    t->lrs = cs_adam_lrs_of(&cfg->optim);
    if (cs_mkdirs(t->out) || open_data(t)) return -1;
    int stale = cs_remove_stale_temps(t->out);
    if (stale) printf("removed %d temporary files that an earlier, killed run left in %s\n", stale, t->out);
    if (write_run_files(t) || open_kernels(t, ko)) return -1;
    cs_mem_plan_make(cfg, ko, cl->global_mem, t->scene, &t->split, &t->plan);
    cs_mem_plan_print(&t->plan, stdout);
    if (t->plan.max_gaussians < 1)
        return cs_fail("the memory plan leaves room for no Gaussians (budget %.1f MiB, fixed %.1f MiB): raise "
                       "memory.vram_budget_mb, keep the images off the device (data.image_residency host or lazy) or "
                       "train at a lower resolution (-r)",
                       t->plan.budget / 1048576.0, t->plan.fixed_bytes / 1048576.0);
    cl->mem.budget = t->plan.budget;
    if (cs_images_init(&t->images, cl, t->scene, t->plan.residency, t->split.train, t->split.n_train,
                       cfg->data.host_cache_mb, cfg->data.decode_threads) ||
        cs_train_log_open(&t->log, t->out))
        return -1;
    cs_renderer_init(&t->r, cl, &t->k, (float)cfg->model.kernel_size);
    cs_loss_init(&t->loss, cl, &t->k);
    t->loss.gt_channels = cs_scene_gt_channels(scene);
    if (cfg->optim.exposure) {
        if (cs_exposure_open(&t->exposure, cl, &t->k, scene, t->split.train, t->split.n_train)) return -1;
        t->loss.exposure = &t->exposure;
    }
    return cfg->model.filter_3d ? cs_filter3d_setup(cl, &t->dens.d, t->scene) : 0;
}

/* ---- starting or resuming ------------------------------------------------------------------ */

/* The evaluator over the run's folder (KEEP: the records there stay) and the TensorBoard file. */
static int open_outputs(trainer *t, int keep)
{
    if (cs_evaluator_open(&t->ev, t->cl, t->scene, &t->r, &t->loss, &t->images, &t->dm, t->out, keep) ||
        cs_evaluator_use_lpips(&t->ev, &t->k, t->cfg->eval.lpips_weights) ||
        cs_tb_log_open(&t->tb, t->out, t->cfg->log.tensorboard))
        return -1;
    t->ev.resolution = t->cfg->data.resolution; /* the records say what the run was trained at (-r) */
    t->ev.exposure = t->loss.exposure;         /* the views drawn under their exposure (optim.exposure) */
    t->ev.tb = t->tb.on ? &t->tb.w : NULL;
    t->ev.tb_views = t->cfg->eval.tensorboard_views;
    t->ev.preview_views = t->cfg->eval.preview_views;
    return 0;
}

/* The starting Gaussians: optim.init_ply's, else the dataset's points (or random ones). */
static int initial_splats(trainer *t, cs_splats *init)
{
    const cs_config *cfg = t->cfg;
    const char *ply = cfg->optim.init_ply;
    if (!ply[0]) {
        if (cs_init_splats(t->scene, &cfg->model, &cfg->optim, init)) return -1;
        int random = !t->scene->n_points || cfg->optim.init_random;
        printf("initialised %d Gaussians from %s\n", init->n, random ? "random points" : "the dataset's points");
        /* measured (README, "Faster training"): on a capture started from random points graphdeco's
           densification trails MCMC by about 3 dB */
        if (random && t->scene->kind != CS_SCENE_BLENDER && cfg->densify.strategy == CS_STRATEGY_DEFAULT)
            printf("note: a capture trained from random points: here graphdeco's densification is weak "
                   "(instant-ngp's fox, 30k on an H100: 27.1-28.5 dB, MCMC 30.7-31.3); -c configs/mcmc.json, "
                   "configs/fast_mcmc.json for a short run, or configs/mcmc_4k.json for a first look (the fox: "
                   "27.5-28.5 dB in 6 s)\n");
        return 0;
    }
    if (cs_ply_read(ply, init)) return cs_fail_prefix("optim.init_ply");
    if (init->sh_degree != cfg->model.sh_degree) {
        int d = init->sh_degree;
        cs_splats_free(init);
        return cs_fail("optim.init_ply %s has SH degree %d, the run's model.sh_degree is %d", ply, d, cfg->model.sh_degree);
    }
    printf("initialised %d Gaussians from %s\n", init->n, ply);
    return 0;
}

/* The most Gaussians the memory plan allows (densify.cap_max, else what the budget holds). */
static int plan_rows(const trainer *t) { return t->plan.cap ? t->plan.cap : t->plan.max_gaussians; }

/* densify.budget_momentum's starting target, from the model's count: at a fresh start, or on
   resuming a checkpoint that holds none (one written without momentum, or before version 2) */
static void start_target(trainer *t)
{
    if (t->m.target > 0) return;
    t->m.target = cs_budget_start(&t->cfg->densify, t->m.n, plan_rows(t));
    if (t->m.target > 0) printf("Gaussian target %d (densify.budget_momentum: grows with what the refinements ask for)\n", t->m.target);
}

static int start_fresh(trainer *t, const cs_kernel_opts *ko)
{
    const cs_config *cfg = t->cfg;
    cs_splats init;
    char p[1200];
    if (initial_splats(t, &init)) return -1;
    int r = cs_path_join(p, sizeof p, t->out, "input.ply") || cs_ply_write(p, &init, 0) ||
            cs_model_create(t->cl, &t->m, &init, &ko->layout, init.n > t->plan.cap ? init.n : t->plan.cap);
    cs_splats_free(&init);
    if (r) return -1;
    if (cfg->model.filter_3d && cs_filter3d_compute(t->cl, &t->k, &t->dens.d, &t->m)) return -1;
    start_target(t);
    return open_outputs(t, 0);
}

/* optim.exposure: the views' transforms saved beside checkpoint CKPT (their Adam moments start
   again); without that file, the identity (said) */
static int resume_exposure(trainer *t, const char *ckpt)
{
    char p[1400];
    size_t n = strlen(ckpt);
    snprintf(p, sizeof p, "%.*s.exposure.json", (int)(n > 4 && !strcmp(ckpt + n - 4, ".bin") ? n - 4 : n), ckpt);
    if (!cs_file_exists(p)) {
        printf("note: optim.exposure: no %s beside the checkpoint: the views' exposures start again from the identity\n", p);
        return 0;
    }
    int found;
    if (cs_exposure_load(t->loss.exposure, p, &found)) return -1;
    printf("resumed %d of the %d views' exposures from %s\n", found, t->split.n_train, p);
    return 0;
}

/* The checkpoint's model and step; the evaluation records and log lines up to its iteration. */
static int resume(trainer *t, const char *path, const cs_kernel_opts *ko, int *start)
{
    if (cs_checkpoint_load(t->cl, &t->m, start, path, &ko->layout)) return -1;
    printf("resumed from %s at iteration %d with %d Gaussians\n", path, *start, t->m.n);
    if (t->loss.exposure && resume_exposure(t, path)) return -1;
    if (!(t->cfg->densify.budget_momentum > 0)) t->m.target = 0; /* a setting the resumed run dropped */
    start_target(t);
    if (open_outputs(t, 1) || cs_train_log_resume(&t->log, *start))
        return -1;
    t->seconds_before = cs_train_log_last_seconds(&t->log);
    return 0;
}

/* ---- one step ---------------------------------------------------------------------------- */

/* Camera C's photo at *GT + *OFF box-averaged to 1/F of its size; *GT and *OFF then name the
   copy (the loss's scaled buffer, which the next scaling overwrites). */
static int scale_truth(trainer *t, const cs_camera *c, int f, cs_buf **gt, unsigned *off)
{
    unsigned full = *off;
    *off = 0; /* the scaled copy starts the buffer */
    return cs_loss_gt_scaled(&t->loss, *gt, full, c->width, c->height, f, gt);
}

/* Training view VI's ground truth (camera C), box-averaged to 1/F of its size when F > 1. */
static int ground_truth(trainer *t, int vi, const cs_camera *c, int f, cs_buf **gt, unsigned *off)
{
    if (cs_images_get(&t->images, vi, gt, off)) return -1;
    return f == 1 ? 0 : scale_truth(t, c, f, gt, off);
}

/* Training view VI scored for the density control (cs_error_score_view) at 1/F of its size
   against its photo box-averaged as much, THRESHOLD the error that marks a pixel (below 0:
   every pixel, the importance) */
static int score_view(trainer *t, int iter, int vi, int f, float threshold, int active_sh)
{
    int device = t->images.be == cs_residency_of(CS_RES_DEVICE), cam = t->split.train[vi];
    const cs_camera *c = &t->scene->cams[cam];
    cs_view v;
    cs_view_from_camera(c, &v);
    if (f > 1) cs_view_scale(&v, f);
    cs_buf *gt;
    unsigned off;
    /* outside device residency the store's slots hold the next views: the photo comes from
       disk as the evaluation's do */
    if ((device ? cs_images_get(&t->images, vi, &gt, &off) : cs_images_get_camera(&t->images, cam, &gt, &off)) ||
        (f > 1 && scale_truth(t, c, f, &gt, &off)) ||
        cs_error_score_view(&t->dens.d, &t->r, &t->m, &v, active_sh, t->scene->background, gt, off,
                            cs_scene_gt_channels(t->scene), threshold, (float)f * f) ||
        (device && cs_images_release(&t->images)))
        return cs_fail_prefix("iteration %d: the score of view %s", iter, c->name);
    return 0;
}

/* densify.error_views training views, spread over the split and moving with ITER, scored for
   the refinement of this iteration: at full size, or with densify.error_train_size at the size
   the resolution schedule trains now */
static int score_views(trainer *t, int iter, const cs_step_plan *p)
{
    const cs_densify_cfg *dc = &t->cfg->densify;
    int n = t->split.n_train, K = dc->error_views < n ? dc->error_views : n;
    int f = dc->error_train_size && p->res_factor > 1 ? p->res_factor : 1;
    for (int j = 0; j < K; j++)
        if (score_view(t, iter, (int)(((long)iter * 7 + (long)j * n / K) % n), f, (float)dc->error_threshold,
                       p->active_sh))
            return -1;
    return 0;
}

/* densify.prune_fraction: the blend weights of densify.prune_views training views (all when
   0), spread over the split and drawn at full size, summed, and the least drop out */
static int prune_by_importance(trainer *t, int iter, const cs_step_plan *p)
{
    const cs_densify_cfg *dc = &t->cfg->densify;
    int n = t->split.n_train, K = dc->prune_views > 0 && dc->prune_views < n ? dc->prune_views : n, before = t->m.n;
    for (int j = 0; j < K; j++)
        if (score_view(t, iter, (int)((long)j * n / K), 1, -1.f, p->active_sh)) return -1;
    /* the renderer's and the loss's pools go before the compaction's scratch comes (the
       scores stay): the prune adds nothing to the run's peak */
    cs_renderer_trim(&t->r);
    cs_loss_trim(&t->loss);
    if (cs_importance_prune(t->cl, &t->k, &t->dens.d, &t->m, dc->prune_fraction))
        return cs_fail_prefix("iteration %d", iter);
    cs_progress_break(&t->bar);
    printf("iteration %d: importance prune over %d views kept %d of %d Gaussians\n", iter, K, t->m.n, before);
    return 0;
}

static int densify_and_filter(trainer *t, int iter, const cs_step_plan *p)
{
    cs_cl *cl = t->cl;
    if (p->densify && t->cfg->densify.error_views > 0 && t->dens.ops->scores_errors && score_views(t, iter, p)) return -1;
    unsigned seed = cs_hash_u32((uint32_t)t->cfg->optim.seed * 2654435761u ^ (uint32_t)iter);
    int max_rows = plan_rows(t), line = cs_budget_rows(t->m.target, p->budget_line);
    if (p->row_budget > 0 && p->row_budget < max_rows) max_rows = p->row_budget;
    if (line > 0 && line < max_rows) max_rows = line;
    cs_refine_args a = {&t->cfg->densify, t->extent, p->densify_check_size, max_rows, seed};
    if (p->densify && t->dens.ops->refine(&t->dens, cl, &t->k, &t->m, &a)) return -1;
    if (p->densify) t->m.target = cs_budget_update(&t->cfg->densify, t->m.target, t->dens.d.wanted, plan_rows(t));
    return p->filter3d ? cs_filter3d_compute(cl, &t->k, &t->dens.d, &t->m) : 0;
}

static void trim_pools(trainer *t)
{
    cs_renderer_trim(&t->r);
    cs_loss_trim(&t->loss);
    cs_densifier_trim(t->cl, &t->dens.d);
}


/* Forward, loss and backward of the iteration's view, the regularizers' gradients and the
 * densification statistics (which read the renderer's state of this view). */
static int learn(trainer *t, int iter, const cs_step_plan *p)
{
    int vi = cs_view_for_iteration(&t->order, iter);
    const cs_camera *c = &t->scene->cams[t->split.train[vi]];
    cs_view v;
    cs_view_from_camera(c, &v);
    cs_buf *gt;
    unsigned goff;
    if (t->loss.exposure) cs_exposure_select(t->loss.exposure, vi);
    int f = p->res_factor; /* the resolution schedule: the view and its ground truth scaled down */
    if (f > 1) cs_view_scale(&v, f);
    const float *bg = t->scene->background;
    float lambda = (float)t->cfg->optim.lambda_dssim;
    if (ground_truth(t, vi, c, f, &gt, &goff) ||
        (cs_tile_choice_due(&t->tiles, iter, f) &&
         cs_tile_choice_measure(&t->tiles, &t->r, &t->loss, &t->m, &v, p->active_sh, bg, gt, goff, lambda, iter, f)) ||
        cs_tile_choice_pass(&t->tiles, &t->r, &t->loss, &t->m, &v, p->active_sh, bg, gt, goff, lambda, p->log) ||
        cs_images_release(&t->images) ||
        (iter < t->iterations && cs_images_prefetch(&t->images, cs_view_for_iteration(&t->order, iter + 1))))
        return cs_fail_prefix("iteration %d (view %s)", iter, c->name);
    for (int k = 2; k <= cs_images_lookahead(&t->images) + 1 && iter + k <= t->iterations; k++)
        cs_images_want(&t->images, cs_view_for_iteration(&t->order, iter + k));
    const cs_optim_cfg *o = &t->cfg->optim;
    if (cs_regularize(t->cl, &t->k, &t->m, o->opacity_reg, o->scale_reg)) return -1;
    /* the statistics take the camera's full size even when the view is trained smaller: a
       low-resolution view then densifies about as a full one would (measured on lego: with the
       trained size the resolution schedule ended with 145k Gaussians, 34.76 dB; with the full
       size 457k unbounded, and 221k, 35.41 dB, under a 250k densify.budget) */
    return p->densify_stats && cs_densify_stats(t->cl, &t->k, &t->m, &t->r, c->width, c->height) ? -1 : 0;
}

/* Density control as P plans it: the refinement, the 3D filter and the strategy's per-step
 * perturbation (MCMC's noise). */
static int density_control(trainer *t, int iter, const cs_step_plan *p)
{
    const cs_optim_cfg *o = &t->cfg->optim;
    unsigned noise_seed = cs_hash_u32((uint32_t)o->seed * 0x9e3779b1u ^ (uint32_t)iter ^ 0x4e4f4953u);
    if (densify_and_filter(t, iter, p) || (p->prune_importance && prune_by_importance(t, iter, p)) ||
        (t->dens.ops->after_step &&
         t->dens.ops->after_step(&t->dens, t->cl, &t->k, &t->m, p->position_lr, t->cfg->densify.noise_lr, noise_seed)))
        return -1;
    if (p->trim_pool) trim_pools(t);
    return 0;
}

/* The optimizer step as P plans it, then the density control unless the strategy's comes
 * after the marks (refine_and_reset). step_before and step_after exclude each other and
 * step_after is off on refinement iterations, so the step always precedes the refinement. */
static int update(trainer *t, int iter, const cs_step_plan *p)
{
    /* Adam runs before any refinement of this iteration, so the radii are this model's rows */
    const cs_buf *visible = t->cfg->optim.sparse_adam ? &t->r.radii : NULL;
    const cs_optim_cfg *o = &t->cfg->optim;
    if ((p->step_before || p->step_after) &&
        (cs_adam_step(t->cl, &t->k, &t->m, &t->lrs, p->position_lr, visible) ||
         (t->loss.exposure && cs_exposure_step(t->loss.exposure, cs_lr_expon(o->exposure_lr, o->exposure_lr / 10, 1, 0,
                                                                             t->iterations, iter)))))
        return -1;
    return t->dens.ops->refines_after_marks ? 0 : density_control(t, iter, p);
}

/* ---- marks ------------------------------------------------------------------------------- */

/* Once, when a CPU run will take more than an hour: how to get a quick look instead. */
static void eta_hint(trainer *t, int iter, double its)
{
    double eta = its > 0 ? (t->iterations - iter) / its : 0;
    if (t->eta_hint || !t->cl->is_cpu || eta < 3600) return;
    t->eta_hint = 1;
    char hms[32];
    cs_format_hms(eta, hms, sizeof hms);
    cs_progress_break(&t->bar);
    fprintf(stderr, "note: %d iterations on a CPU will take about %s more; for a quick look stop with Ctrl-C and "
                    "run with --iterations N, optim.steps_scale, or -c configs/demo.json\n", t->iterations, hms);
}

/* Accounted memory per category, current and peak (MiB), and driver-reported use, into REC. */
static void add_memory(trainer *t, json_t *rec)
{
    const cs_mem_stats *ms = &t->cl->mem;
    char key[64];
    for (int i = 0; i < CS_MEM_NCAT; i++) {
        snprintf(key, sizeof key, "mem_%s_mb", cs_mem_cat_names[i]);
        json_object_set_new(rec, key, json_real(ms->cur[i] / 1048576.0));
        snprintf(key, sizeof key, "mem_%s_peak_mb", cs_mem_cat_names[i]);
        json_object_set_new(rec, key, json_real(ms->peak[i] / 1048576.0));
    }
    if (!t->dm.lib) return;
    double drv = cs_driver_mem_sample(&t->dm) / 1048576.0;
    if (t->driver_first_mb <= 0) t->driver_first_mb = drv;
    json_object_set_new(rec, "driver_mb", json_real(drv));
    json_object_set_new(rec, "driver_creep_mb", json_real(drv - t->driver_first_mb));
}

/* train --view: the model's host copy for the live page, when due and watched (see
   cs_train_opts) */
static int snapshot(trainer *t, int iter)
{
    const cs_train_opts *o = t->opt;
    double now = cs_now();
    if (!o || !o->snapshot || (iter > 1 && iter < t->iterations && now - t->snap_last < o->snapshot_seconds)) return 0;
    if (o->snapshot_wanted && !o->snapshot_wanted(o->snapshot_ctx)) return 0;
    cs_splats s;
    if (cs_model_download(t->cl, &t->m, &s)) return -1;
    o->snapshot(o->snapshot_ctx, &s, iter);
    t->snap_last = cs_now();
    t->snap_seconds += t->snap_last - now;
    t->snaps++;
    return 0;
}

/* Training time up to now: the runs before a resume, and this one less its evaluations. */
static double train_seconds(const trainer *t)
{
    return t->seconds_before + cs_now() - t->t_start - t->eval_seconds;
}

/* The progress line and a train_log.jsonl record (and its TensorBoard scalars); stops the
 * run on a non-finite loss. */
static int log_mark(trainer *t, int iter, const cs_step_plan *p)
{
    cs_metrics mt;
    double loss;
    float lambda = (float)t->cfg->optim.lambda_dssim;
    if (cs_loss_read(&t->loss, 0, lambda, &mt, &loss)) return -1; /* at the size the view was trained */
    double now = cs_now(), its = (iter - t->it_last) / fmax(now - t->t_last, 1e-9);
    if (!isfinite(loss))
        return cs_fail("loss is %s at iteration %d; stopping. Last good checkpoint: %s", isnan(loss) ? "NaN" : "Inf",
                       iter, t->last_ckpt[0] ? t->last_ckpt : "(none: set output.checkpoint_iterations)");
    t->t_last = now, t->it_last = iter;
    cs_progress_log(&t->bar, iter, loss, mt.psnr, t->m.n, t->cl->mem.cur_total, t->plan.budget);
    eta_hint(t, iter, its);
    const cs_mem_stats *ms = &t->cl->mem;
    json_t *rec = json_pack("{s:i,s:f,s:f,s:f,s:i,s:f,s:f,s:i,s:f,s:f,s:f}", "iteration", iter, "loss", loss, "l1",
                            mt.l1, "psnr", mt.psnr, "gaussians", t->m.n, "its", its, "lr_position", p->position_lr,
                            "sh_degree", p->active_sh, "device_mb", ms->cur_total / 1048576.0, "peak_device_mb",
                            ms->peak_total / 1048576.0, "pool_mb", cs_renderer_pool_bytes(&t->r) / 1048576.0);
    add_memory(t, rec);
    if (t->m.target > 0) json_object_set_new(rec, "gaussian_target", json_integer(t->m.target));
    json_object_set_new(rec, "seconds", json_real(train_seconds(t)));
    if (cs_tb_log_record(&t->tb, rec)) {
        json_decref(rec);
        return -1;
    }
    return cs_train_log_append(&t->log, rec);
}

/* optim.exposure: the views' transforms to PATH, as graphdeco's exposure.json */
static int save_exposure_to(trainer *t, const char *path)
{
    const char **names = malloc((size_t)t->split.n_train * sizeof *names);
    if (!names) return cs_fail("out of host memory (exposure names)");
    for (int i = 0; i < t->split.n_train; i++) names[i] = t->scene->cams[t->split.train[i]].name;
    int r = cs_exposure_save(t->loss.exposure, path, names);
    free(names);
    return r;
}

/* ... beside the model saved in DIR */
static int save_exposure(trainer *t, const char *dir)
{
    if (!t->loss.exposure) return 0;
    char p[1300];
    snprintf(p, sizeof p, "%s/exposure.json", dir);
    return save_exposure_to(t, p);
}

static int save_checkpoint(trainer *t, int iteration, char *path_out, size_t n)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/checkpoints", t->out);
    if (cs_mkdirs(dir)) return -1;
    snprintf(path_out, n, "%s/chkpnt_%d.bin", dir, iteration);
    if (cs_checkpoint_save(t->cl, &t->m, iteration, path_out)) return -1;
    if (!t->loss.exposure) return 0;
    char p[1300]; /* optim.exposure: the views' transforms beside it, which a resume reads */
    snprintf(p, sizeof p, "%s/chkpnt_%d.exposure.json", dir, iteration);
    return save_exposure_to(t, p);
}

/* A periodic checkpoint: saved, then the older ones removed except the kept marks (and only
 * once the new one is complete, so a kill in between leaves one to resume from). */
static int save_periodic_checkpoint(trainer *t, int iteration)
{
    const cs_output_cfg *o = &t->cfg->output;
    if (save_checkpoint(t, iteration, t->last_ckpt, sizeof t->last_ckpt)) return -1;
    return cs_run_dir_remove_checkpoints_before(t->out, iteration, o->checkpoint_iterations, o->n_checkpoint_iterations);
}

static int save_ply(trainer *t, int iteration)
{
    char dir[1200], p[1300];
    snprintf(dir, sizeof dir, "%s/point_cloud/iteration_%d", t->out, iteration);
    if (cs_mkdirs(dir)) return -1;
    snprintf(p, sizeof p, "%s/point_cloud.ply", dir);
    cs_splats s;
    if (cs_model_download(t->cl, &t->m, &s)) return -1;
    int r = cs_ply_write(p, &s, 0);
    for (int f = 0; f < CS_FMT_COUNT && !r; f++) /* output.export_formats, beside it */
        if (t->cfg->output.export_formats & (1 << f)) {
            snprintf(p, sizeof p, "%s/point_cloud%s", dir, cs_splat_format_ext((cs_splat_format)f));
            cs_export_opts eo = {0, t->cfg->output.spz_sh_bits};
            r = cs_splat_file_write(p, &s, (cs_splat_format)f, &eo);
        }
    cs_splats_free(&s);
    return r || save_exposure(t, dir);
}

/* The marks that report and save the model: after the iteration's optimizer step, before its
 * density control and opacity reset (graphdeco reports and saves before its densification
 * block, so neither reaches a saved or evaluated model). */
static int report_marks(trainer *t, int iter, const cs_step_plan *p)
{
    if (p->log && log_mark(t, iter, p)) return -1;
    if (p->histograms && cs_tb_log_histograms(&t->tb, t->cl, &t->k, &t->m, iter)) return -1;
    if (p->evaluate) {
        cs_fault_point("phase:evaluate");
        cs_progress_break(&t->bar);
        CS_CHECK(clFinish(t->cl->queue)); /* the iterations queued so far are training time */
        double t0 = cs_now();
        t->ev.train_seconds = train_seconds(t);
        cs_densifier_trim(t->cl, &t->dens.d);
        if (cs_loop_profile_hold(&t->prof, t->cl) ||
            cs_evaluate_splits(&t->ev, &t->m, &t->cfg->eval, &t->split, iter, p->active_sh) ||
            cs_loop_profile_resume(&t->prof, t->cl))
            return -1;
        t->eval_seconds += cs_now() - t0;
    }
    return p->save ? save_ply(t, iter) : 0;
}

/* After the marks: graphdeco's density control (refines_after_marks), the opacity reset, then
 * the checkpoints. graphdeco and gsplat report and save before their densification, so an
 * evaluation never sees the clones and splits of its own iteration: measured on
 * south_building (H200, seed 1) the test PSNR fell from 18.4 to 16.6 dB right after the first
 * densification and recovered over the next 100 iterations, so an evaluation at a multiple of
 * densify.interval read up to ~1 dB low. The checkpoints hold the state after the whole
 * iteration, so a resume from one goes on exactly as the run would have. */
static int refine_and_reset(trainer *t, int iter, const cs_step_plan *p)
{
    if (t->dens.ops->refines_after_marks && density_control(t, iter, p)) return -1;
    if (p->reset_opacity && cs_densify_reset_opacity(t->cl, &t->k, &t->m, (float)t->cfg->densify.opacity_decay)) return -1;
    if (p->checkpoint && save_checkpoint(t, iter, t->last_ckpt, sizeof t->last_ckpt)) return -1;
    return p->checkpoint_periodic ? save_periodic_checkpoint(t, iter) : 0;
}

/* Ctrl-C / SIGTERM: a checkpoint of the last finished iteration; 2 when one was saved. */
static int stop_with_checkpoint(trainer *t, int done_iter)
{
    char cp[1400];
    cs_fault_point("phase:stop");
    if (save_checkpoint(t, done_iter, cp, sizeof cp)) return -1;
    cs_progress_break(&t->bar);
    fprintf(stderr, "interrupted: checkpoint saved to %s (resume with --resume %s)\n", cp, cp);
    return 2;
}

/* ---- closing ----------------------------------------------------------------------------- */

static int write_memory_json(trainer *t)
{
    char p[1200];
    json_t *o = cs_mem_json(t->cl);
    json_object_set_new(o, "plan", cs_mem_plan_json(&t->plan));
    json_object_set_new(o, "pool_bytes", json_integer((json_int_t)cs_renderer_pool_bytes(&t->r)));
    /* forward passes redone because the pairs outgrew buffers sized from earlier views */
    json_object_set_new(o, "passes_redone", json_integer(t->r.redone));
    /* kernels enqueued since the device opened, and the loop's seconds blocked on the pair
       count: near zero when the host's enqueueing is what limits the run */
    json_object_set_new(o, "kernel_launches", json_integer((json_int_t)t->cl->launches));
    json_object_set_new(o, "host_wait_seconds", json_real(t->cl->wait_seconds));
    /* a pinned pool (mcmc) is never trimmed: the most pairs any view of the run needed */
    if (t->r.pinned) json_object_set_new(o, "pairs_peak", json_integer(t->r.pairs_seen_max));
    if (t->dm.lib) {
        cs_driver_mem_sample(&t->dm);
        json_object_set_new(o, "driver_peak_bytes", json_integer((json_int_t)t->dm.peak));
    }
    int r = cs_path_join(p, sizeof p, t->out, "memory.json") || cs_write_json(p, o);
    json_decref(o);
    return r;
}

/* The outputs the run has, as one line. */
static void print_outputs(const trainer *t)
{
    static const char *const names[] = {"point_cloud/iteration_%d/point_cloud.ply", "point_cloud/iteration_%d/point_cloud.spz",
                                        "point_cloud/iteration_%d/point_cloud.splat",
                                        "point_cloud/iteration_%d/point_cloud.compressed.ply",
                                        "point_cloud/iteration_%d/exposure.json", "metrics.json",
                                        "train_log.jsonl", "test/ours_%d/renders", "previews", "checkpoints", "cfg_args",
                                        "report.html"};
    char rel[256], p[1400], line[2048] = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(rel, sizeof rel, names[i], t->iterations);
        snprintf(p, sizeof p, "%s/%s", t->out, rel);
        if (!cs_file_exists(p) && !cs_dir_exists(p)) continue;
        size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, "%s%s", used ? ", " : "", rel);
    }
    printf("outputs in %s: %s\n", t->out, line);
}

/* result.json, written last but for report.html (made from it): its presence says the run
 * finished and its outputs are complete (clsplat batch skips such a job). */
static int write_result_json(trainer *t)
{
    char p[1200];
    const cs_cl *cl = t->cl;
    json_t *o = json_pack("{s:i,s:i,s:f,s:f,s:s}", "iterations", t->iterations, "gaussians", t->m.n, "train_seconds",
                          train_seconds(t), "peak_accounted_mb",
                          cl->mem.peak_total / 1048576.0, "device", cl->name);
    if (t->dm.lib) json_object_set_new(o, "peak_driver_mb", json_real(t->dm.peak / 1048576.0));
    int r = cs_path_join(p, sizeof p, t->out, "result.json") || cs_write_json(p, o);
    json_decref(o);
    return r;
}

static int finish(trainer *t, int start)
{
    cs_cl *cl = t->cl;
    if (start >= t->iterations && save_ply(t, t->iterations)) return -1;
    CS_CHECK(clFinish(cl->queue));
    cs_progress_break(&t->bar);
    printf("training done: %d iterations in %.1f s, %d Gaussians, peak device memory %.1f MiB (accounted)",
           t->iterations - start, cs_now() - t->t_start, t->m.n, cl->mem.peak_total / 1048576.0);
    if (t->dm.lib) cs_driver_mem_sample(&t->dm), printf(", %.1f MiB (driver, sampled)", t->dm.peak / 1048576.0);
    if (t->eval_seconds > 0) printf("; evaluations took %.1f s of it", t->eval_seconds);
    if (t->snaps) printf("; %d live-view snapshots took %.2f s of it", t->snaps, t->snap_seconds);
    if (t->images.prefetch_hits + t->images.prefetch_misses)
        printf("; image uploads: %d prefetched, %d on demand", t->images.prefetch_hits, t->images.prefetch_misses);
    if (t->images.ahead) {
        int ahead, late;
        cs_decode_ahead_counts(t->images.ahead, &ahead, &late);
        printf("; decoded on %d threads: %d ahead, %d late", t->images.decode_threads, ahead, late);
    }
    printf("\n");
    if (t->plan.cap && cl->mem.peak_total > t->plan.peak_bytes + t->plan.peak_bytes / 100 * 3)
        printf("note: the peak passed the plan's %.1f MiB: the views needed %u pairs, the plan reserves %zu (%d a "
               "Gaussian)\n", t->plan.peak_bytes / 1048576.0, t->r.pairs_seen_max, cs_mem_plan_pairs(&t->plan),
               CS_PLAN_PAIRS_PER_GAUSSIAN);
    if (write_memory_json(t) || write_result_json(t)) return -1;
    /* the page is made from the files above and can be made again (clsplat report): its
       failure is said, not the run's */
    if (t->cfg->output.report && cs_run_report_write(t->out, NULL))
        fprintf(stderr, "warning: report.html not written: %s\n", cs_last_error());
    print_outputs(t);
    return 0;
}

static void trainer_close(trainer *t)
{
    cs_renderer_free(&t->r);
    cs_loss_free(&t->loss);
    cs_exposure_free(&t->exposure);
    cs_density_free(&t->dens, t->cl);
    cs_model_free(t->cl, &t->m);
    cs_images_free(&t->images);
    cs_tile_choice_close(&t->tiles);
    cs_kernels_release(&t->k);
    cs_driver_mem_close(&t->dm);
    cs_evaluator_close(&t->ev);
    cs_tb_log_close(&t->tb, t->cl);
    cs_train_log_close(&t->log);
    cs_view_order_free(&t->order);
    cs_split_free(&t->split);
}

/* ---- the loop ---------------------------------------------------------------------------- */

/* A strategy with a fixed cap (MCMC): every row, the strategy's scratch and the renderer's pool
   allocated for the cap now. Otherwise the model's spare capacity never passes the plan. */
static int setup_density(trainer *t)
{
    const cs_mem_plan *p = &t->plan;
    if (!p->cap) {
        t->m.max_rows = p->max_gaussians;
        return t->dens.ops->start(&t->dens, t->cl, &t->m, 0);
    }
    int user_max = t->cfg->memory.max_gaussians;
    if (p->cap > p->max_gaussians && user_max > 0 && p->max_gaussians == user_max)
        return cs_fail("densify.cap_max %d is above memory.max_gaussians %d: set the cap at most that", p->cap, user_max);
    if (p->cap > p->max_gaussians)
        return cs_fail("densify.cap_max %d does not fit: it plans %.1f MiB and the budget is %.1f MiB, which holds %d "
                       "Gaussians (memory.vram_budget_mb, or densify.cap_max 0 for what fits)",
                       p->cap, p->peak_bytes / 1048576.0, p->budget / 1048576.0, p->max_gaussians);
    if (t->m.n > p->cap)
        return cs_fail("the model starts with %d Gaussians, more than densify.cap_max %d (raise the cap, or start from "
                       "fewer random points: optim.init_random, optim.random_init_points)",
                       t->m.n, p->cap);
    t->m.max_rows = p->cap;
    /* and the renderer's pool, at the plan's pairs: the plan is the peak from the start */
    return t->dens.ops->start(&t->dens, t->cl, &t->m, p->cap) ||
                   cs_renderer_pin(&t->r, (size_t)p->cap, p->max_pixels, p->max_tiles, cs_mem_plan_pairs(p))
               ? -1
               : 0;
}

int cs_train(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_train_opts *opt)
{
    trainer T, *t = &T;
    cs_kernel_opts ko;
    int start = 0, rc = -1;
    volatile sig_atomic_t *stop = opt ? opt->stop : NULL;
    if (trainer_open(t, cl, cfg, scene, &ko)) goto done;
    t->opt = opt;
    cs_fault_point("phase:kernels");
    if (stop && *stop) { /* during the kernel build or tuning: nothing trained, nothing to save */
        fprintf(stderr, "interrupted during set-up; nothing was trained\n");
        rc = 2;
        goto done;
    }
    if (opt && opt->resume ? resume(t, opt->resume, &ko, &start) : start_fresh(t, &ko)) goto done;
    if (setup_density(t) || write_memory_json(t)) goto done; /* the plan, for the live page; again at the end */
    t->t_start = t->t_last = cs_now();
    t->it_last = start;
    cs_progress_start(&t->bar, start, t->iterations);
    const cs_optim_cfg *o = &t->cfg->optim;
    if (cs_loop_profile_start(&t->prof, cl, opt && opt->profile, start + 1, cs_res_factor(o, start + 1, t->iterations), 0))
        goto done;
    for (int iter = start + 1; iter <= t->iterations; iter++) {
        if (cs_fault_enabled()) {
            char phase[48];
            snprintf(phase, sizeof phase, "phase:iteration %d;", iter);
            cs_fault_point(phase);
        }
        if (stop && *stop) {
            rc = iter - 1 > start ? stop_with_checkpoint(t, iter - 1) : 2;
            if (rc == 2 && iter - 1 == start) fprintf(stderr, "interrupted before the first iteration; nothing to save\n");
            goto done;
        }
        cs_step_plan p = cs_schedule_at(t->cfg, iter, t->iterations, t->extent);
        if (learn(t, iter, &p) || update(t, iter, &p) || report_marks(t, iter, &p) || refine_and_reset(t, iter, &p) ||
            snapshot(t, iter) ||
            (t->prof.on && cs_loop_profile_step(&t->prof, cl, iter, cs_res_factor(o, iter + 1, t->iterations),
                                                t->iterations, t->eval_seconds)))
            goto done;
        cs_progress_tick(&t->bar, iter, t->m.n, cl->mem.cur_total, t->plan.budget);
    }
    rc = finish(t, start);
done:
    cs_progress_break(&t->bar);
    trainer_close(t);
    return rc;
}
