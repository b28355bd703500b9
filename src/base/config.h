/* config: the settings struct, its defaults (graphdeco 3DGS), JSON and --set parsing,
 * validation with messages naming the key and file, and the resolved dump. */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define CS_MAX_MARKS 32

enum { CS_AA_CLASSIC = 0, CS_AA_MIP = 1 };
enum { CS_DTYPE_FP32 = 0, CS_DTYPE_FP16 = 1 };
enum { CS_RES_AUTO = 0, CS_RES_DEVICE, CS_RES_HOST, CS_RES_LAZY };
enum { CS_CROP_VALID = 0, CS_CROP_FULL };
enum { CS_STRATEGY_DEFAULT = 0, CS_STRATEGY_MCMC };
enum { CS_PATH_AUTO = 0, CS_PATH_OFF = 1, CS_PATH_ON = 2 };
/* device.tune: auto (the per-device tuning cache; measured and stored when missing), off (16x16
   tiles, 256-item groups), force (measured again); CACHED (internal): the cache or defaults */
enum { CS_TUNE_AUTO = 0, CS_TUNE_OFF, CS_TUNE_FORCE, CS_TUNE_CACHED };
/* device.tile_choice: auto (the default: measure on GPUs, the tuned tile on CPUs), tuned, measure */
enum { CS_TILES_TUNED = 0, CS_TILES_AUTO, CS_TILES_MEASURE };

/* Each group is a named type, so a stage takes only its own part of the settings. */
typedef struct {
    char path[1024];
    char images[256];
    int resolution;        /* 1,2,4,8, a target width >= 16, or -1 (graphdeco auto) */
    bool eval;             /* hold out every 8th image by sorted name (COLMAP) */
    bool white_background;
    char background[64];   /* "" (white_background decides), black, white, border, or "R G B" in [0, 1] */
    int image_residency;   /* CS_RES_* */
    int host_cache_mb;
    int decode_threads;    /* image decoding threads (0: the cores but one, at most 8) */
    int undistort_crop;    /* CS_CROP_*: distorted photos to the largest valid rectangle or the whole view */
    char masks[256];       /* mask folder inside data.path ("" none) */
    bool alpha_as_mask;    /* transparent pixels of the photos are left out of the loss */
    bool invert_masks;     /* mask files: white = left out */
    char block_plan[1024]; /* a block plan ("" none) and its block trained (block_plan.h) */
    int block;
    bool block_mask;       /* block training: pixels whose ray misses the block's expanded region leave the loss */
    bool skip_missing_images; /* frames whose photo is missing are left out (said once) instead of refused */
} cs_data_cfg;

typedef struct {
    int sh_degree;         /* 0..3 */
    int antialias;         /* CS_AA_* */
    double kernel_size;    /* mip 2D filter variance */
    bool filter_3d;        /* mip-splatting 3D smoothing filter */
} cs_model_cfg;

typedef struct {
    int iterations;
    int iterations_on_cpu; /* if > 0 and the device is a CPU, used instead */
    double steps_scale;    /* multiplies every iteration-valued setting (gsplat's steps_scaler) */
    double position_lr_init, position_lr_final, position_lr_delay_mult;
    int position_lr_max_steps;
    double feature_lr, feature_rest_lr, opacity_lr, scaling_lr, rotation_lr;
    double lambda_dssim;
    int sh_increase_interval;
    int seed;
    int random_init_points;
    bool deterministic;    /* per-pair gradient buffers instead of global atomics */
    bool step_on_densify;  /* Adam steps on densification iterations too (gsplat), before densifying */
    bool sparse_adam;      /* Adam steps only the rows visible in the iteration's view (graphdeco's sparse_adam) */
    bool exposure;         /* each training view learns an affine colour transform of its render (stages/exposure.h) */
    double exposure_lr;    /* its Adam lr at the start, decaying to a tenth at the end (graphdeco's 0.01 -> 0.001) */
    int res_schedule_start;      /* resolution schedule: early views at 1/this of their size (1: off) */
    double res_schedule_until;   /* ... rising to full size at this fraction of the iterations */
    bool init_random;      /* random initial points even when the dataset has a point cloud */
    char init_ply[1024];   /* start from this PLY's Gaussians ("": from the points) */
    double init_opacity;   /* initial opacity (-1: the strategy's, 0.1 default, 0.5 mcmc) */
    double init_scale;     /* multiplies the initial nearest-neighbour scale (-1: 1 default, 0.1 mcmc) */
    double opacity_reg;    /* loss + this x mean opacity (-1: 0 default, 0.01 mcmc) */
    double scale_reg;      /* loss + this x mean scale (-1: 0 default, 0.01 mcmc) */
} cs_optim_cfg;

typedef struct {
    int from, until, interval;
    double grad_threshold, percent_dense;
    int opacity_reset_interval;
    double min_opacity, max_screen_size;
    int strategy;          /* CS_STRATEGY_*: graphdeco's adaptive density control or MCMC */
    int cap_max;           /* mcmc: the Gaussian budget (0: what memory.vram_budget_mb allows) */
    double noise_lr;       /* mcmc: position noise, times the position learning rate */
    int budget;            /* the Gaussians allowed grow linearly to this over [from, until] (0: no curve) */
    double budget_momentum; /* the line leads to a target derived from the scene instead (train/budget.h; 0: off) */
    double opacity_decay;  /* the opacity reset multiplies by this instead (0: graphdeco's min(o, 0.01)) */
    int error_views;       /* views scored by their high-error pixels at each refinement (0: off; densify.c) */
    double error_threshold; /* a pixel's mean absolute colour error (0-1) that makes it high-error */
    double error_score;    /* a Gaussian's blend weight over high-error pixels, a view, that densifies it */
    bool error_train_size; /* the views are scored at the iteration's training size, not full size */
    double prune_fraction; /* the share of the Gaussians an importance prune drops (0: off; densify.c) */
    int prune_at;          /* the iteration of that prune (0: densify.until) */
    int prune_views;       /* the training views that score it (0: all) */
} cs_densify_cfg;

typedef struct {
    int sh_dtype;          /* CS_DTYPE_* */
    int optimizer_dtype;   /* CS_DTYPE_* */
    int flush_interval;    /* iterations */
    double vram_budget_mb; /* 0 = 97% of the device's global memory */
    int max_gaussians;     /* 0 = what the budget allows */
} cs_memory_cfg;

typedef struct {
    int test_iterations[CS_MAX_MARKS];
    int n_test_iterations;
    bool save_renders;
    int train_views;       /* also evaluate this many training views (0 = none) */
    int tensorboard_views; /* test views logged as images to TensorBoard at each evaluation */
    int preview_views;     /* test views saved as previews (OUT/previews/ours_N) for the report */
    char lpips_weights[1024]; /* LPIPS weights file ("": the default location, off when missing) */
} cs_eval_cfg;

typedef struct {
    char dir[1024];
    int save_iterations[CS_MAX_MARKS];
    int n_save_iterations;
    int checkpoint_iterations[CS_MAX_MARKS];
    int n_checkpoint_iterations;
    int checkpoint_interval; /* 0 = off; periodic checkpoints replace each other */
    int export_formats;      /* bit 1 << cs_splat_format for each format written beside the PLYs */
    int spz_sh_bits;         /* SPZ SH precision, 1-8 bits (0: the reference packer's 5 and 4) */
    bool report;             /* OUT/report.html at the end of the run */
} cs_output_cfg;

typedef struct {
    char id[128];
    int tune;              /* CS_TUNE_* */
    int tile_choice;       /* CS_TILES_* */
    int float_atomics;     /* CS_PATH_AUTO or 1 + cs_atomic_path (cas, ext, ptx): forces that path */
    int fast_math;         /* CS_PATH_AUTO, CS_PATH_OFF, CS_PATH_ON */
    int pixels_per_item;   /* rasterizer pixels a work-item (0: auto, see kernels.h) */
} cs_device_cfg;

typedef struct {
    int interval;
    bool tensorboard;       /* OUT/events.out.tfevents.* */
    int histogram_interval; /* TensorBoard histograms every N iterations (0 = off) */
} cs_log_cfg;

typedef struct {
    cs_data_cfg data;
    cs_model_cfg model;
    cs_optim_cfg optim;
    cs_densify_cfg densify;
    cs_memory_cfg memory;
    cs_eval_cfg eval;
    cs_output_cfg output;
    cs_device_cfg device;
    cs_log_cfg log;
} cs_config;

/* Fills CFG with the built-in defaults. */
void cs_config_defaults(cs_config *cfg);
/* Applies a JSON config file over CFG; -1 with a message naming the file and key. */
int cs_config_load_file(cs_config *cfg, const char *path);
/* Applies one "key.sub=value" override; the value is read as JSON when it parses, else as a
 * string. -1 with a message naming the key and "--set". */
int cs_config_set(cs_config *cfg, const char *assignment);
/* cs_config_set naming SOURCE (a command-line flag) in messages. */
int cs_config_set_from(cs_config *cfg, const char *assignment, const char *source);
/* An explicit iteration count (the command line's, a job list's "set"): it wins over the
 * config file's count for CPUs (unless SETS_CPU_COUNT: optim.iterations_on_cpu was set beside
 * it) and is the count trained whatever optim.steps_scale (stored as count / scale). */
void cs_config_explicit_iterations(cs_config *cfg, bool sets_cpu_count);
/* Iteration marks given explicitly (the command line's --test_iterations, --save_iterations,
 * --checkpoint_iterations, a --set of those keys): each is the iteration evaluated or saved
 * whatever optim.steps_scale (stored as the mark / scale, so that the stored config repeats
 * the run). KEY names the marks' key. -1 with a message when a scale above 1 cannot reach a
 * mark exactly. */
int cs_config_explicit_marks(cs_config *cfg, const char *key);
/* True if NAME ("optim.iterations") is a key. */
bool cs_config_is_key(const char *name);
/* Multiplies every iteration-valued setting by optim.steps_scale (floor; intervals at least
 * 1) and sets the scale to 1: iterations, position_lr_max_steps, sh_increase_interval, the
 * densification window, interval and reset interval, evaluation, save and checkpoint marks.
 * optim.iterations_on_cpu is a count and stays. */
void cs_config_scale_steps(cs_config *cfg);
/* Resolves the settings whose default depends on densify.strategy (-1: the strategy's). */
void cs_config_strategy_defaults(cs_config *cfg);
/* Prints every key with its default, range and meaning (`clsplat config --list`). */
void cs_config_list(FILE *out);
/* Applies a JSON text (used by tests and by model folders' saved configs). */
int cs_config_load_string(cs_config *cfg, const char *json, const char *source_name);
/* Returns the resolved config as a malloc'd JSON string. */
char *cs_config_dump(const cs_config *cfg);
/* data.background as far as the settings decide it: 0 with RGB set ("" gives black, or white with
 * data.white_background; "black", "white", or three numbers in [0, 1] separated by spaces or
 * commas), 1 for "border" (RGB set as for "": the training photos decide, scene.h), -1 with a
 * message naming the key for anything else, or for data.background beside data.white_background. */
int cs_config_background(const cs_data_cfg *data, float rgb[3]);
/* True if ITER is in the list. */
bool cs_config_has_mark(const int *marks, int n, int iter);

#endif
