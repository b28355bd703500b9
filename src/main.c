/* main: the clsplat command line: argument parsing and dispatch to the programs (train,
 * render, eval, info, bench, tune, devices). Only main decides to exit; every error is one clear message and a non-zero status. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "cl_runtime.h"
#include "config.h"
#include "evaluator.h"
#include "ply.h"
#include "scene.h"
#include "splats.h"
#include "trainer.h"
#include "tune.h"
#include "util.h"

static volatile int g_stop; /* set by SIGINT/SIGTERM: the trainer saves a checkpoint and returns */
static void on_signal(int sig)
{
    (void)sig;
    g_stop = 1;
}

typedef struct {
    const char *config, *data, *out, *device, *resume, *kernel_dir, *ply, *model, *split;
    int no_cache, help, iters, view;
    const char *sets[64];
    int nsets;
} args;

static const char *USAGE =
    "usage: clsplat <command> [options]\n"
    "commands:\n"
    "  devices                      list OpenCL platforms and devices\n"
    "  train -c CONFIG [-s DATA] [-o OUT] [--set k=v ...] [--device P:D] [--resume CKPT]\n"
    "  render (--ply FILE -s DATA | -m OUT) [-o DIR] [--split train|test|all] [--device P:D]\n"
    "  eval -m OUT [--device P:D]   evaluate a trained model on its test views\n"
    "  info FILE.ply                count, SH degree, bounds, 3D filter\n"
    "  bench -s DATA --ply FILE [--iters N] [--view I]   per-stage timings of a training iteration\n"
    "  tune [-c CONFIG] [--set k=v ...] [--device P:D]   measure tile and work-group sizes for the device\n"
    "common options: --kernel-dir DIR (load .cl files from DIR), --no-kernel-cache, -h/--help\n";

/* A whole decimal integer >= MIN (and < 2^31) for option OPT. */
static int parse_int(const char *opt, const char *text, int min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < min || v > 2147483647L)
        return cs_fail("%s: '%s' is not a whole number >= %d", opt, text, min);
    *out = (int)v;
    return 0;
}

static int parse(int argc, char **argv, args *a)
{
    memset(a, 0, sizeof *a);
    a->iters = 20;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i];
        const char **dst = NULL;
        if (!strcmp(o, "-h") || !strcmp(o, "--help")) { a->help = 1; continue; }
        if (!strcmp(o, "--no-kernel-cache")) { a->no_cache = 1; continue; }
        if (!strcmp(o, "-c") || !strcmp(o, "--config")) dst = &a->config;
        else if (!strcmp(o, "-s") || !strcmp(o, "--source")) dst = &a->data;
        else if (!strcmp(o, "-o") || !strcmp(o, "--output")) dst = &a->out;
        else if (!strcmp(o, "--device")) dst = &a->device;
        else if (!strcmp(o, "--resume")) dst = &a->resume;
        else if (!strcmp(o, "--kernel-dir")) dst = &a->kernel_dir;
        else if (!strcmp(o, "--ply")) dst = &a->ply;
        else if (!strcmp(o, "-m") || !strcmp(o, "--model")) dst = &a->model;
        else if (!strcmp(o, "--split")) dst = &a->split;
        else if (!strcmp(o, "--set") || !strcmp(o, "--iters") || !strcmp(o, "--view")) {
            if (i + 1 >= argc) return cs_fail("%s needs a value", o);
            if (!strcmp(o, "--set")) {
                if (a->nsets == 64) return cs_fail("too many --set options");
                a->sets[a->nsets++] = argv[++i];
            } else if (parse_int(o, argv[++i], !strcmp(o, "--iters") ? 1 : 0,
                                 !strcmp(o, "--iters") ? &a->iters : &a->view))
                return -1;
            continue;
        } else if (!strcmp(argv[1], "info") && o[0] != '-' && !a->ply) {
            a->ply = o;
            continue;
        } else
            return cs_fail("unknown option '%s' for '%s' (see clsplat %s --help)", o, argv[1], argv[1]);
        if (i + 1 >= argc) return cs_fail("%s needs a value", o);
        *dst = argv[++i];
    }
    return 0;
}

/* config: defaults <- file <- -s/-o/--device <- --set */
static int make_config(const args *a, cs_config *cfg)
{
    cs_config_defaults(cfg);
    if (a->config && cs_config_load_file(cfg, a->config)) return -1;
    if (a->data) snprintf(cfg->data.path, sizeof cfg->data.path, "%s", a->data);
    if (a->out) snprintf(cfg->output.dir, sizeof cfg->output.dir, "%s", a->out);
    if (a->device) snprintf(cfg->device.id, sizeof cfg->device.id, "%s", a->device);
    for (int i = 0; i < a->nsets; i++)
        if (cs_config_set(cfg, a->sets[i])) return -1;
    return 0;
}

static int open_device(const args *a, const cs_config *cfg, cs_cl *cl, int profiling)
{
    cs_cl_options o = {cfg->device.id, a->kernel_dir, a->no_cache, profiling, NULL};
    if (cs_cl_open(cl, &o)) return -1;
    printf("device %d:%d: %s (%s, %s, %.0f MiB)\n", cl->platform_index, cl->device_index, cl->name, cl->vendor,
           cl->device_version, cl->global_mem / 1048576.0);
    return 0;
}

/* Latest point_cloud/iteration_N in a model folder. */
static int latest_ply(const char *model, char *out, size_t n, int *iteration)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/point_cloud", model);
    DIR *d = opendir(dir);
    if (!d) return cs_fail("%s: no point_cloud folder (is it a clsplat output folder?)", model);
    int best = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        int it;
        if (sscanf(e->d_name, "iteration_%d", &it) == 1 && it > best) best = it;
    }
    closedir(d);
    if (best < 0) return cs_fail("%s: no saved iteration", dir);
    snprintf(out, n, "%s/iteration_%d/point_cloud.ply", dir, best);
    *iteration = best;
    return 0;
}

/* model folder: its saved config, then the command line on top */
static int model_config(const args *a, cs_config *cfg)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/config.json", a->model);
    cs_config_defaults(cfg);
    if (cs_config_load_file(cfg, p)) return -1;
    if (a->data) snprintf(cfg->data.path, sizeof cfg->data.path, "%s", a->data);
    if (a->device) snprintf(cfg->device.id, sizeof cfg->device.id, "%s", a->device);
    for (int i = 0; i < a->nsets; i++)
        if (cs_config_set(cfg, a->sets[i])) return -1;
    return 0;
}

static int cmd_train(const args *a)
{
    if (a->help) {
        printf("usage: clsplat train -c CONFIG [-s DATA] [-o OUT] [--set key.sub=value ...] [--device P:D|NAME]\n"
               "                     [--resume OUT/checkpoints/chkpnt_N.bin] [--kernel-dir DIR] [--no-kernel-cache]\n"
               "Trains a Gaussian Splatting scene. See README.md for the config keys and the outputs.\n");
        return 0;
    }
    cs_config cfg;
    if (make_config(a, &cfg)) return -1;
    cs_cl cl;
    if (open_device(a, &cfg, &cl, 0)) return -1;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    cs_train_opts o = {a->resume, &g_stop};
    int r = cs_train(&cl, &cfg, &o);
    cs_cl_close(&cl);
    return r == 2 ? 130 : r;
}

static int cmd_render(const args *a)
{
    if (a->help) {
        printf("usage: clsplat render --ply FILE -s DATASET -o DIR [--split train|test|all] [--device P:D]\n"
               "       clsplat render -m OUTDIR [-o DIR] [--split ...]   (a trained model with its saved config)\n"
               "Writes DIR/<image stem>.png for each view of the split at the dataset's resolution setting.\n");
        return 0;
    }
    cs_config cfg;
    char ply[1400], out[1400];
    int it = 0;
    if (a->model) {
        if (model_config(a, &cfg) || latest_ply(a->model, ply, sizeof ply, &it)) return -1;
        snprintf(out, sizeof out, "%s", a->out ? a->out : "");
        if (!a->out) snprintf(out, sizeof out, "%s/renders/%s_%d", a->model, a->split ? a->split : "test", it);
    } else {
        if (!a->ply || !a->data) return cs_fail("render needs --ply FILE and -s DATASET, or -m OUTDIR");
        if (make_config(a, &cfg)) return -1;
        snprintf(ply, sizeof ply, "%s", a->ply);
        snprintf(out, sizeof out, "%s", a->out ? a->out : "renders");
    }
    cs_splats s;
    if (cs_ply_read(ply, &s)) return -1;
    if (cfg.data.eval == 0 && a->split && strcmp(a->split, "test") == 0) cfg.data.eval = 1;
    cs_scene scene;
    if (cs_scene_load(&cfg.data, &scene)) {
        cs_splats_free(&s);
        return -1;
    }
    cs_cl cl;
    const char *split = a->split ? a->split : "test";
    int count = 0, rc = open_device(a, &cfg, &cl, 0);
    if (!rc) {
        rc = cs_render_model_views(&cl, &cfg, &scene, &s, split, out, &count);
        cs_cl_close(&cl);
    }
    if (!rc) printf("rendered %d %s views of %s (%d Gaussians) to %s\n", count, split, ply, s.n, out);
    cs_scene_free(&scene);
    cs_splats_free(&s);
    return rc;
}

static int cmd_eval(const args *a)
{
    if (a->help || !a->model) {
        printf("usage: clsplat eval -m OUTDIR [--device P:D] [--set key=value]\n"
               "Renders the test views of a trained model (forward only) and writes OUTDIR/metrics.json.\n");
        return a->help ? 0 : cs_fail("eval needs -m OUTDIR");
    }
    cs_config cfg;
    char ply[1400];
    int it;
    if (model_config(a, &cfg) || latest_ply(a->model, ply, sizeof ply, &it)) return -1;
    snprintf(cfg.output.dir, sizeof cfg.output.dir, "%s", a->model);
    cs_splats s;
    if (cs_ply_read(ply, &s)) return -1;
    cs_scene scene;
    if (cs_scene_load(&cfg.data, &scene)) {
        cs_splats_free(&s);
        return -1;
    }
    cs_cl cl;
    int rc = open_device(a, &cfg, &cl, 0);
    if (!rc) {
        rc = cs_evaluate_model(&cl, &cfg, &scene, &s, a->model, it);
        cs_cl_close(&cl);
    }
    cs_scene_free(&scene);
    cs_splats_free(&s);
    return rc;
}

static int cmd_tune(const args *a)
{
    if (a->help) {
        printf("usage: clsplat tune [-c CONFIG] [--set key=value] [--device P:D]\n"
               "Times training passes on a synthetic view for each rasterizer tile size and work-group\n"
               "size, for the kernel options CONFIG asks for (SH degree and storage, antialias mode,\n"
               "3D filter), prints the medians and stores the choice in the kernel cache folder, where\n"
               "train (device.tune = auto) and bench find it.\n");
        return 0;
    }
    cs_config cfg;
    if (make_config(a, &cfg)) return -1;
    cs_cl cl;
    if (open_device(a, &cfg, &cl, 0)) return -1;
    cs_kernel_opts ko;
    cs_kernel_opts_of(&cfg, &ko);
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

static int cmd_info(const args *a)
{
    if (a->help || !a->ply) {
        printf("usage: clsplat info FILE.ply\n");
        return a->help ? 0 : cs_fail("info needs a PLY file");
    }
    cs_splats s;
    if (cs_ply_read(a->ply, &s)) return -1;
    float lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int i = 0; i < s.n; i++)
        for (int k = 0; k < 3; k++) {
            float v = s.means[i * 3 + k];
            if (i == 0 || v < lo[k]) lo[k] = v;
            if (i == 0 || v > hi[k]) hi[k] = v;
        }
    printf("%s\n  Gaussians: %d\n  SH degree: %d\n  bounds: [%g %g %g] .. [%g %g %g]\n  3D filter: %s\n", a->ply, s.n,
           s.sh_degree, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], s.filter_3d ? "yes (filter_3D)" : "no");
    cs_splats_free(&s);
    return 0;
}

static int cmd_bench(const args *a)
{
    if (a->help || !a->data || !a->ply) {
        printf("usage: clsplat bench -s DATASET --ply FILE [--iters N] [--view I] [--set key=value] [--device P:D]\n"
               "Times a training iteration on one view N times (forward, loss, backward, densification\n"
               "statistics, Adam with zero learning rates); prints per-stage medians and the bandwidth\n"
               "each achieves on the least bytes it must move.\n");
        return a->help ? 0 : cs_fail("bench needs -s DATASET and --ply FILE");
    }
    cs_config cfg;
    if (make_config(a, &cfg)) return -1;
    cs_splats s;
    if (cs_ply_read(a->ply, &s)) return -1;
    cs_scene scene;
    if (cs_scene_load(&cfg.data, &scene)) {
        cs_splats_free(&s);
        return -1;
    }
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

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(USAGE, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    args a;
    int rc;
    if (parse(argc, argv, &a)) {
        fprintf(stderr, "clsplat: %s\n", cs_last_error());
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "devices")) rc = a.help ? (printf("usage: clsplat devices\n"), 0) : cs_cl_list(stdout);
    else if (!strcmp(cmd, "train")) rc = cmd_train(&a);
    else if (!strcmp(cmd, "render")) rc = cmd_render(&a);
    else if (!strcmp(cmd, "eval")) rc = cmd_eval(&a);
    else if (!strcmp(cmd, "info")) rc = cmd_info(&a);
    else if (!strcmp(cmd, "bench")) rc = cmd_bench(&a);
    else if (!strcmp(cmd, "tune")) rc = cmd_tune(&a);
    else {
        fprintf(stderr, "clsplat: unknown command '%s'\n%s", cmd, USAGE);
        return 2;
    }
    if (rc == 130) return 130;
    if (rc) {
        fprintf(stderr, "clsplat: error: %s\n", cs_last_error());
        return 1;
    }
    return 0;
}
