/* config: table-driven settings. Each key has one descriptor (name, type, field offset,
 * allowed range or names); parsing, validation, suggestions and the dump all walk it. */
#include "config.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "splats.h"
#include "util.h"

typedef enum { T_INT, T_FLOAT, T_BOOL, T_STRING, T_ENUM, T_INTLIST, T_FLUSH, T_FORMATS } key_type;

typedef struct {
    const char *name;
    key_type type;
    size_t off;
    size_t size;        /* strings: buffer size */
    double min, max;
    const char *names;  /* enums: "a|b|c" (index = value) */
    size_t count_off;   /* int lists: offset of the count */
    const char *help;
} key_desc;

#define F(field) offsetof(cs_config, field), sizeof(((cs_config *)0)->field)
#define L(field, n) offsetof(cs_config, field), sizeof(((cs_config *)0)->field), 0, 1e9, NULL, offsetof(cs_config, n)
static const key_desc KEYS[] = {
    {"data.path", T_STRING, F(data.path), 0, 0, NULL, 0, "dataset folder (-s sets it)"},
    {"data.images", T_STRING, F(data.images), 0, 0, NULL, 0, "COLMAP image folder"},
    {"data.resolution", T_INT, F(data.resolution), -1, 100000, NULL, 0, "1, 2, 4, 8 (divide), a target width >= 16, or -1 (width capped at 1600)"},
    {"data.eval", T_BOOL, F(data.eval), 0, 0, NULL, 0, "hold out test views (COLMAP: every 8th by name; Blender: its test split)"},
    {"data.white_background", T_BOOL, F(data.white_background), 0, 0, NULL, 0, "background colour 1 instead of 0"},
    {"data.background", T_STRING, F(data.background), 0, 0, NULL, 0, "background colour: \"\" (data.white_background decides), black, white, \"R G B\" (0-1), or border (the mean colour of the training photos' outer 5%, stored as numbers in the run's config.json)"},
    {"data.image_residency", T_ENUM, F(data.image_residency), 0, 0, "auto|device|host|lazy", 0, "device: all training images on the device; host: decoded in RAM, uploaded a view ahead; lazy: decoded from disk through a host cache; auto: device when they take at most a third of the budget"},
    {"data.host_cache_mb", T_INT, F(data.host_cache_mb), 0, 1e7, NULL, 0, "lazy residency: host cache of decoded images (0: none)"},
    {"data.decode_threads", T_INT, F(data.decode_threads), 0, 64, NULL, 0, "threads decoding the images: all of them at start (device, host) or the coming views ahead of training (lazy); 0: the online cores but one, at most 8"},
    {"data.undistort_crop", T_ENUM, F(data.undistort_crop), 0, 0, "valid|full", 0, "distorted photos (COLMAP SIMPLE_RADIAL, OPENCV, fisheye...) are undistorted once when loaded to an ideal pinhole with the same focal lengths and a centred principal point: valid keeps the largest rectangle every pixel of which the photo covers (colmap image_undistorter), full keeps the whole field of view and leaves the uncovered border out of the loss"},
    {"data.masks", T_STRING, F(data.masks), 0, 0, NULL, 0, "mask folder inside data.path: <image name>.png or <stem>.png, black = left out of the loss and the metrics (\"\": none)"},
    {"data.alpha_as_mask", T_BOOL, F(data.alpha_as_mask), 0, 0, NULL, 0, "transparent pixels of the photos are left out of the loss and the metrics"},
    {"data.invert_masks", T_BOOL, F(data.invert_masks), 0, 0, NULL, 0, "mask files are drawn the other way: white = left out"},
    {"data.block_plan", T_STRING, F(data.block_plan), 0, 0, NULL, 0, "a block plan (clsplat partition's PLAN/plan.json): train only block data.block of the scene, its cameras and the points of its expanded region (\"\": the whole scene)"},
    {"data.block", T_INT, F(data.block), -1, 63, NULL, 0, "the block of data.block_plan to train (-1: none)"},
    {"data.block_mask", T_BOOL, F(data.block_mask), 0, 0, NULL, 0, "block training: pixels whose ray does not pass through the block's expanded region are left out of the loss and the block's metrics, so a block does not paint its neighbours' content"},
    {"data.skip_missing_images", T_BOOL, F(data.skip_missing_images), 0, 0, NULL, 0, "frames or images the dataset lists whose photo is missing are left out, with a note naming the first, instead of refusing the dataset (instant-ngp drops them too: its fox sample lists 67 frames and ships 50 photos); at least one must remain"},
    {"model.sh_degree", T_INT, F(model.sh_degree), 0, 3, NULL, 0, "allocated SH degree (parameters, gradients and Adam state)"},
    {"model.antialias", T_ENUM, F(model.antialias), 0, 0, "classic|mip", 0, "classic (+0.3 on the 2D covariance) or mip (mip-splatting 2D Mip filter)"},
    {"model.kernel_size", T_FLOAT, F(model.kernel_size), 0, 10, NULL, 0, "mip 2D filter variance"},
    {"model.filter_3d", T_BOOL, F(model.filter_3d), 0, 0, NULL, 0, "mip-splatting 3D smoothing filter"},
    {"optim.iterations", T_INT, F(optim.iterations), 0, 1e8, NULL, 0, "training iterations"},
    {"optim.iterations_on_cpu", T_INT, F(optim.iterations_on_cpu), 0, 1e8, NULL, 0, "if > 0, used instead of optim.iterations on a CPU, unless the command line sets optim.iterations"},
    {"optim.steps_scale", T_FLOAT, F(optim.steps_scale), 0.0001, 100, NULL, 0, "multiplies every iteration-valued setting (iterations, lr decay, SH interval, densification window, interval and resets, evaluation, save and checkpoint points), as gsplat's steps_scaler: 0.25 is a quarter-length run with the same shape"},
    {"optim.position_lr_init", T_FLOAT, F(optim.position_lr_init), 0, 1, NULL, 0, "position lr at the start, times the scene extent"},
    {"optim.position_lr_final", T_FLOAT, F(optim.position_lr_final), 0, 1, NULL, 0, "position lr at position_lr_max_steps, times the scene extent"},
    {"optim.position_lr_delay_mult", T_FLOAT, F(optim.position_lr_delay_mult), 0, 1, NULL, 0, "graphdeco's lr delay multiplier"},
    {"optim.position_lr_max_steps", T_INT, F(optim.position_lr_max_steps), 1, 1e8, NULL, 0, "iterations of the log-linear position lr decay"},
    {"optim.feature_lr", T_FLOAT, F(optim.feature_lr), 0, 10, NULL, 0, "Adam lr of the SH DC coefficients"},
    {"optim.feature_rest_lr", T_FLOAT, F(optim.feature_rest_lr), 0, 10, NULL, 0, "Adam lr of the higher SH coefficients"},
    {"optim.opacity_lr", T_FLOAT, F(optim.opacity_lr), 0, 10, NULL, 0, "Adam lr of the opacity logits"},
    {"optim.scaling_lr", T_FLOAT, F(optim.scaling_lr), 0, 10, NULL, 0, "Adam lr of the log scales"},
    {"optim.rotation_lr", T_FLOAT, F(optim.rotation_lr), 0, 10, NULL, 0, "Adam lr of the quaternions"},
    {"optim.lambda_dssim", T_FLOAT, F(optim.lambda_dssim), 0, 1, NULL, 0, "loss = (1 - l) L1 + l (1 - SSIM)"},
    {"optim.sh_increase_interval", T_INT, F(optim.sh_increase_interval), 1, 1e8, NULL, 0, "active SH degree +1 every N iterations"},
    {"optim.seed", T_INT, F(optim.seed), 0, 2147483647, NULL, 0, "view order, initialisation and split sampling"},
    {"optim.random_init_points", T_INT, F(optim.random_init_points), 1, 1e8, NULL, 0, "random initial points for scenes without a point cloud"},
    {"optim.deterministic", T_BOOL, F(optim.deterministic), 0, 0, NULL, 0, "no float atomics in the backward: the same seed on the same device gives the same bits (slower backward)"},
    {"optim.init_ply", T_STRING, F(optim.init_ply), 0, 0, NULL, 0, "start from this PLY's Gaussians (a trained or merged model, SH degree model.sh_degree) instead of the dataset's points; Adam's moments start at zero (\"\": from the points)"},
    {"optim.init_random", T_BOOL, F(optim.init_random), 0, 0, NULL, 0, "start from optim.random_init_points random points even when the dataset has a point cloud (in a cube of 3x the camera extent around the cameras' centre; the MCMC paper trains real scenes from random points too)"},
    {"optim.init_opacity", T_FLOAT, F(optim.init_opacity), -1, 0.99, NULL, 0, "initial opacity (-1: the strategy's: 0.1 default as graphdeco, 0.5 mcmc as gsplat)"},
    {"optim.init_scale", T_FLOAT, F(optim.init_scale), -1, 100, NULL, 0, "multiplies the initial scale (the mean distance to 3 nearest neighbours; -1: 1 default, 0.1 mcmc as gsplat)"},
    {"optim.opacity_reg", T_FLOAT, F(optim.opacity_reg), -1, 10, NULL, 0, "L1 regulariser: loss + this x the mean opacity (-1: 0 default, 0.01 mcmc as the paper)"},
    {"optim.scale_reg", T_FLOAT, F(optim.scale_reg), -1, 10, NULL, 0, "L1 regulariser: loss + this x the mean scale (-1: 0 default, 0.01 mcmc as the paper)"},
    {"optim.sparse_adam", T_BOOL, F(optim.sparse_adam), 0, 0, NULL, 0, "Adam steps only the Gaussians the iteration's view sees: the others keep their parameters and moments (graphdeco's --optimizer_type sparse_adam)"},
    {"optim.exposure", T_BOOL, F(optim.exposure), 0, 0, NULL, 0, "each training view learns an affine colour transform (a 3x3 matrix and an offset) that the loss applies to the render before comparing it with the view's photo, so photos taken at different exposures or white balances do not pull the model apart (graphdeco's per-image exposure); evaluations draw a training view under its transform and a held-out view under the blend of its 5 nearest training views'; the model and its exports stay at the identity; the transforms are written to exposure.json"},
    {"optim.exposure_lr", T_FLOAT, F(optim.exposure_lr), 0, 1, NULL, 0, "optim.exposure: the transforms' Adam learning rate at the start, falling log-linearly to a tenth of it at the last iteration (graphdeco's 0.01 to 0.001)"},
    {"optim.res_schedule_start", T_INT, F(optim.res_schedule_start), 1, 8, NULL, 0, "resolution schedule (DashGaussian's idea): the first views are trained at 1/N of their width and height (box-averaged ground truth), the factor falling geometrically to 1 by optim.res_schedule_until (1: off)"},
    {"optim.res_schedule_until", T_FLOAT, F(optim.res_schedule_until), 0, 1, NULL, 0, "the fraction of the iterations after which every view is trained at full size"},
    {"optim.step_on_densify", T_BOOL, F(optim.step_on_densify), 0, 0, NULL, 0, "Adam steps on densification iterations too, before densifying (gsplat); false skips it (graphdeco)"},
    {"densify.strategy", T_ENUM, F(densify.strategy), 0, 0, "default|mcmc", 0, "default: graphdeco's adaptive density control (clone, split, prune, opacity resets); mcmc: 3DGS as Markov Chain Monte Carlo, a fixed budget (densify.cap_max) from the first iteration: dead Gaussians relocated onto live ones, 5% more each refinement until the cap, position noise, opacity and scale regularisers"},
    {"densify.cap_max", T_INT, F(densify.cap_max), 0, CS_MCMC_MAX_ROWS, NULL, 0, "mcmc: the Gaussian budget, allocated once at the start (0: as many as memory.vram_budget_mb allows)"},
    {"densify.noise_lr", T_FLOAT, F(densify.noise_lr), 0, 1e9, NULL, 0, "mcmc: position noise scale, times the position learning rate (the paper's and gsplat's 5e5)"},
    {"densify.from", T_INT, F(densify.from), 0, 1e8, NULL, 0, "densification starts after this iteration"},
    {"densify.budget", T_INT, F(densify.budget), 0, CS_MCMC_MAX_ROWS, NULL, 0, "a Gaussian budget reached in small steps: the Gaussians a refinement may leave grow linearly from 0 at densify.from to this at densify.until (growth starts once the line passes the initial count; nothing is pruned for it); a refinement over it keeps its highest-gradient candidates (0: no curve, only memory limits)"},
    {"densify.budget_momentum", T_FLOAT, F(densify.budget_momentum), 0, 1000, NULL, 0, "graphdeco strategy: a Gaussian budget derived from the scene (DashGaussian's momentum rule): the target starts at the initial count times (1 + this) and after each refinement becomes the larger of itself and 0.98 x itself + the Gaussians the refinement's candidates asked for (at most doubling it); the refinements' line (as densify.budget's) leads to this target; densify.budget, when set, caps it (0: off)"},
    {"densify.until", T_INT, F(densify.until), 0, 1e8, NULL, 0, "densification stops at this iteration"},
    {"densify.interval", T_INT, F(densify.interval), 1, 1e8, NULL, 0, "densify every N iterations"},
    {"densify.grad_threshold", T_FLOAT, F(densify.grad_threshold), 0, 1e3, NULL, 0, "clone / split when the mean view-space gradient exceeds this"},
    {"densify.percent_dense", T_FLOAT, F(densify.percent_dense), 0, 1, NULL, 0, "clone / split boundary, times the scene extent"},
    {"densify.error_views", T_INT, F(densify.error_views), 0, 64, NULL, 0, "graphdeco strategy: at each refinement, render this many training views and score each Gaussian by its blend weight over the pixels whose error is above densify.error_threshold; one whose score, averaged over the views, reaches densify.error_score is cloned or split as if its gradient had (FastGS's idea of densifying by multi-view error; 0: off)"},
    {"densify.error_threshold", T_FLOAT, F(densify.error_threshold), 0, 1, NULL, 0, "densify.error_views: a pixel is high-error when its mean absolute colour error (0-1) is above this"},
    {"densify.error_score", T_FLOAT, F(densify.error_score), 0, 1e9, NULL, 0, "densify.error_views: the mean score (blend weight summed over a view's high-error pixels) that densifies a Gaussian"},
    {"densify.error_train_size", T_BOOL, F(densify.error_train_size), 0, 0, NULL, 0, "densify.error_views: while the resolution schedule (optim.res_schedule_start) trains smaller views, score the views at the iteration's size against the box-averaged photo instead of at full size; a pixel's blend weight counts for the full-size pixels it stands for"},
    {"densify.prune_fraction", T_FLOAT, F(densify.prune_fraction), 0, 0.95, NULL, 0, "graphdeco strategy: at densify.prune_at, drop this share of the Gaussians, those with the least blend weight summed over densify.prune_views training views (the importance Taming 3DGS and Speedy-Splat rank Gaussians by; the iterations after it run on fewer Gaussians; 0: off)"},
    {"densify.prune_at", T_INT, F(densify.prune_at), 0, 1e8, NULL, 0, "densify.prune_fraction: the iteration of the prune, after that iteration's refinement (0: densify.until, once densification has stopped)"},
    {"densify.prune_views", T_INT, F(densify.prune_views), 0, 1e6, NULL, 0, "densify.prune_fraction: the training views, spread over the split, whose blend weights are summed, drawn at full size (0: every training view)"},
    {"densify.opacity_reset_interval", T_INT, F(densify.opacity_reset_interval), 1, 1e8, NULL, 0, "opacity reset to min(o, 0.01) every N iterations (or decayed: densify.opacity_decay)"},
    {"densify.opacity_decay", T_FLOAT, F(densify.opacity_decay), 0, 0.99, NULL, 0, "0: the opacity reset is graphdeco's min(o, 0.01); in (0, 1): it multiplies each opacity by this instead, leaving those it would take under 1/255 as they are (LiteGS's decay: the model keeps its picture through the reset)"},
    {"densify.min_opacity", T_FLOAT, F(densify.min_opacity), 0, 1, NULL, 0, "prune below this opacity"},
    {"densify.max_screen_size", T_FLOAT, F(densify.max_screen_size), 0, 1e6, NULL, 0, "prune above this many pixels on screen after the first reset (0: off, as graphdeco and gsplat in effect)"},
    {"memory.sh_dtype", T_ENUM, F(memory.sh_dtype), 0, 0, "fp32|fp16", 0, "fp16 stores SH coefficients as half"},
    {"memory.optimizer_dtype", T_ENUM, F(memory.optimizer_dtype), 0, 0, "fp32|fp16", 0, "fp16 stores the Adam moments in 16 bits each"},
    {"memory.flush_interval", T_FLUSH, F(memory.flush_interval), 1, 1e8, "aggressive|normal|minimal", 0, "scratch pool trimmed every N iterations (aggressive 10, normal 50, minimal 100)"},
    {"memory.vram_budget_mb", T_FLOAT, F(memory.vram_budget_mb), 0, 1e9, NULL, 0, "device memory budget in MiB (0: 97% of the device)"},
    {"memory.max_gaussians", T_INT, F(memory.max_gaussians), 0, 2147483647, NULL, 0, "cap on the Gaussian count (0: what the budget allows)"},
    {"eval.test_iterations", T_INTLIST, L(eval.test_iterations, eval.n_test_iterations), "evaluation points (and always the last iteration)"},
    {"eval.save_renders", T_BOOL, F(eval.save_renders), 0, 0, NULL, 0, "write renders and ground truth as PNG (OUT/<split>/ours_N/renders, gt)"},
    {"eval.train_views", T_INT, F(eval.train_views), 0, 1e6, NULL, 0, "also evaluate this many training views"},
    {"eval.lpips_weights", T_STRING, F(eval.lpips_weights), 0, 0, NULL, 0, "LPIPS-alex v0.1 weights file (tools/get-lpips-weights.sh); empty: $XDG_DATA_HOME/clsplat/lpips/alex_v0.1.f32.bin, LPIPS off when missing"},
    {"eval.tensorboard_views", T_INT, F(eval.tensorboard_views), 0, 100, NULL, 0, "test views logged to TensorBoard at each evaluation (render | ground truth | error)"},
    {"eval.preview_views", T_INT, F(eval.preview_views), 0, 100, NULL, 0, "test views saved at each evaluation as OUT/previews/ours_N/<view>.png (render | ground truth | error, at most 800 pixels a side), shown by report.html"},
    {"output.dir", T_STRING, F(output.dir), 0, 0, NULL, 0, "output folder (-o / -m set it; default output/<date-time>)"},
    {"output.save_iterations", T_INTLIST, L(output.save_iterations, output.n_save_iterations), "PLY save points (and the last iteration)"},
    {"output.export_formats", T_FORMATS, F(output.export_formats), 0, 0, NULL, 0, "also write these beside each saved PLY: spz, splat, compressed-ply (3D filter folded in)"},
    {"output.spz_sh_bits", T_INT, F(output.spz_sh_bits), 0, 8, NULL, 0, "SPZ exports: SH coefficients kept to this many of their 8 bits (0: the reference packer's 5 for degree 1, 4 above); measured on lego / south_building 7k: 6 bits 50.0 / 46.5 dB against the PLY's renders at 28 / 27 B a Gaussian, 5 and 4 bits 43.5 / 35.6 dB at 20 / 19"},
    {"output.report", T_BOOL, F(output.report), 0, 0, NULL, 0, "write OUT/report.html at the end of the run: one self-contained page with the charts, evaluations, previews and config (clsplat report -m OUT writes it any time)"},
    {"output.checkpoint_iterations", T_INTLIST, L(output.checkpoint_iterations, output.n_checkpoint_iterations), "checkpoint points"},
    {"output.checkpoint_interval", T_INT, F(output.checkpoint_interval), 0, 1e8, NULL, 0, "also a checkpoint every N iterations, each replacing the previous one of these (0: off; clsplat batch jobs default to 2000)"},
    {"device.id", T_STRING, F(device.id), 0, 0, NULL, 0, "P:D, a name substring, or empty for the best device"},
    {"device.float_atomics", T_ENUM, F(device.float_atomics), 0, 0, "auto|cas|ext|ptx", 0, "float atomic adds of the backward: auto (NVIDIA: ptx red.global.add.f32; a device with cl_ext_float_atomics global fp32 add: ext; else cas, a compare-and-swap loop; a path whose self-test fails falls back to cas); cas, ext or ptx force that path, and a device without it is refused"},
    {"device.fast_math", T_ENUM, F(device.fast_math), 0, 0, "auto|off|on", 0, "fma contraction and native_exp in the per-pixel kernels: auto (on for NVIDIA), off, on"},
    {"device.pixels_per_item", T_INT, F(device.pixels_per_item), 0, 16, NULL, 0, "pixels of its tile each rasterizer work-item blends: 0 auto (1, or as many as a device whose work-groups are smaller than a tile needs: llvmpipe's 32 items take 8 of a 16x16 tile), or 1, 2, 4, 8, 16 (at most the tile side) to force one"},
    {"device.tune", T_ENUM, F(device.tune), 0, 0, "auto|off|force", 0, "tile and work-group sizes: auto (measured once per device and stored), off (16x16, 256), force (measure again)"},
    {"device.tile_choice", T_ENUM, F(device.tile_choice), 0, 0, "tuned|auto|measure", 0, "training's rasterizer tiles: tuned (device.tune's tile throughout), measure (both 16x16 and 8x8 kernels built; at the first iteration, at each step of the resolution schedule and every 1000 iterations a pass of the iteration's view is timed with each and the faster kept, while the run holds at most half its memory budget), auto (the default: measure on GPUs, tuned on CPUs); never with optim.deterministic"},
    {"log.interval", T_INT, F(log.interval), 1, 1e8, NULL, 0, "progress, train_log.jsonl and TensorBoard scalar interval"},
    {"log.tensorboard", T_BOOL, F(log.tensorboard), 0, 0, NULL, 0, "write TensorBoard event files (OUT/events.out.tfevents.*): scalars, evaluation images, histograms"},
    {"log.histogram_interval", T_INT, F(log.histogram_interval), 0, 1e8, NULL, 0, "TensorBoard histograms of opacity, largest scale, SH-rest norm and the densification gradient every N iterations (0: off)"},
};
#undef F
#undef L
#define NKEYS (sizeof KEYS / sizeof KEYS[0])
static const int FLUSH_VALUES[] = {10, 50, 100};

void cs_config_defaults(cs_config *c)
{
    memset(c, 0, sizeof *c);
    strcpy(c->data.images, "images");
    c->data.resolution = -1;
    c->data.image_residency = CS_RES_AUTO;
    c->data.host_cache_mb = 2048;
    snprintf(c->data.masks, sizeof c->data.masks, "masks");
    c->data.block = -1;
    c->model.sh_degree = 3;
    c->model.antialias = CS_AA_CLASSIC;
    c->model.kernel_size = 0.1;
    c->optim.iterations = 30000;
    c->optim.steps_scale = 1.0;
    c->optim.position_lr_init = 0.00016;
    c->optim.position_lr_final = 0.0000016;
    c->optim.position_lr_delay_mult = 0.01;
    c->optim.position_lr_max_steps = 30000;
    c->optim.feature_lr = 0.0025;
    c->optim.feature_rest_lr = 0.0025 / 20.0;
    c->optim.opacity_lr = 0.025;
    c->optim.scaling_lr = 0.005;
    c->optim.rotation_lr = 0.001;
    c->optim.lambda_dssim = 0.2;
    c->optim.exposure_lr = 0.01;
    c->optim.res_schedule_start = 1;
    c->device.tile_choice = CS_TILES_AUTO;
    c->densify.error_threshold = 0.1, c->densify.error_score = 2.0;
    c->optim.res_schedule_until = 0.5;
    c->optim.sh_increase_interval = 1000;
    c->optim.random_init_points = 100000;
    c->optim.step_on_densify = true;
    c->densify.from = 500;
    c->densify.until = 15000;
    c->densify.interval = 100;
    c->densify.grad_threshold = 0.0002;
    c->densify.percent_dense = 0.01;
    c->densify.opacity_reset_interval = 3000;
    c->densify.min_opacity = 0.005;
    /* graphdeco passes 20, but densification_postfix zeroes max_radii2D before prune_points reads
       it, so its screen-size prune never fires (gsplat disables it by default too): 0 = off */
    c->densify.max_screen_size = 0;
    c->densify.cap_max = 1000000;
    c->densify.noise_lr = 5e5;
    c->optim.init_opacity = c->optim.init_scale = c->optim.opacity_reg = c->optim.scale_reg = -1;
    c->memory.flush_interval = 50;
    c->eval.test_iterations[0] = 7000;
    c->eval.test_iterations[1] = 30000;
    c->eval.n_test_iterations = 2;
    strcpy(c->output.dir, "output");
    c->output.save_iterations[0] = 7000;
    c->output.save_iterations[1] = 30000;
    c->output.n_save_iterations = 2;
    c->output.spz_sh_bits = 6;
    c->output.report = true;
    c->log.interval = 100;
    c->log.tensorboard = true;
    c->log.histogram_interval = 1000;
    c->eval.tensorboard_views = 3;
    c->eval.preview_views = 3;
}

bool cs_config_has_mark(const int *marks, int n, int iter)
{
    for (int i = 0; i < n; i++)
        if (marks[i] == iter) return true;
    return false;
}

/* ---- key lookup and suggestions ------------------------------------------------------ */


static const key_desc *find_key(const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(KEYS[i].name, name) == 0) return &KEYS[i];
    return NULL;
}

static int unknown_key(const char *src, const char *name)
{
    const char *best = NULL;
    size_t bd = (size_t)-1;
    for (size_t i = 0; i < NKEYS; i++) {
        size_t d = cs_edit_distance(name, KEYS[i].name);
        /* a bare leaf name ("iterations") should still find its group */
        const char *dot = strchr(KEYS[i].name, '.');
        if (dot) {
            size_t d2 = cs_edit_distance(name, dot + 1) + 1;
            if (d2 < d) d = d2;
        }
        if (d < bd) bd = d, best = KEYS[i].name;
    }
    if (best && bd <= 4)
        return cs_fail("%s: unknown key '%s' (did you mean '%s'?)", src, name, best);
    return cs_fail("%s: unknown key '%s'", src, name);
}

static int enum_index(const char *names, const char *s)
{
    int idx = 0;
    const char *p = names;
    size_t n = strlen(s);
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0) return idx;
        idx++;
        if (!bar) break;
        p = bar + 1;
    }
    return -1;
}

static void enum_name(const char *names, int idx, char *out, size_t n)
{
    const char *p = names;
    for (int i = 0; i < idx && p; i++) {
        p = strchr(p, '|');
        if (p) p++;
    }
    if (!p) {
        snprintf(out, n, "?");
        return;
    }
    const char *bar = strchr(p, '|');
    size_t len = bar ? (size_t)(bar - p) : strlen(p);
    if (len >= n) len = n - 1;
    memcpy(out, p, len);
    out[len] = '\0';
}

/* ---- setting one key ----------------------------------------------------------------- */

static int get_int(const key_desc *k, const char *src, json_t *v, int *out)
{
    double d;
    if (json_is_integer(v))
        d = (double)json_integer_value(v);
    else if (json_is_real(v) && json_real_value(v) == floor(json_real_value(v)))
        d = json_real_value(v);
    else
        return cs_fail("%s: key '%s' must be an integer in [%g, %g]", src, k->name, k->min, k->max);
    if (d < k->min || d > k->max)
        return cs_fail("%s: key '%s' = %g is out of range [%g, %g]", src, k->name, d, k->min, k->max);
    *out = (int)d;
    return 0;
}

#define BACKGROUND_FORMS "allowed are \"\", black, white, border, or three numbers in [0, 1] (\"0.6 0.6 0.6\")"

/* data.background's text: 0 with RGB for "", black, white and numbers ("" black), 1 for
   border (RGB black), -1 for anything else */
static int parse_background(const char *s, float rgb[3])
{
    rgb[0] = rgb[1] = rgb[2] = 0.f;
    if (!s[0] || !strcmp(s, "black")) return 0;
    if (!strcmp(s, "border")) return 1;
    if (!strcmp(s, "white")) {
        rgb[0] = rgb[1] = rgb[2] = 1.f;
        return 0;
    }
    const char *p = s;
    for (int i = 0; i < 3; i++) {
        while (*p == ' ') p++;
        if (i > 0 && *p == ',') p++;
        char *end;
        double x = strtod(p, &end);
        if (end == p || !(x >= 0.0 && x <= 1.0)) return -1;
        rgb[i] = (float)x;
        p = end;
    }
    while (*p == ' ') p++;
    return *p ? -1 : 0;
}

/* the message for data.background's text S, from SRC ("" none) */
static int bad_background(const char *src, const char *s)
{
    return cs_fail("%s%skey 'data.background' = \"%s\": %s", src, src[0] ? ": " : "", s, BACKGROUND_FORMS);
}

int cs_config_background(const cs_data_cfg *d, float rgb[3])
{
    int r = parse_background(d->background, rgb);
    if (r < 0) return bad_background("", d->background);
    if (d->background[0] && d->white_background)
        return cs_fail("data.background (\"%s\") and data.white_background (-w) are both set: keep one", d->background);
    if (!d->background[0] && d->white_background) rgb[0] = rgb[1] = rgb[2] = 1.f;
    return r;
}

static int set_key(cs_config *cfg, const key_desc *k, const char *src, json_t *v)
{
    char *base = (char *)cfg + k->off;
    switch (k->type) {
    case T_INT: {
        int x;
        if (get_int(k, src, v, &x)) return -1;
        if (strcmp(k->name, "data.resolution") == 0 && !(x == -1 || x == 1 || x == 2 || x == 4 || x == 8 || x >= 16))
            return cs_fail("%s: key 'data.resolution' = %d: allowed are 1, 2, 4, 8, a target width >= 16, or -1", src, x);
        *(int *)base = x;
        return 0;
    }
    case T_FLOAT: {
        if (!json_is_number(v))
            return cs_fail("%s: key '%s' must be a number in [%g, %g]", src, k->name, k->min, k->max);
        double d = json_number_value(v);
        if (!(d >= k->min && d <= k->max))
            return cs_fail("%s: key '%s' = %g is out of range [%g, %g]", src, k->name, d, k->min, k->max);
        *(double *)base = d;
        return 0;
    }
    case T_BOOL:
        if (!json_is_boolean(v)) return cs_fail("%s: key '%s' must be true or false", src, k->name);
        *(bool *)base = json_is_true(v);
        return 0;
    case T_STRING: {
        if (!json_is_string(v)) return cs_fail("%s: key '%s' must be a string", src, k->name);
        const char *s = json_string_value(v);
        if (strlen(s) >= k->size) return cs_fail("%s: key '%s' is too long (max %zu)", src, k->name, k->size - 1);
        float rgb[3];
        if (strcmp(k->name, "data.background") == 0 && parse_background(s, rgb) < 0) return bad_background(src, s);
        strcpy(base, s);
        return 0;
    }
    case T_ENUM: {
        int idx = json_is_string(v) ? enum_index(k->names, json_string_value(v)) : -1;
        if (idx < 0) return cs_fail("%s: key '%s' must be one of %s", src, k->name, k->names);
        *(int *)base = idx;
        return 0;
    }
    case T_FLUSH: {
        if (json_is_string(v)) {
            int idx = enum_index(k->names, json_string_value(v));
            if (idx < 0)
                return cs_fail("%s: key '%s' must be a number of iterations or one of %s", src, k->name, k->names);
            *(int *)base = FLUSH_VALUES[idx];
            return 0;
        }
        int x;
        if (get_int(k, src, v, &x))
            return cs_fail("%s: key '%s' must be a number of iterations >= 1 or one of %s", src, k->name, k->names);
        *(int *)base = x;
        return 0;
    }
    case T_FORMATS: {
        size_t n = json_is_array(v) ? json_array_size(v) : 1;
        int mask = 0;
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_is_array(v) ? json_array_get(v, i) : v;
            cs_splat_format f;
            if (!json_is_string(e) || cs_splat_format_parse(json_string_value(e), &f) || f == CS_FMT_PLY)
                return cs_fail("%s: key '%s' must be a list of spz, splat, compressed-ply", src, k->name);
            mask |= 1 << f;
        }
        *(int *)base = mask;
        return 0;
    }
    case T_INTLIST: {
        if (json_is_integer(v)) {
            json_t *arr = json_array();
            json_array_append(arr, v);
            int r = set_key(cfg, k, src, arr);
            json_decref(arr);
            return r;
        }
        if (!json_is_array(v)) return cs_fail("%s: key '%s' must be an array of iterations", src, k->name);
        size_t n = json_array_size(v);
        if (n > CS_MAX_MARKS) return cs_fail("%s: key '%s' has more than %d entries", src, k->name, CS_MAX_MARKS);
        int *arr = (int *)base;
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(v, i);
            if (!json_is_integer(e) || json_integer_value(e) < 0 || json_integer_value(e) > 100000000)
                return cs_fail("%s: key '%s' entry %zu must be a non-negative iteration number", src, k->name, i);
            arr[i] = (int)json_integer_value(e);
        }
        *(int *)((char *)cfg + k->count_off) = (int)n;
        return 0;
    }
    }
    return cs_fail("internal: bad key type");
}

static int apply_object(cs_config *cfg, json_t *obj, const char *prefix, const char *src)
{
    const char *key;
    json_t *val;
    json_object_foreach(obj, key, val)
    {
        char full[256];
        snprintf(full, sizeof full, "%s%s%s", prefix, prefix[0] ? "." : "", key);
        const key_desc *k = find_key(full); /* flat dotted keys work too */
        size_t n = strlen(full);
        int group = 0;
        for (size_t i = 0; i < NKEYS && !k; i++)
            if (strncmp(KEYS[i].name, full, n) == 0 && KEYS[i].name[n] == '.') group = 1;
        if (k) {
            if (set_key(cfg, k, src, val)) return -1;
        } else if (group && json_is_object(val)) {
            if (apply_object(cfg, val, full, src)) return -1;
        } else if (group) {
            return cs_fail("%s: '%s' is a group of keys: its value must be an object, e.g. {\"%s\": {...}}", src, full,
                           full);
        } else {
            return unknown_key(src, full);
        }
    }
    return 0;
}

int cs_config_load_string(cs_config *cfg, const char *text, const char *src)
{
    json_error_t err;
    json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &err); /* a key given twice is a mistake */
    if (!root) return cs_fail("%s: line %d column %d: %s", src, err.line, err.column, err.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return cs_fail("%s: the top level must be a JSON object", src);
    }
    int r = apply_object(cfg, root, "", src);
    json_decref(root);
    return r;
}

int cs_config_load_file(cs_config *cfg, const char *path)
{
    char *text = cs_read_file(path, NULL);
    if (!text) return cs_fail_prefix("config");
    int r = cs_config_load_string(cfg, text, path);
    free(text);
    return r;
}

int cs_config_set_from(cs_config *cfg, const char *assignment, const char *source)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) return cs_fail("%s %s: expected key.sub=value", source, assignment);
    char name[256];
    size_t n = (size_t)(eq - assignment);
    if (n >= sizeof name) return cs_fail("%s: key too long", source);
    memcpy(name, assignment, n);
    name[n] = '\0';
    const key_desc *k = find_key(name);
    if (!k) return unknown_key(source, name);
    json_t *v = json_loads(eq + 1, JSON_DECODE_ANY, NULL);
    if (!v) v = json_string(eq + 1);
    int r = set_key(cfg, k, source, v);
    json_decref(v);
    return r;
}

int cs_config_set(cs_config *cfg, const char *assignment) { return cs_config_set_from(cfg, assignment, "--set"); }

bool cs_config_is_key(const char *name) { return find_key(name) != NULL; }

/* ---- steps_scale ----------------------------------------------------------------------- */

static int scaled(int v, double s, int at_least)
{
    double x = floor(v * s);
    return x < at_least ? at_least : x > 1e8 ? 100000000 : (int)x;
}

/* the smallest stored value that S scales to V (V itself when none does: a scale above 1
   reaches only some values) */
static int unscaled(int v, double s, bool *exact)
{
    int m = (int)fmax(1, fmin(1e8, ceil(v / s - 1e-9)));
    while (m > 1 && scaled(m - 1, s, 1) >= v) m--;
    while (m < 100000000 && scaled(m, s, 1) < v) m++;
    *exact = scaled(m, s, 1) == v;
    return *exact ? m : v;
}

void cs_config_explicit_iterations(cs_config *cfg, bool sets_cpu_count)
{
    if (!sets_cpu_count) cfg->optim.iterations_on_cpu = 0;
    bool exact;
    if (cfg->optim.steps_scale != 1.0) cfg->optim.iterations = unscaled(cfg->optim.iterations, cfg->optim.steps_scale, &exact);
}

int cs_config_explicit_marks(cs_config *cfg, const char *key)
{
    double s = cfg->optim.steps_scale;
    int *marks = NULL, n = 0;
    if (!strcmp(key, "eval.test_iterations")) marks = cfg->eval.test_iterations, n = cfg->eval.n_test_iterations;
    else if (!strcmp(key, "output.save_iterations")) marks = cfg->output.save_iterations, n = cfg->output.n_save_iterations;
    else if (!strcmp(key, "output.checkpoint_iterations"))
        marks = cfg->output.checkpoint_iterations, n = cfg->output.n_checkpoint_iterations;
    for (int i = 0; i < n && s != 1.0; i++) {
        bool exact;
        int v = marks[i];
        marks[i] = unscaled(v, s, &exact);
        if (!exact)
            return cs_fail("%s: optim.steps_scale %g reaches no stored mark that gives iteration %d exactly; give "
                           "marks it reaches, or set them in a config file (they are scaled there)", key, s, v);
    }
    return 0;
}

static void scale_marks(int *marks, int n, double s)
{
    for (int i = 0; i < n; i++) marks[i] = scaled(marks[i], s, 1);
}

void cs_config_scale_steps(cs_config *c)
{
    double s = c->optim.steps_scale;
    if (s == 1.0) return;
    c->optim.iterations = scaled(c->optim.iterations, s, 1);
    c->optim.position_lr_max_steps = scaled(c->optim.position_lr_max_steps, s, 1);
    c->optim.sh_increase_interval = scaled(c->optim.sh_increase_interval, s, 1);
    c->densify.from = scaled(c->densify.from, s, 0);
    c->densify.until = scaled(c->densify.until, s, 0);
    c->densify.prune_at = scaled(c->densify.prune_at, s, 0);
    c->densify.interval = scaled(c->densify.interval, s, 1);
    c->densify.opacity_reset_interval = scaled(c->densify.opacity_reset_interval, s, 1);
    scale_marks(c->eval.test_iterations, c->eval.n_test_iterations, s);
    scale_marks(c->output.save_iterations, c->output.n_save_iterations, s);
    scale_marks(c->output.checkpoint_iterations, c->output.n_checkpoint_iterations, s);
    if (c->output.checkpoint_interval > 0) c->output.checkpoint_interval = scaled(c->output.checkpoint_interval, s, 1);
    c->optim.steps_scale = 1.0;
}

void cs_config_strategy_defaults(cs_config *c)
{
    int mcmc = c->densify.strategy == CS_STRATEGY_MCMC;
    cs_optim_cfg *o = &c->optim;
    if (o->init_opacity < 0) o->init_opacity = mcmc ? 0.5 : 0.1;
    if (o->init_scale < 0) o->init_scale = mcmc ? 0.1 : 1.0;
    if (o->opacity_reg < 0) o->opacity_reg = mcmc ? 0.01 : 0.0;
    if (o->scale_reg < 0) o->scale_reg = mcmc ? 0.01 : 0.0;
}

/* ---- the key table, for people ---------------------------------------------------------- */

static void describe_value(const key_desc *k, const cs_config *cfg, char *out, size_t n)
{
    const char *base = (const char *)cfg + k->off;
    switch (k->type) {
    case T_INT: case T_FLUSH: snprintf(out, n, "%d", *(const int *)base); break;
    case T_FLOAT: snprintf(out, n, "%g", *(const double *)base); break;
    case T_BOOL: snprintf(out, n, "%s", *(const bool *)base ? "true" : "false"); break;
    case T_STRING: snprintf(out, n, "\"%s\"", base); break;
    case T_ENUM: enum_name(k->names, *(const int *)base, out, n); break;
    case T_FORMATS: {
        size_t used = (size_t)snprintf(out, n, "[");
        for (int f = 0, j = 0; f < CS_FMT_COUNT && used < n; f++)
            if (*(const int *)base & (1 << f))
                used += (size_t)snprintf(out + used, n - used, "%s\"%s\"", j++ ? ", " : "", cs_splat_format_name((cs_splat_format)f));
        if (used < n) snprintf(out + used, n - used, "]");
        break;
    }
    case T_INTLIST: {
        int cnt = *(const int *)((const char *)cfg + k->count_off);
        size_t used = (size_t)snprintf(out, n, "[");
        for (int j = 0; j < cnt && used < n; j++)
            used += (size_t)snprintf(out + used, n - used, "%s%d", j ? ", " : "", ((const int *)base)[j]);
        if (used < n) snprintf(out + used, n - used, "]");
        break;
    }
    }
}

static void describe_range(const key_desc *k, char *out, size_t n)
{
    switch (k->type) {
    case T_INT: snprintf(out, n, "integer %g..%g", k->min, k->max); break;
    case T_FLOAT: snprintf(out, n, "number %g..%g", k->min, k->max); break;
    case T_BOOL: snprintf(out, n, "true|false"); break;
    case T_STRING: snprintf(out, n, "text"); break;
    case T_ENUM: snprintf(out, n, "%s", k->names); break;
    case T_FLUSH: snprintf(out, n, "%s or iterations >= 1", k->names); break;
    case T_INTLIST: snprintf(out, n, "list of iterations"); break;
    case T_FORMATS: snprintf(out, n, "list of spz|splat|compressed-ply"); break;
    }
}

void cs_config_list(FILE *out)
{
    cs_config d;
    cs_config_defaults(&d);
    for (size_t i = 0; i < NKEYS; i++) {
        char def[256], range[128];
        describe_value(&KEYS[i], &d, def, sizeof def);
        describe_range(&KEYS[i], range, sizeof range);
        fprintf(out, "%-32s default %-14s (%s)\n    %s\n", KEYS[i].name, def, range, KEYS[i].help);
    }
}

/* ---- resolved dump ------------------------------------------------------------------- */

char *cs_config_dump(const cs_config *cfg)
{
    json_t *root = json_object();
    for (size_t i = 0; i < NKEYS; i++) {
        const key_desc *k = &KEYS[i];
        const char *base = (const char *)cfg + k->off;
        char group[64];
        const char *dot = strchr(k->name, '.');
        size_t gl = (size_t)(dot - k->name);
        memcpy(group, k->name, gl);
        group[gl] = '\0';
        json_t *g = json_object_get(root, group);
        if (!g) {
            g = json_object();
            json_object_set_new(root, group, g);
        }
        json_t *v = NULL;
        char buf[64];
        switch (k->type) {
        case T_INT: case T_FLUSH: v = json_integer(*(const int *)base); break;
        case T_FLOAT: v = json_real(*(const double *)base); break;
        case T_BOOL: v = json_boolean(*(const bool *)base); break;
        case T_STRING: v = json_string(base); break;
        case T_ENUM: enum_name(k->names, *(const int *)base, buf, sizeof buf); v = json_string(buf); break;
        case T_FORMATS:
            v = json_array();
            for (int f = 0; f < CS_FMT_COUNT; f++)
                if (*(const int *)base & (1 << f)) json_array_append_new(v, json_string(cs_splat_format_name((cs_splat_format)f)));
            break;
        case T_INTLIST: {
            v = json_array();
            int cnt = *(const int *)((const char *)cfg + k->count_off);
            for (int j = 0; j < cnt; j++) json_array_append_new(v, json_integer(((const int *)base)[j]));
            break;
        }
        }
        json_object_set_new(g, dot + 1, v);
    }
    char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(root);
    return s;
}
