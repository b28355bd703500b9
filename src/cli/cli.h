/* cli: the command line's contract. Each command accepts exactly the options its table row
 * names and rejects any other with a message naming the command; graphdeco's common flags
 * work as aliases of config keys. Settings resolve in one order, documented in the README:
 * built-in defaults < the config file(s) < command-line flags and --set, in the order given;
 * a device-specific value (optim.iterations_on_cpu) never overrides an explicit
 * optim.iterations from the command line, and that count is the one trained whatever
 * optim.steps_scale (stored as count / steps_scale, so the scaled run has it). */
#ifndef CS_CLI_H
#define CS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "config.h"

typedef enum {
    CS_CMD_DEVICES, CS_CMD_TRAIN, CS_CMD_RENDER, CS_CMD_EVAL, CS_CMD_INFO, CS_CMD_BENCH, CS_CMD_TUNE,
    CS_CMD_CONFIG, CS_CMD_BATCH, CS_CMD_METRICS, CS_CMD_EXPORT, CS_CMD_MESH, CS_CMD_REPORT, CS_CMD_VIEW, CS_CMD_PARTITION, CS_CMD_MERGE,
    CS_CMD_COUNT
} cs_command;

#define CS_MAX_ASSIGN 128
#define CS_MAX_POSITIONAL 4096

typedef struct {
    cs_command command;
    const char *config;           /* -c */
    const char *resume, *kernel_dir, *ply, *model, *split;
    const char *out;              /* render -o (train's -o is the config key output.dir) */
    bool no_cache, help, force, list;
    int iters, view;              /* bench; metrics --iters */
    bool iters_set;               /* --iters given */
    const char *devices;          /* batch --devices */
    int task, per_device;         /* batch --task (-1: none), --per-device (0: memory decides) */
    bool collect;                 /* batch --collect */
    const char *format;           /* export --format */
    int orbit;                    /* render --orbit N (0: the dataset's views) */
    bool bake;                    /* export --bake */
    bool depth_maps;              /* render --depth-maps */
    /* mesh: --voxel, --grid, --max-triangles, --depth, --max-depth, --trunc, --volume-mb (0: defaults) */
    double voxel, max_depth, trunc, volume_mb;
    int grid, max_triangles, keep_components;
    const char *depth;
    bool psnr;                    /* mesh --psnr (--renders sets it too) */
    int psnr_samples;             /* mesh --psnr-samples N (0: the default) */
    int refine_samples;           /* mesh --refine-samples N (0: the default) */
    const char *from;             /* mesh --from MESH.ply */
    bool profile;                 /* mesh --profile, train --profile: kernel times */
    const char *renders;          /* mesh --renders DIR */
    bool serve;                   /* train --view PORT, view */
    int port;                     /* the port served (0: a free one) */
    const char *host;             /* --host: the address served (NULL: 127.0.0.1) */
    int blocks;                   /* partition --blocks N */
    int gaussians;                /* partition --gaussians N (0: none) */
    int finetune;                 /* merge --finetune N (0: none) */
    int refine;                   /* mesh --refine N (0: none) */
    int shell;                    /* mesh --shell L (-1: the default) */
    int texture;                  /* mesh --texture R (0: none, -1: auto) */
    double near_cut;              /* mesh --near-cut F */
    int consistency;              /* mesh --consistency N (-1: by the scene's kind) */
    int refine_texture;           /* mesh --refine-texture N (0: --refine's N) */
    double contract;              /* mesh --contract S (0: none) */
    int focus;                    /* mesh --focus 1, --no-focus 0, neither -1 */
    double refine_dssim;          /* mesh --refine-dssim W */
    double carve;                 /* mesh --carve W */
    bool carve_dropped;           /* mesh --carve-dropped */
    bool shell_fit;               /* mesh --shell-fit */
    int pseudo_views;             /* mesh --pseudo-views N */
    bool no_exposure;             /* mesh --no-exposure */
    bool refine_exposure;         /* mesh --refine-exposure */
    int refine_geometry;          /* mesh --refine-geometry N (0: none, -1: twice --refine's) */
    double refine_step, refine_laplacian, refine_normal; /* mesh --refine-step (-1: by the scene), --refine-laplacian, --refine-normal */
    double refine_steps[4];       /* mesh --refine-step auto or S1,S2,..: the steps tried (mesh_step.h's CS_MESH_STEPS_MAX) */
    int n_refine_steps;           /* how many (0, 1: one step, refine_step) */
    double margin, min_share;     /* partition --margin, --min-share (negative: the defaults) */
    double headroom;              /* partition --headroom (0: the default) */
    const char *argv0;
    /* batch: the job list, or scene folders; metrics: the two images; merge: the plan */
    const char *positional[CS_MAX_POSITIONAL];
    int n_positional;
    /* config assignments from flags and --set, in command-line order: "key=value" and the
       flag that gave each (for messages) */
    char *assign[CS_MAX_ASSIGN];
    const char *assign_from[CS_MAX_ASSIGN];
    int n_assign;
} cs_args;

/* Parses ARGV[1] (the command) and its options. -1 with a message for usage errors (unknown
 * command or option, a missing or malformed value); the caller exits with status 2. */
int cs_cli_parse(int argc, char **argv, cs_args *a);
/* Frees the assignments (the argv strings stay the caller's). */
void cs_cli_free(cs_args *a);
/* The overview of every command. */
void cs_cli_usage(FILE *out);
/* One command's usage line, description and options (generated from the option table). */
void cs_cli_help(cs_command c, FILE *out);
/* Applies A's assignments to CFG (already holding defaults and any config file), in order,
 * then the precedence rule for optim.iterations_on_cpu. -1 with a message naming the flag. */
int cs_cli_apply(const cs_args *a, cs_config *cfg);
/* True if A sets config key KEY ("output.dir") on the command line. */
bool cs_cli_sets(const cs_args *a, const char *key);

#endif
