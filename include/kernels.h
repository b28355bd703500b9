/* kernels: the one OpenCL program of a configuration (SH degree and storage, antialias
 * mode, 3D filter, deterministic backward, optimizer storage, rasterizer tile size) and its
 * kernel handles, with the work-group size each group of per-Gaussian kernels launches with.
 * The options (all but the tile size) double as the model's storage layout. Launchers live
 * in the modules that own each stage; tune.c chooses the tile and work-group sizes. */
#ifndef CS_KERNELS_H
#define CS_KERNELS_H

#include "cl_runtime.h"
#include "config.h"

typedef struct {
    int sh_degree;     /* allocated */
    int sh_half;
    int antialias;     /* CS_AA_* */
    int filter_3d;
    int deterministic;
    int opt_half;      /* Adam moments in 16 bits (memory.optimizer_dtype = fp16) */
    int tile;          /* rasterizer tile side in pixels (8 or 16; 0 = 16) */
} cs_kernel_opts;

/* Groups of 1D kernels that share a work-group size (tune.c measures each group). */
enum { CS_WG_PROJECT, CS_WG_PROJECT_BWD, CS_WG_BIN, CS_WG_ADAM, CS_WG_COUNT };
extern const char *const cs_wg_names[CS_WG_COUNT];
#define CS_WG_DEFAULT 256

typedef struct {
    cs_kernel_opts opts;    /* opts.tile resolved */
    size_t wg[CS_WG_COUNT];     /* work-group size of each group */
    size_t wg_max[CS_WG_COUNT]; /* the largest the device allows for every kernel of the group */
    cl_program prog;
    cl_kernel project_fwd, project_bwd;
    cl_kernel scan_block, scan_single, scan_add, radix_count, radix_scatter;
    cl_kernel bin_depth_keys, bin_gather_counts, bin_pair_total, bin_emit_pairs, bin_tile_ranges, bin_reduce_pairs;
    cl_kernel rasterize_fwd, rasterize_bwd;
    cl_kernel ssim_blur_h, ssim_fwd_v, ssim_bwd_h, ssim_bwd_v, reduce_partials;
    cl_kernel adam_step;
    cl_kernel densify_stats, densify_classify, densify_append, densify_prune_flags, gather_rows,
        densify_reset_opacity, filter3d_depth, filter3d_finish;
} cs_kernels;

/* The options (and model layout) a configuration asks for. */
void cs_kernel_opts_of(const cs_config *cfg, cs_kernel_opts *o);
/* Builds the program; work-group sizes start at CS_WG_DEFAULT (or the device's limit). -1
 * with a message, also when the device cannot run OPTS->tile squared work-items a group. */
int cs_kernels_build(cs_cl *cl, const cs_kernel_opts *opts, cs_kernels *k);
/* Sets the work-group size of every group: powers of two up to wg_max; -1 with a message. */
int cs_kernels_set_wg(cs_kernels *k, const size_t wg[CS_WG_COUNT]);
void cs_kernels_release(cs_kernels *k);

/* profiling stages (cs_cl_run's STAGE argument) */
enum {
    CS_STAGE_PROJECT, CS_STAGE_SORT, CS_STAGE_RASTER_FWD, CS_STAGE_LOSS, CS_STAGE_RASTER_BWD, CS_STAGE_PROJECT_BWD,
    CS_STAGE_ADAM, CS_STAGE_DENSIFY, CS_STAGE_COUNT
};
extern const char *const cs_stage_names[CS_STAGE_COUNT];

#endif
