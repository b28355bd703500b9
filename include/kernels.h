/* kernels: the one OpenCL program of a configuration (SH degree and storage, antialias
 * mode, 3D filter, deterministic backward, optimizer storage, rasterizer tile size) and its
 * kernel handles, with the work-group size each group of per-Gaussian kernels launches with.
 * The options hold the model's storage layout (model_layout.h). Launchers live
 * in the modules that own each stage; tune.c chooses the tile and work-group sizes. */
#ifndef CS_KERNELS_H
#define CS_KERNELS_H

#include "cl_runtime.h"
#include "config.h"
#include "model_layout.h"

typedef struct {
    cs_model_layout layout; /* the model's storage, which the kernels read and write */
    int antialias;          /* CS_AA_* */
    int deterministic;      /* fixed-order backward sums (optim.deterministic) */
    int tile;               /* rasterizer tile side in pixels (8 or 16; 0 = 16) */
    int pixels;             /* pixels of a tile column a rasterizer work-item covers: a power of two
                               <= tile; 0 = the fewest the device's group limits allow (1 mostly) */
} cs_kernel_opts;

/* Groups of 1D kernels that share a work-group size (tune.c measures each group).
 * CS_WG_TILE: tile * tile / pixels work-items a rasterizer group (checked against the device);
 * CS_WG_FIXED: a size set by the kernel's own algorithm (sort, SSIM, densification). */
enum { CS_WG_PROJECT, CS_WG_PROJECT_BWD, CS_WG_BIN, CS_WG_ADAM, CS_WG_COUNT, CS_WG_TILE = -1, CS_WG_FIXED = -2 };

/* Every kernel of the program, written once: X(name, work-group group). The struct below,
 * the build, the limit checks and the release all expand it. */
#define CS_KERNEL_LIST(X)                                                                               \
    X(project_fwd, CS_WG_PROJECT)                                                                       \
    X(project_bwd, CS_WG_PROJECT_BWD)                                                                   \
    X(scan_block, CS_WG_FIXED)                                                                          \
    X(scan_single, CS_WG_FIXED)                                                                         \
    X(scan_add, CS_WG_FIXED)                                                                            \
    X(radix_count, CS_WG_FIXED)                                                                         \
    X(radix_scatter, CS_WG_FIXED)                                                                       \
    X(bin_depth_keys, CS_WG_BIN)                                                                        \
    X(bin_gather_counts, CS_WG_BIN)                                                                     \
    X(bin_pair_total, CS_WG_FIXED)                                                                      \
    X(bin_emit_pairs, CS_WG_BIN)                                                                        \
    X(bin_tile_ranges, CS_WG_BIN)                                                                       \
    X(bin_reduce_pairs, CS_WG_BIN)                                                                      \
    X(rasterize_fwd, CS_WG_TILE)                                                                        \
    X(rasterize_fwd_depth, CS_WG_TILE)                                                                  \
    X(rasterize_bwd, CS_WG_TILE)                                                                        \
    X(ssim_blur_h, CS_WG_FIXED)                                                                         \
    X(ssim_fwd_v, CS_WG_FIXED)                                                                          \
    X(ssim_bwd_h, CS_WG_FIXED)                                                                          \
    X(ssim_bwd_v, CS_WG_FIXED)                                                                          \
    X(reduce_partials, CS_WG_FIXED)                                                                     \
    X(adam_step, CS_WG_ADAM)                                                                            \
    X(densify_stats, CS_WG_FIXED)                                                                       \
    X(densify_classify, CS_WG_FIXED)                                                                    \
    X(densify_append, CS_WG_FIXED)                                                                      \
    X(densify_prune_flags, CS_WG_FIXED)                                                                 \
    X(gather_rows, CS_WG_FIXED)                                                                         \
    X(densify_reset_opacity, CS_WG_FIXED)                                                               \
    X(filter3d_depth, CS_WG_FIXED)                                                                      \
    X(mcmc_weights, CS_WG_FIXED)                                                                        \
    X(mcmc_block_cdf, CS_WG_FIXED)                                                                      \
    X(mcmc_sums_cdf, CS_WG_FIXED)                                                                       \
    X(mcmc_sample, CS_WG_FIXED)                                                                         \
    X(mcmc_update_sources, CS_WG_FIXED)                                                                 \
    X(mcmc_copy_rows, CS_WG_FIXED)                                                                      \
    X(mcmc_list_dead, CS_WG_FIXED)                                                                      \
    X(mcmc_noise, CS_WG_FIXED)                                                                          \
    X(regularize_grad, CS_WG_FIXED)                                                                     \
    X(filter3d_finish, CS_WG_FIXED)                                                                     \
    X(histo_range, CS_WG_FIXED)                                                                         \
    X(histo_count, CS_WG_FIXED)                                                                         \
    X(lpips_prep_u8, CS_WG_FIXED)                                                                       \
    X(lpips_prep_f32, CS_WG_FIXED)                                                                      \
    X(lpips_conv, CS_WG_FIXED)                                                                          \
    X(lpips_conv_direct, CS_WG_FIXED)                                                                   \
    X(lpips_maxpool, CS_WG_FIXED)                                                                       \
    X(lpips_distance, CS_WG_FIXED)                                                                      \
    X(tsdf_fuse, CS_WG_FIXED)                                                                           \
    X(mc_count, CS_WG_FIXED)                                                                            \
    X(mc_emit, CS_WG_FIXED)
extern const char *const cs_wg_names[CS_WG_COUNT];
#define CS_WG_DEFAULT 256

typedef struct {
    cs_kernel_opts opts;    /* opts.tile and opts.pixels resolved */
    size_t wg[CS_WG_COUNT];     /* work-group size of each group */
    size_t wg_max[CS_WG_COUNT]; /* the largest the device allows for every kernel of the group */
    size_t tile_fit;            /* when a build's tile group did not fit: the work-items that would */
    cl_program prog;
#define CS_KERNEL_FIELD(name, group) cl_kernel name;
    CS_KERNEL_LIST(CS_KERNEL_FIELD)
#undef CS_KERNEL_FIELD
} cs_kernels;

/* The options (and model layout) a configuration asks for. */
void cs_kernel_opts_of(const cs_config *cfg, cs_kernel_opts *o);
/* Builds the program; work-group sizes start at CS_WG_DEFAULT (or the device's limit). With
 * OPTS->pixels 0 the rasterizer's work-items cover one pixel each, or as many as the device's
 * group limits need (rebuilt with fewer work-items a group). -1 with a message, also when
 * the device cannot run the tile at the pixels asked for. */
int cs_kernels_build(cs_cl *cl, const cs_kernel_opts *opts, cs_kernels *k);
/* Sets the work-group size of every group: powers of two up to wg_max; -1 with a message. */
int cs_kernels_set_wg(cs_kernels *k, const size_t wg[CS_WG_COUNT]);
/* Releases the kernels and the program; safe on an empty K. */
void cs_kernels_release(cs_kernels *k);

/* profiling stages (cs_cl_run's STAGE argument) */
enum {
    CS_STAGE_PROJECT, CS_STAGE_SORT, CS_STAGE_RASTER_FWD, CS_STAGE_LOSS, CS_STAGE_RASTER_BWD, CS_STAGE_PROJECT_BWD,
    CS_STAGE_ADAM, CS_STAGE_DENSIFY, CS_STAGE_COUNT
};
extern const char *const cs_stage_names[CS_STAGE_COUNT];

#endif
