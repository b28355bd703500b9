/* main: the clsplat command line: parses (cli.h) and dispatches to the programs (train,
 * render, eval, info, bench, tune, devices, config, batch, metrics). Only main decides to exit: 0 on success,
 * 1 with one "clsplat: error: ..." line on failure, 2 for usage errors, 128 + the signal after
 * SIGINT (130) or SIGTERM (143). */
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "bench.h"
#include "blocks.h"
#include "cl_runtime.h"
#include "cli.h"
#include "config.h"
#include "evaluator.h"
#include "image_metrics.h"
#include "mesh_gltf.h"
#include "mesher.h"
#include "model.h"
#include "optim.h"
#include "outputs.h"
#include "render.h"
#include "run_report.h"
#include "run_dir.h"
#include "scene.h"
#include "splat_file.h"
#include "splats.h"
#include "trainer.h"
#include "tune.h"
#include "util.h"
#include "version.h"
#include "view_server.h"

enum { EXIT_USAGE = 2 };
/* a usage error: the message, then exit status 2 */
#define USAGE_ERROR(...) (cs_fail(__VA_ARGS__), EXIT_USAGE)

/* the signal that asked to stop (SIGINT, SIGTERM), 0 while none did: the trainer saves a
   checkpoint and returns, set-up stops between its phases */
static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

/* SIGINT and SIGTERM stop a run cleanly; a signal the parent set to be ignored (nohup, a
   background job) stays ignored. */
static void catch_stop_signals(void)
{
    int sigs[] = {SIGINT, SIGTERM};
    for (int i = 0; i < 2; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* after a stop: 128 + the signal (130 for Ctrl-C, 143 for SIGTERM) */
static int stopped(void) { return 128 + (int)g_stop; }

/* ---- settings ---------------------------------------------------------------------------- */

/* defaults < BASE_FILE (a run's config.json, or NULL) < -c < the command line */
static int resolve_config(const cs_args *a, const char *base_file, cs_config *cfg)
{
    cs_config_defaults(cfg);
    if (base_file && cs_config_load_file(cfg, base_file)) return -1;
    if (a->config && cs_config_load_file(cfg, a->config)) return -1;
    return cs_cli_apply(a, cfg);
}

/* DATA.path as an absolute path (graphdeco stores source_path absolute), so that a run's
   config.json works from any folder; a path that does not exist is kept as given for the
   loader to name */
static void absolute_data_path(cs_config *cfg)
{
    char abs[PATH_MAX];
    if (cfg->data.path[0] && cfg->data.path[0] != '/' && realpath(cfg->data.path, abs) &&
        strlen(abs) < sizeof cfg->data.path)
        snprintf(cfg->data.path, sizeof cfg->data.path, "%s", abs);
}

/* a trained model's folder: its saved config, then the command line on top; what the command
   writes there joins the run's list of outputs */
static int model_config(const cs_args *a, cs_config *cfg)
{
    char p[1200];
    if (cs_path_join(p, sizeof p, a->model, "config.json")) return -1;
    if (!cs_file_exists(p)) return cs_fail("%s: no config.json (is it a clsplat output folder?)", a->model);
    if (resolve_config(a, p, cfg)) return -1;
    absolute_data_path(cfg);
    if (cs_run_dir_check_apart(a->model, cfg->data.path, "-m")) return -1;
    cs_remove_stale_temps(a->model);
    return cs_outputs_track(a->model);
}

/* the splats of PLY (any format clsplat reads) into S, then CFG's scene; S freed when the scene fails */
static int load_model(const char *ply, const cs_config *cfg, cs_splats *s, cs_scene *scene)
{
    if (cs_splat_file_read(ply, s, NULL)) return -1;
    if (cs_scene_load(&cfg->data, scene)) {
        cs_splats_free(s);
        return -1;
    }
    return 0;
}

static int open_device(const cs_args *a, const cs_config *cfg, cs_cl *cl, int profiling)
{
    cs_cl_options o = {cfg->device.id, a->kernel_dir, a->no_cache, profiling, NULL, cfg->device.float_atomics,
                       cfg->device.fast_math};
    if (cs_cl_open(cl, &o)) return -1;
    /* metrics prints one JSON object on stdout: the device line goes to stderr there */
    fprintf(a->command == CS_CMD_METRICS ? stderr : stdout, "device %d:%d: %s (%s, %s, %.0f MiB)\n",
            cl->platform_index, cl->device_index, cl->name, cl->vendor, cl->device_version, cl->global_mem / 1048576.0);
    return 0;
}

/* ---- train ------------------------------------------------------------------------------- */

/* The settings of a run: with --resume the run's own config.json under the command line, and
 * the run's folder; a fresh run without an output folder gets output/<date-time>. */
static int train_config(const cs_args *a, cs_config *cfg)
{
    char run[1024], base[1200];
    if (a->resume) {
        if (cs_run_dir_of_checkpoint(a->resume, run, sizeof run) || cs_path_join(base, sizeof base, run, "config.json"))
            return -1;
        if (resolve_config(a, cs_file_exists(base) ? base : NULL, cfg)) return -1;
        if (!cs_cli_sets(a, "output.dir")) snprintf(cfg->output.dir, sizeof cfg->output.dir, "%s", run);
        absolute_data_path(cfg);
        return 0;
    }
    if (resolve_config(a, NULL, cfg)) return -1;
    absolute_data_path(cfg);
    if (!strcmp(cfg->output.dir, "output") && !cs_cli_sets(a, "output.dir"))
        return cs_run_dir_default("output", cfg->output.dir, sizeof cfg->output.dir);
    return 0;
}

/* The output folder of a run, apart from its dataset, made, locked for this process, cleared
   of an earlier run's outputs (FORCE) and listing what this run writes. */
static int open_run_dir(const cs_config *cfg, bool fresh, bool force)
{
    const char *out = cfg->output.dir;
    if (cs_run_dir_check_apart(out, cfg->data.path, "-o") || cs_mkdirs(out) || cs_run_dir_lock(out)) return -1;
    if (fresh && cs_run_dir_prepare(out, force)) return -1;
    return cs_outputs_track(out);
}

/* train --view: the trainer's snapshots go to the page, while a page watches */
static void publish(void *view, cs_splats *model, int iteration) { cs_view_publish(view, model, iteration); }
static bool watched(void *view) { return cs_view_watched(view); }

static int cmd_train(const cs_args *a)
{
    if (a->host && !a->serve) return USAGE_ERROR("train --host goes with --view PORT");
    cs_config cfg;
    if (train_config(a, &cfg)) return -1;
    catch_stop_signals();
    cs_scene scene;
    if (cs_scene_load(&cfg.data, &scene)) return -1; /* before the device and the output folder */
    cs_fault_point("phase:scene");
    int rc = g_stop ? 2 : open_run_dir(&cfg, !a->resume, a->force);
    cs_view_server *view = NULL; /* --view: the live page, in its own thread, until the end */
    if (!rc && a->serve) {
        cs_view_opts vo = {cfg.output.dir, a->host, a->port};
        rc = cs_view_start(&vo, &view);
        if (!rc) cs_view_announce(view);
    }
    cs_cl cl;
    if (!rc) rc = open_device(a, &cfg, &cl, a->profile);
    if (!rc) {
        cs_train_opts o = {a->resume, &g_stop, view ? publish : NULL, watched, view, CS_VIEW_SNAPSHOT_SECONDS,
                           a->profile};
        rc = cs_train(&cl, &cfg, &scene, &o);
        cs_cl_close(&cl);
    }
    cs_view_stop(view);
    cs_scene_free(&scene);
    return rc == 2 ? stopped() : rc;
}

/* ---- render, eval, info ------------------------------------------------------------------ */

/* The model, settings and folders of `clsplat render`. With -m the test views are the model's
 * own (as eval -m has them: none when it was trained without --eval, and then its training
 * views are rendered unless --split says otherwise); with --ply the test views are held out
 * (every 8th, or the Blender test file) as --eval holds them. */
static int render_paths(const cs_args *a, cs_config *cfg, const char **split, char *ply, char *out, char *gt, int *it,
                        int *with_gt)
{
    const size_t n = 1400;
    if (a->orbit && a->depth_maps) return USAGE_ERROR("render --depth-maps renders the dataset's views, not --orbit");
    if (!a->model) {
        if (!a->ply || !cs_cli_sets(a, "data.path")) return USAGE_ERROR("render needs -m OUTDIR, or --ply FILE and -s DATASET");
        if (resolve_config(a, NULL, cfg)) return -1;
        if (!strcmp(*split, "test")) cfg->data.eval = 1;
        snprintf(ply, n, "%s", a->ply);
        snprintf(out, n, "%s", a->out ? a->out : "renders");
        return 0;
    }
    if (model_config(a, cfg) || cs_run_dir_latest_ply(a->model, ply, n, it)) return -1;
    if (!a->split && !cfg->data.eval) {
        *split = "train";
        printf("the model was trained without --eval, so it has no test views: rendering its training views\n");
    }
    if (a->out) {
        snprintf(out, n, "%s", a->out);
    } else if (a->orbit) {
        snprintf(out, n, "%s/orbit", a->model);
    } else { /* graphdeco render.py's layout */
        snprintf(out, n, "%s/%s/ours_%d/renders", a->model, *split, *it);
        snprintf(gt, n, "%s/%s/ours_%d/gt", a->model, *split, *it);
        *with_gt = 1;
    }
    return 0;
}

/* optim.exposure's transforms beside the model's PLY into BUF (N bytes): BUF when the file is
   there and --no-exposure is not given, else NULL (render, mesh) */
static const char *model_exposure(const cs_args *a, const char *ply, char *buf, size_t n)
{
    const char *cut = strrchr(ply, '/');
    int dir = cut ? (int)(cut + 1 - ply) : 0;
    snprintf(buf, n, "%.*sexposure.json", dir, ply);
    return !a->no_exposure && cs_file_exists(buf) ? buf : NULL;
}

static int cmd_render(const cs_args *a)
{
    cs_config cfg;
    char ply[1400], out[1400], gt[1400];
    int it = 0, with_gt = 0;
    const char *split = a->split ? a->split : "test";
    int u = render_paths(a, &cfg, &split, ply, out, gt, &it, &with_gt);
    if (u) return u;
    cs_splats s;
    cs_scene scene;
    if (load_model(ply, &cfg, &s, &scene)) return -1;
    cs_cl cl;
    char exposure[1400];
    int count = 0, rc = open_device(a, &cfg, &cl, 0);
    if (!rc) {
        rc = a->orbit ? cs_render_orbit(&cl, &cfg, &scene, &s, a->orbit, out)
                      : cs_render_model_views(&cl, &cfg, &scene, &s, split, out, with_gt ? gt : NULL, a->depth_maps,
                                              model_exposure(a, ply, exposure, sizeof exposure), &count);
        cs_cl_close(&cl);
    }
    if (!rc && a->orbit)
        printf("rendered %d orbit frames of %s (%d Gaussians) to %s, and %s/contact_sheet.png\n", a->orbit, ply, s.n, out, out);
    else if (!rc)
        printf("rendered %d %s views of %s (%d Gaussians) to %s\n", count, split, ply, s.n, out);
    cs_scene_free(&scene);
    cs_splats_free(&s);
    return rc;
}

/* ---- mesh ----------------------------------------------------------------------------------- */

static int mesh_options(const cs_args *a, const char *model, char *out, size_t n, cs_mesh_opts *o)
{
    memset(o, 0, sizeof *o);
    if (a->out) snprintf(out, n, "%s", a->out);
    else if (cs_path_join(out, n, model, "mesh.ply")) return -1;
    o->out_path = out;
    o->voxel = a->voxel, o->resolution = a->grid, o->max_triangles = a->max_triangles;
    o->max_depth = a->max_depth, o->trunc_voxels = a->trunc, o->volume_mb = a->volume_mb;
    o->psnr = a->psnr, o->psnr_samples = a->psnr_samples, o->from = a->from, o->renders = a->renders;
    o->refine_samples = a->refine_samples;
    o->keep_components = a->keep_components, o->refine = a->refine;
    o->shell = a->shell, o->refine_dssim = a->refine_dssim, o->contract = a->contract, o->profile = a->profile;
    o->near_cut = a->near_cut, o->focus = a->focus, o->consistency = a->consistency, o->carve = a->carve;
    o->carve_dropped = a->carve_dropped, o->shell_fit = a->shell_fit;
    o->pseudo = a->pseudo_views, o->refine_exposure = a->refine_exposure;
    if (a->refine_exposure && a->refine <= 0)
        return USAGE_ERROR("mesh: --refine-exposure needs --refine N: the exposures are learned with the colours");
    o->texture = a->texture, o->texture_views = a->refine_texture > 0 ? a->refine_texture : a->refine;
    if (a->refine > 100000000 || a->refine_geometry > 100000000 || a->refine_texture > 100000000)
        return USAGE_ERROR("mesh: --refine, --refine-geometry and --refine-texture count views: at most 100000000");
    o->refine_geometry = a->refine_geometry >= 0 ? a->refine_geometry : a->refine > 0 ? 2 * a->refine : 0;
    o->geom = (cs_mesh_geom_opts){a->refine_step, a->refine_laplacian, a->refine_normal};
    o->n_steps = a->n_refine_steps > 1 ? a->n_refine_steps : 0;
    memcpy(o->steps, a->refine_steps, sizeof o->steps);
    if (o->n_steps && o->refine_geometry <= 0)
        return USAGE_ERROR("mesh: --refine-step with several steps chooses the geometry stage's: it needs --refine N "
                           "and --refine-geometry above 0");
    if (a->voxel > 0 && a->grid > 0) return USAGE_ERROR("mesh: --voxel and --grid both set the voxel size; give one");
    if (a->pseudo_views > 16) return USAGE_ERROR("mesh: --pseudo-views %d: at most 16 a training view", a->pseudo_views);
    if (a->pseudo_views > 0 && a->refine <= 0)
        return USAGE_ERROR("mesh: --pseudo-views %d needs --refine N: they are targets of the refinement", a->pseudo_views);
    if (a->refine_geometry > 0 && a->refine <= 0)
        return USAGE_ERROR("mesh: --refine-geometry %d needs --refine N: the colours are fitted first", a->refine_geometry);
    if (a->profile && a->refine <= 0) return USAGE_ERROR("mesh: --profile times --refine's kernels: give --refine N");
    if (a->refine_samples > 1 && a->refine <= 0)
        return USAGE_ERROR("mesh: --refine-samples %d is the refinement's drawing: give --refine N", a->refine_samples);
    if (a->shell > 0 && a->refine <= 0)
        return USAGE_ERROR("mesh: --shell %d needs --refine N: the shell's colours come from fitting it to the photos", a->shell);
    if ((a->texture || a->refine_texture) && a->refine <= 0)
        return USAGE_ERROR("mesh: --texture and --refine-texture need --refine N: the texture is fitted to the photos after "
                           "the vertex colours");
    if (a->refine_texture && !a->texture) return USAGE_ERROR("mesh: --refine-texture %d needs --texture", a->refine_texture);
    if (a->texture && !cs_mesh_is_glb(out))
        return USAGE_ERROR("mesh: --texture writes a texture atlas, which a PLY cannot carry: give -o with a .glb name");
    size_t on = strlen(out);
    if (!cs_mesh_is_glb(out) && !(on >= 4 && !strcasecmp(out + on - 4, ".ply")))
        return USAGE_ERROR("mesh: -o %s: the file's name ends in .ply (PLY) or .glb (binary glTF)", out);
    if (a->from && (a->voxel > 0 || a->grid > 0 || a->depth || a->trunc > 0 || a->volume_mb > 0 || a->contract > 0 ||
                    a->focus >= 0 || a->consistency >= 0 || a->carve > 0 || a->carve_dropped || a->shell_fit))
        return USAGE_ERROR("mesh --from %s: the mesh is taken as it is, so the fusion's options (--voxel, --grid, "
                           "--depth, --trunc, --volume-mb, --contract, --focus, --no-focus, --consistency, --carve, "
                           "--carve-dropped, --shell-fit) have nothing to shape", a->from);
    if (a->depth && strcmp(a->depth, "median") && strcmp(a->depth, "mean"))
        return USAGE_ERROR("mesh --depth %s: median or mean", a->depth);
    o->depth_plane = a->depth && !strcmp(a->depth, "mean") ? 0 : 1;
    return 0;
}

/* what the fusion did (not with --from) */
static void fusion_report(const cs_mesh_stats *st)
{
    printf("mesh: %d views, grid %dx%dx%d of %.4g (max depth %.3g, %d slab%s), bounds [%.3g %.3g %.3g] - [%.3g %.3g %.3g]\n",
           st->views, st->nx, st->ny, st->nz, st->voxel, st->max_depth, st->slabs, st->slabs > 1 ? "s" : "",
           st->bounds[0], st->bounds[1], st->bounds[2], st->bounds[3], st->bounds[4], st->bounds[5]);
    printf("mesh: %zu triangles extracted (%d emission pass%s), %zu after welding (%zu vertices); written %zu triangles, "
           "%zu vertices, %.1f MiB, %zu open edges, %zu non-manifold\n",
           st->soup_tris, st->passes, st->passes == 1 ? "" : "es", st->welded_tris, st->welded_vertices, st->triangles,
           st->vertices, st->file_bytes / 1048576.0, st->boundary_edges, st->nonmanifold_edges);
}

static void mesh_report(const cs_mesh_opts *o, const cs_mesh_stats *st, double secs)
{
    if (o->from)
        printf("mesh: %zu triangles read (%zu vertices); written %zu triangles, %zu vertices, %.1f MiB, %zu open edges, "
               "%zu non-manifold\n", st->welded_tris, st->welded_vertices, st->triangles, st->vertices,
               st->file_bytes / 1048576.0, st->boundary_edges, st->nonmanifold_edges);
    else
        fusion_report(st);
    if (st->alpha_filled > 0)
        printf("mesh: %ld pixels of the views fused at their expected depth: the photos' alpha says object, the model "
               "is too see-through there for a median depth\n", st->alpha_filled);
    if (o->keep_components > 0)
        printf("mesh: kept the %ld largest of %zu connected pieces: %zu triangles left out (and %zu of pieces the "
               "simplification split off)\n", o->keep_components, st->components, st->dropped_tris, st->dropped_simplified);
    if (o->refine > 0)
        printf("mesh: vertex colours fitted to the photos over %d views of %d%s: loss %.4f -> %.4f (first and last "
               "tenth), %.1f s\n", o->refine + o->refine_geometry, st->refine.views,
               o->refine_geometry > 0 ? ", positions over the last of them" : "", st->refine.l1_first,
               st->refine.l1_last, st->refine.seconds - st->refine.tex_seconds);
    if (st->step.n > 0) {
        printf("mesh: geometry step %g chosen by %d held-out training views:", st->step.step[st->step.chosen],
               st->step.held);
        for (int k = 0; k < st->step.n; k++)
            printf(" %g %.2f dB%s", st->step.step[k], st->step.psnr[k], k + 1 < st->step.n ? "," : "");
        printf(" (trials %.1f s)\n", st->step.secs_trials);
    }
    if (o->texture)
        printf("mesh: texture fitted over %d more views: loss %.4f -> %.4f (first and last tenth), %.1f s\n",
               o->texture_views, st->refine.tex_first, st->refine.tex_last, st->refine.tex_seconds);
    printf("mesh: fuse %.2f s, extract %.2f s, weld %.2f s, simplify %.2f s (error %.2g), write %.2f s; total %.2f s; "
           "peak device memory %.1f MiB (accounted)\n",
           st->secs_fuse, st->secs_extract, st->secs_weld, st->secs_simplify, st->simplify_error, st->secs_write, secs,
           st->peak_device / 1048576.0);
    if (o->psnr)
        printf("mesh: drawn at %d %s views: PSNR %.2f dB (lowest %.2f), %.1f%% of the pixels covered, in %.2f s%s%s\n",
               st->eval.views, st->eval.split, st->eval.psnr, st->eval.psnr_min, 100 * st->eval.coverage,
               st->eval.secs, o->renders ? "; drawings in " : "", o->renders ? o->renders : "");
    if (o->psnr && o->psnr_samples > 1)
        printf("mesh: each pixel the mean of %d x %d samples; at the pixels' centres alone: PSNR %.2f dB (lowest %.2f), "
               "%.1f%% covered\n", o->psnr_samples, o->psnr_samples, st->eval_centres.psnr, st->eval_centres.psnr_min,
               100 * st->eval_centres.coverage);
    if (o->psnr) printf("mesh: the lowest view: %s\n", st->eval.worst);
    if (o->psnr && st->eval.object_missed >= 0)
        printf("mesh: against the photos' alpha (object: alpha >= 0.5, %.1f%% of the pixels): %.2f%% of the object's "
               "pixels undrawn (holes, thin silhouettes), %.2f%% of the others drawn\n", 100 * st->eval.object_share,
               100 * st->eval.object_missed, 100 * st->eval.background_drawn);
    printf("mesh written to %s\n", o->out_path);
}

static int cmd_mesh(const cs_args *a)
{
    if (!a->model) return USAGE_ERROR("mesh needs -m OUTDIR (a trained model's folder)");
    cs_config cfg;
    char ply[1400], out[1400];
    int it;
    cs_mesh_opts o;
    int u = mesh_options(a, a->model, out, sizeof out, &o);
    if (u) return u;
    if (model_config(a, &cfg) || cs_run_dir_latest_ply(a->model, ply, sizeof ply, &it)) return -1;
    char exposure[1400];
    o.exposure = model_exposure(a, ply, exposure, sizeof exposure);
    char dir[1400]; /* -o's folder is made before the work, not found missing after it */
    snprintf(dir, sizeof dir, "%s", out);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) *slash = '\0';
    if (slash && slash != dir && cs_mkdirs(dir)) return -1;
    double t0 = cs_now();
    cs_splats s;
    cs_scene scene;
    if (load_model(ply, &cfg, &s, &scene)) return -1;
    cs_cl cl;
    cs_mesh_stats st;
    int rc = open_device(a, &cfg, &cl, 0);
    if (!rc) {
        rc = cs_mesh_model(&cl, &cfg, &scene, &s, &o, &st);
        cs_cl_close(&cl);
    }
    if (!rc) mesh_report(&o, &st, cs_now() - t0);
    cs_scene_free(&scene);
    cs_splats_free(&s);
    return rc;
}

/* evaluates the latest PLY of run folder DIR on its test views (eval, merge) */
static int eval_run(const cs_args *a, const char *dir)
{
    cs_config cfg;
    char ply[1400];
    int it;
    cs_args m = *a;
    m.model = dir;
    if (model_config(&m, &cfg) || cs_run_dir_latest_ply(dir, ply, sizeof ply, &it)) return -1;
    snprintf(cfg.output.dir, sizeof cfg.output.dir, "%s", dir);
    cs_splats s;
    cs_scene scene;
    if (load_model(ply, &cfg, &s, &scene)) return -1;
    cs_cl cl;
    int rc = open_device(a, &cfg, &cl, 0);
    if (!rc) {
        rc = cs_evaluate_model(&cl, &cfg, &scene, &s, dir, it);
        cs_cl_close(&cl);
    }
    cs_scene_free(&scene);
    cs_splats_free(&s);
    return rc;
}

static int cmd_eval(const cs_args *a)
{
    if (!a->model) return USAGE_ERROR("eval needs -m OUTDIR");
    return eval_run(a, a->model);
}

static int cmd_partition(const cs_args *a)
{
    cs_config cfg;
    if (resolve_config(a, NULL, &cfg)) return -1;
    cs_partition_opts o = {&cfg, a->out, a->blocks, a->margin, a->min_share, a->gaussians, a->headroom,
                           a->config, a->assign, a->n_assign};
    return cs_partition(&o);
}

/* merge --finetune N: the merged model of OUT (iteration IT) trained N more iterations on the
 * whole scene into OUT/finetune/, with the blocks' settings, no densification, full resolution
 * and every SH degree from the start, and the position lr going on from where the blocks'
 * schedule left it */
static int merge_finetune(const cs_args *a, const char *out, int it)
{
    cs_config cfg;
    cs_args m = *a;
    m.model = out;
    if (model_config(&m, &cfg)) return -1;
    cs_optim_cfg *o = &cfg.optim;
    double lr = cs_lr_expon(o->position_lr_init, o->position_lr_final, o->position_lr_delay_mult, 0,
                            o->position_lr_max_steps, it);
    char set[6][1100];
    snprintf(set[0], sizeof set[0], "optim.init_ply=%s/point_cloud/iteration_%d/point_cloud.ply", out, it);
    snprintf(set[1], sizeof set[1], "optim.iterations=%d", a->finetune);
    snprintf(set[2], sizeof set[2], "optim.position_lr_init=%.9g", lr);
    snprintf(set[3], sizeof set[3], "optim.position_lr_max_steps=%d", a->finetune);
    snprintf(set[4], sizeof set[4], "eval.test_iterations=[%d]", a->finetune);
    snprintf(set[5], sizeof set[5], "output.save_iterations=[%d]", a->finetune);
    for (int i = 0; i < 6; i++)
        if (cs_config_set_from(&cfg, set[i], "--finetune")) return -1;
    cs_config_explicit_iterations(&cfg, false);
    if (cs_config_explicit_marks(&cfg, "eval.test_iterations") || cs_config_explicit_marks(&cfg, "output.save_iterations"))
        return -1;
    cfg.densify.until = 0, o->sh_increase_interval = 1, o->res_schedule_start = 1, cfg.data.eval = true;
    if (cs_path_join(cfg.output.dir, sizeof cfg.output.dir, out, "finetune")) return -1;
    printf("fine-tuning the merged model: %d iterations on the whole scene into %s\n", a->finetune, cfg.output.dir);
    cs_scene scene;
    if (cs_scene_load(&cfg.data, &scene)) return -1;
    int rc = open_run_dir(&cfg, true, false);
    cs_cl cl;
    if (!rc) rc = open_device(a, &cfg, &cl, 0);
    if (!rc) {
        cs_train_opts to = {false, &g_stop, NULL, NULL, NULL, CS_VIEW_SNAPSHOT_SECONDS, false};
        rc = cs_train(&cl, &cfg, &scene, &to);
        cs_cl_close(&cl);
        if (rc == -1)
            cs_fail_prefix("merge --finetune (the whole merged model on one device: --set memory.vram_budget_mb=M gives "
                           "it room)");
    }
    cs_scene_free(&scene);
    return rc;
}

/* merge, then the merged model's evaluation on the whole scene's test views (and --finetune) */
static int cmd_merge(const cs_args *a)
{
    if (a->n_positional != 1 || !a->model || !a->out) return USAGE_ERROR("merge needs PLAN, -m ROOT and -o OUT");
    int it;
    if (cs_merge(a->positional[0], a->model, a->out, &it) || eval_run(a, a->out) ||
        cs_merge_report(a->positional[0], a->out))
        return -1;
    if (!a->finetune) return 0;
    catch_stop_signals();
    int rc = merge_finetune(a, a->out, it);
    return rc == 2 ? stopped() : rc;
}

static int cmd_metrics(const cs_args *a)
{
    if (a->n_positional != 2) return USAGE_ERROR("metrics needs two images: clsplat metrics IMAGE_A IMAGE_B");
    cs_config cfg;
    if (resolve_config(a, NULL, &cfg)) return -1;
    cs_cl cl;
    if (open_device(a, &cfg, &cl, 0)) return -1;
    json_t *o = NULL;
    int rc = cs_image_metrics(&cl, &cfg, a->positional[0], a->positional[1], a->iters_set ? a->iters : 0, &o);
    cs_cl_close(&cl);
    if (rc) return -1;
    char *text = json_dumps(o, JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9));
    json_decref(o);
    if (!text) return cs_fail("out of host memory");
    printf("%s\n", text);
    free(text);
    return 0;
}

/* the size of PATH in bytes, -1 when it cannot be read */
static long file_bytes(const char *path)
{
    FILE *fp = fopen(path, "rb");
    long bytes = fp && !fseek(fp, 0, SEEK_END) ? ftell(fp) : -1;
    if (fp) fclose(fp);
    return bytes;
}

static int cmd_info(const cs_args *a)
{
    if (!a->ply) return USAGE_ERROR("info needs a scene file: clsplat info FILE (PLY, compressed PLY, .spz, .splat)");
    cs_splats s;
    cs_splat_format f;
    if (cs_splat_file_read(a->ply, &s, &f)) return -1;
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int i = 0; i < s.n; i++)
        for (int k = 0; k < 3; k++) {
            float v = s.means[i * 3 + k];
            if (i == 0 || v < lo[k]) lo[k] = v;
            if (i == 0 || v > hi[k]) hi[k] = v;
        }
    long bytes = file_bytes(a->ply);
    printf("%s\n  format: %s, %ld bytes (%.1f a Gaussian)\n  Gaussians: %d\n  SH degree: %d\n"
           "  bounds: [%g %g %g] .. [%g %g %g]\n  3D filter: %s\n",
           a->ply, cs_splat_format_name(f), bytes, s.n ? (double)bytes / s.n : 0.0, s.n, s.sh_degree, lo[0], lo[1], lo[2],
           hi[0], hi[1], hi[2], s.filter_3d ? "yes (filter_3D)" : "no");
    cs_splats_free(&s);
    return 0;
}

/* export: the model's latest PLY (or --ply) in another format, beside it unless -o. */
/* A checkpoint's model as splats: loaded onto the device with the layout its header gives
 * (the loader's checks), then read back. 1 when PATH is no checkpoint (a scene file), 0 when
 * read, -1 with a message. */
static int read_checkpoint(const cs_args *a, const cs_config *cfg, const char *path, cs_splats *out)
{
    uint8_t head[sizeof(cs_ckpt_header)];
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f) fclose(f);
    cs_ckpt_header h;
    if (got < sizeof head || memcmp(head, "CSCKPT1", 8)) return 1;
    if (cs_checkpoint_header(head, got, path, &h)) return -1;
    cs_model_layout layout = {h.sh_degree, h.sh_half, h.has_filter, h.opt_half};
    cs_cl cl;
    if (open_device(a, cfg, &cl, 0)) return -1;
    cs_model m;
    int it, rc = cs_checkpoint_load(&cl, &m, &it, path, &layout);
    if (!rc) {
        rc = cs_model_download(&cl, &m, out);
        cs_model_free(&cl, &m);
        if (!rc) printf("read checkpoint %s: iteration %d, %d Gaussians\n", path, it, out->n);
    }
    cs_cl_close(&cl);
    return rc;
}

static int cmd_export(const cs_args *a)
{
    if (!a->format) return USAGE_ERROR("export needs --format spz|splat|compressed-ply|ply");
    if (!a->model == !a->ply) return USAGE_ERROR("export needs -m OUTDIR or --ply FILE (one of them)");
    cs_splat_format f;
    if (cs_splat_format_parse(a->format, &f)) return EXIT_USAGE;
    if (a->bake && f != CS_FMT_PLY) return USAGE_ERROR("--bake is for --format ply; the other formats always fold the 3D filter in");
    char src[1400], dst[1500];
    int it;
    if (a->model ? cs_run_dir_latest_ply(a->model, src, sizeof src, &it) : 0) return -1;
    if (!a->model) snprintf(src, sizeof src, "%s", a->ply);
    if (a->out) {
        snprintf(dst, sizeof dst, "%s", a->out);
    } else { /* beside the source: NAME.spz, NAME.splat, NAME.compressed.ply, NAME_baked.ply */
        const char *dot = strrchr(src, '.'), *slash = strrchr(src, '/');
        int stem = dot && (!slash || dot > slash) ? (int)(dot - src) : (int)strlen(src);
        int from_ckpt = stem >= 4 && !strcmp(src + stem, ".bin"); /* chkpnt_N.bin: chkpnt_N.ply */
        snprintf(dst, sizeof dst, "%.*s%s", stem, src,
                 f != CS_FMT_PLY ? cs_splat_format_ext(f) : from_ckpt && !a->bake ? ".ply" : "_baked.ply");
    }
    cs_config cfg; /* output.spz_sh_bits: the run's, or the defaults', then --set */
    if (a->model ? model_config(a, &cfg) : resolve_config(a, NULL, &cfg)) return -1;
    cs_splats s;
    int ck = a->ply ? read_checkpoint(a, &cfg, src, &s) : 1; /* a checkpoint of a stopped run */
    if (ck < 0 || (ck == 1 && cs_splat_file_read(src, &s, NULL))) return -1;
    cs_export_opts eo = {a->bake, cfg.output.spz_sh_bits};
    int rc = cs_splat_file_write(dst, &s, f, &eo);
    if (!rc) {
        long bytes = file_bytes(dst);
        printf("wrote %s: %s, %d Gaussians, SH degree %d%s, %ld bytes (%.1f a Gaussian)%s\n", dst, cs_splat_format_name(f),
               s.n, f == CS_FMT_SPLAT ? 0 : s.sh_degree, f == CS_FMT_SPLAT && s.sh_degree ? " (.splat has no SH: dropped)" : "",
               bytes, s.n ? (double)bytes / s.n : 0.0, s.filter_3d && (f != CS_FMT_PLY || a->bake) ? "; 3D filter folded in" : "");
    }
    cs_splats_free(&s);
    return rc;
}

/* ---- bench, tune, devices, config -------------------------------------------------------- */

static int cmd_bench(const cs_args *a)
{
    if (!a->ply || !cs_cli_sets(a, "data.path")) return USAGE_ERROR("bench needs -s DATASET and --ply FILE");
    cs_config cfg;
    if (resolve_config(a, NULL, &cfg)) return -1;
    cs_splats s;
    cs_scene scene;
    if (load_model(a->ply, &cfg, &s, &scene)) return -1;
    cs_cl cl;
    int rc = open_device(a, &cfg, &cl, 1);
    if (!rc) {
        rc = cs_bench(&cl, &cfg, &scene, &s, a->view, a->iters);
        cs_cl_close(&cl);
    }
    cs_scene_free(&scene);
    cs_splats_free(&s);
    return rc;
}

static int cmd_tune(const cs_args *a)
{
    cs_config cfg;
    if (resolve_config(a, NULL, &cfg)) return -1;
    cs_cl cl;
    if (open_device(a, &cfg, &cl, 0)) return -1;
    cs_kernel_opts ko;
    cs_kernel_opts_of(&cfg, &ko);
    ko.programs = CS_PROGS_TRAIN; /* what the tuning times */
    cs_kernels k;
    cs_tuning t;
    int rc = cs_kernels_build_tuned(&cl, &ko, CS_TUNE_FORCE, &k, &t);
    if (rc == 0) {
        cs_tuning_report(&t, stdout);
        cs_tuning_summary(&t, stdout);
        cs_kernels_release(&k);
    }
    cs_cl_close(&cl);
    return rc;
}

static int cmd_config(const cs_args *a)
{
    if (!a->list) return USAGE_ERROR("config needs --list");
    cs_config_list(stdout);
    return 0;
}

/* ---- batch ------------------------------------------------------------------------------- */

/* The path of this binary for the children (/proc/self/exe; else ARGV0 as given). */
static void self_path(const char *argv0, char *out, size_t n)
{
    ssize_t len = readlink("/proc/self/exe", out, n - 1);
    if (len > 0) out[len] = '\0';
    else snprintf(out, n, "%s", argv0);
}

static int cmd_batch(const cs_args *a)
{
    if (!a->out) return USAGE_ERROR("batch needs -o ROOT (the folder for the jobs' outputs and the summary)");
    if (!a->n_positional) return USAGE_ERROR("batch needs a job list (JOBS.json) or scene folders");
    const char *first = a->positional[0];
    size_t fl = strlen(first);
    bool list = fl > 5 && !strcmp(first + fl - 5, ".json") && !cs_dir_exists(first);
    if (list && a->n_positional > 1) return USAGE_ERROR("batch takes one job list, or scene folders (not both)");
    char self[1024];
    self_path(a->argv0, self, sizeof self);
    catch_stop_signals();
    cs_batch_opts o = {list ? first : NULL, list ? NULL : a->positional, list ? 0 : a->n_positional, a->config,
                       a->out, a->devices, a->task, a->per_device, a->collect,
                       {a->assign, a->assign_from, a->n_assign}, self, &g_stop};
    int rc = cs_batch_run(&o);
    return rc == 2 ? stopped() : rc;
}

static int cmd_report(const cs_args *a)
{
    if (!a->model) return USAGE_ERROR("report needs -m OUTDIR (a training run's folder)");
    char p[1400];
    if (!a->out && cs_path_join(p, sizeof p, a->model, "report.html")) return -1;
    if (cs_report_is_batch(a->model) ? cs_batch_report_page(a->model, a->out ? a->out : p) : cs_run_report_write(a->model, a->out ? a->out : p))
        return -1;
    printf("wrote %s\n", a->out ? a->out : p);
    return 0;
}

/* view: serves -m's folder until Ctrl-C or SIGTERM */
static int cmd_view(const cs_args *a)
{
    if (!a->model) return USAGE_ERROR("view needs -m OUTDIR (a run's or a batch's folder)");
    if (!cs_dir_exists(a->model)) return cs_fail("%s: no such folder", a->model);
    cs_view_opts vo = {a->model, a->host, a->port};
    cs_view_server *s;
    if (cs_view_start(&vo, &s)) return -1;
    catch_stop_signals();
    cs_view_announce(s);
    while (!g_stop) {
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cs_view_stop(s);
    return 0;
}

static int run(const cs_args *a)
{
    switch (a->command) {
    case CS_CMD_DEVICES: return cs_cl_list(stdout);
    case CS_CMD_TRAIN: return cmd_train(a);
    case CS_CMD_RENDER: return cmd_render(a);
    case CS_CMD_MESH: return cmd_mesh(a);
    case CS_CMD_EVAL: return cmd_eval(a);
    case CS_CMD_INFO: return cmd_info(a);
    case CS_CMD_BENCH: return cmd_bench(a);
    case CS_CMD_TUNE: return cmd_tune(a);
    case CS_CMD_CONFIG: return cmd_config(a);
    case CS_CMD_BATCH: return cmd_batch(a);
    case CS_CMD_METRICS: return cmd_metrics(a);
    case CS_CMD_EXPORT: return cmd_export(a);
    case CS_CMD_REPORT: return cmd_report(a);
    case CS_CMD_VIEW: return cmd_view(a);
    case CS_CMD_PARTITION: return cmd_partition(a);
    case CS_CMD_MERGE: return cmd_merge(a);
    default: return cs_fail("internal: no command");
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* `clsplat train | head`: a closed pipe is a failed write (reported at the end), not death */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        cs_cli_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("clsplat %s\n", CS_VERSION);
        return 0;
    }
    cs_args a;
    if (cs_cli_parse(argc, argv, &a)) {
        fprintf(stderr, "clsplat: %s\n", cs_last_error());
        cs_cli_free(&a);
        return EXIT_USAGE;
    }
    if (a.help) {
        cs_cli_help(a.command, stdout);
        cs_cli_free(&a);
        return 0;
    }
    int rc = run(&a);
    cs_cli_free(&a);
    if (fflush(stdout) || ferror(stdout))
        fprintf(stderr, "clsplat: note: writing to standard output failed (closed pipe?); the command went on\n");
    if (rc > 128) return rc; /* stopped by a signal */
    if (rc == EXIT_USAGE) {
        fprintf(stderr, "clsplat: %s\n", cs_last_error());
        return EXIT_USAGE;
    }
    if (rc) {
        fprintf(stderr, "clsplat: error: %s\n", cs_last_error());
        return 1;
    }
    return 0;
}
