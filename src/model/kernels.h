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
    unsigned programs;      /* the programs to build: CS_PROGS_* bits (0 = all); not a build option */
    int cpu;                /* the device is a CPU (set by the build; render.h sizes the backward's units by it) */
} cs_kernel_opts;

/* Every build option of the program, written once: X(define, its value in cs_kernel_opts *O,
 * KEY or TUNED). The -D string (and so the binary cache's key) takes them all; the tuning's
 * key takes the KEY ones (TUNED is what the tuning chooses); checkpoints record the layout's. */
#define CS_KERNEL_OPTIONS(X, O)                                                                         \
    X(SH_DEGREE, (O)->layout.sh_degree, KEY)                                                            \
    X(SH_HALF, (O)->layout.sh_half, KEY)                                                                \
    X(ANTIALIAS, (O)->antialias, KEY)                                                                   \
    X(FILTER_3D, (O)->layout.filter_3d, KEY)                                                            \
    X(DETERMINISTIC, (O)->deterministic, KEY)                                                           \
    X(OPT_HALF, (O)->layout.opt_half, KEY)                                                              \
    X(PIXELS, (O)->pixels, KEY)                                                                         \
    X(TILE, (O)->tile, TUNED)
/* The -D options of O ("-DSH_DEGREE=3 ..."), only the KEY ones with KEY_ONLY, then the extra
   options of CLSPLAT_CL_OPTS (kernel variants for A/B measurements), into OUT. */
void cs_kernel_opts_string(const cs_kernel_opts *o, int key_only, char *out, size_t n);

/* Groups of 1D kernels that share a work-group size (tune.c measures each group).
 * CS_WG_TILE: tile * tile / pixels work-items a rasterizer group (checked against the device);
 * CS_WG_FIXED: a size set by the kernel's own algorithm (sort, SSIM, densification). */
enum { CS_WG_PROJECT, CS_WG_PROJECT_BWD, CS_WG_BIN, CS_WG_ADAM, CS_WG_COUNT, CS_WG_TILE = -1, CS_WG_FIXED = -2 };

/* The OpenCL programs, one per kernel module: X(program, its files under cl/). Each is built
 * on its own with cl/layout.h and cl/common.h before its files (no file depends on another
 * module's), with its own binary-cache entry; a command builds only the programs it uses
 * (cs_kernel_opts.programs). */
#define CS_PROGRAM_LIST(X)                                                                              \
    X(render, "project.h project_fwd.cl project_bwd.cl bin.cl rasterize_fwd.cl rasterize_fwd_split.cl rasterize_bwd.cl") \
    X(scan, "scan.cl")                                                                                  \
    X(loss, "ssim.cl resample.cl exposure.cl")                                                          \
    X(optim, "adam.cl")                                                                                 \
    X(density, "rows.cl densify.cl mcmc.cl")                                                            \
    X(histo, "histo.cl")                                                                                \
    X(lpips, "lpips.cl")                                                                                \
    X(mesh, "contract.h mesh_tex.h mesh.cl mesh_raster.cl mesh_geom.cl mesh_tex.cl")
#define CS_PROGRAM_ID(name, files) CS_PROG_##name,
enum { CS_PROGRAM_LIST(CS_PROGRAM_ID) CS_PROG_COUNT };
#undef CS_PROGRAM_ID
#define CS_PROGS(p) (1u << CS_PROG_##p)
/* what each kind of command builds */
#define CS_PROGS_RENDER (CS_PROGS(render) | CS_PROGS(scan))
#define CS_PROGS_EVAL (CS_PROGS_RENDER | CS_PROGS(loss) | CS_PROGS(lpips))
#define CS_PROGS_TRAIN (CS_PROGS_EVAL | CS_PROGS(optim) | CS_PROGS(density) | CS_PROGS(histo))
#define CS_PROGS_ALL ((1u << CS_PROG_COUNT) - 1)
extern const char *const cs_program_names[CS_PROG_COUNT];
/* each program's files, as CS_PROGRAM_LIST has them */
extern const char *const cs_program_files[CS_PROG_COUNT];

/* Every kernel, written once: X(name, work-group group, program). The struct below, the
 * build, the limit checks and the release all expand it. */
#define CS_KERNEL_LIST(X)                                                                               \
    X(project_fwd, CS_WG_PROJECT, render)                                                               \
    X(project_bwd, CS_WG_PROJECT_BWD, render)                                                           \
    X(scan_block, CS_WG_FIXED, scan)                                                                    \
    X(scan_single, CS_WG_FIXED, scan)                                                                   \
    X(scan_add, CS_WG_FIXED, scan)                                                                      \
    X(bin_count_tiles, CS_WG_BIN, render)                                                               \
    X(bin_emit_pairs, CS_WG_BIN, render)                                                                \
    X(bin_sort_chunks, CS_WG_FIXED, render)                                                             \
    X(bin_sort_tiles, CS_WG_FIXED, render)                                                              \
    X(bin_tile_units, CS_WG_BIN, render)                                                                \
    X(bin_unit_tiles, CS_WG_BIN, render)                                                                \
    X(bin_tile_order, CS_WG_BIN, render)                                                                \
    X(bin_reduce_pairs, CS_WG_BIN, render)                                                              \
    X(rasterize_fwd, CS_WG_TILE, render)                                                                \
    X(rasterize_fwd_depth, CS_WG_TILE, render)                                                          \
    X(rasterize_fwd_unit, CS_WG_TILE, render)                                                           \
    X(rasterize_fwd_replay, CS_WG_TILE, render)                                                         \
    X(rasterize_fwd_merge, CS_WG_TILE, render)                                                          \
    X(rasterize_bwd, CS_WG_TILE, render)                                                                \
    X(ssim_fwd, CS_WG_FIXED, loss)                                                                      \
    X(ssim_bwd, CS_WG_FIXED, loss)                                                                      \
    X(reduce_partials, CS_WG_FIXED, loss)                                                               \
    X(gt_downsample, CS_WG_FIXED, loss)                                                                 \
    X(exposure_fwd, CS_WG_FIXED, loss)                                                                  \
    X(exposure_bwd, CS_WG_FIXED, loss)                                                                  \
    X(exposure_adam, CS_WG_FIXED, loss)                                                                 \
    X(exposure_center, CS_WG_FIXED, loss)                                                               \
    X(adam_step, CS_WG_ADAM, optim)                                                                     \
    X(densify_stats, CS_WG_FIXED, density)                                                              \
    X(densify_classify, CS_WG_FIXED, density)                                                           \
    X(error_mask, CS_WG_FIXED, density)                                                                 \
    X(error_score_add, CS_WG_FIXED, density)                                                            \
    X(densify_score_flags, CS_WG_FIXED, density)                                                        \
    X(densify_list_new, CS_WG_FIXED, density)                                                           \
    X(densify_split, CS_WG_FIXED, density)                                                              \
    X(densify_prune_flags, CS_WG_FIXED, density)                                                        \
    X(gather_rows, CS_WG_FIXED, density)                                                                \
    X(rows_copy, CS_WG_FIXED, density)                                                                  \
    X(rows_zero, CS_WG_FIXED, density)                                                                  \
    X(column_zero, CS_WG_FIXED, density)                                                                \
    X(densify_reset_opacity, CS_WG_FIXED, density)                                                      \
    X(filter3d_depth, CS_WG_FIXED, density)                                                             \
    X(mcmc_weights, CS_WG_FIXED, density)                                                               \
    X(mcmc_block_cdf, CS_WG_FIXED, density)                                                             \
    X(mcmc_sums_cdf, CS_WG_FIXED, density)                                                              \
    X(mcmc_sample, CS_WG_FIXED, density)                                                                \
    X(mcmc_update_sources, CS_WG_FIXED, density)                                                        \
    X(mcmc_list_dead, CS_WG_FIXED, density)                                                             \
    X(mcmc_noise, CS_WG_FIXED, density)                                                                 \
    X(regularize_grad, CS_WG_FIXED, density)                                                            \
    X(filter3d_finish, CS_WG_FIXED, density)                                                            \
    X(histo_range, CS_WG_FIXED, histo)                                                                  \
    X(histo_count, CS_WG_FIXED, histo)                                                                  \
    X(lpips_prep_u8, CS_WG_FIXED, lpips)                                                                \
    X(lpips_prep_f32, CS_WG_FIXED, lpips)                                                               \
    X(lpips_conv, CS_WG_FIXED, lpips)                                                                   \
    X(lpips_conv_direct, CS_WG_FIXED, lpips)                                                            \
    X(lpips_maxpool, CS_WG_FIXED, lpips)                                                                \
    X(lpips_distance, CS_WG_FIXED, lpips)                                                               \
    X(tsdf_fuse, CS_WG_FIXED, mesh)                                                                     \
    X(mc_count, CS_WG_FIXED, mesh)                                                                      \
    X(mc_emit, CS_WG_FIXED, mesh)                                                                       \
    X(mesh_project, CS_WG_FIXED, mesh)                                                                  \
    X(mesh_cover, CS_WG_FIXED, mesh)                                                                    \
    X(mesh_weights, CS_WG_FIXED, mesh)                                                                  \
    X(mesh_draw, CS_WG_FIXED, mesh)                                                                     \
    X(mesh_color_scatter, CS_WG_FIXED, mesh)                                                            \
    X(mesh_box_down, CS_WG_FIXED, mesh)                                                                 \
    X(mesh_box_up, CS_WG_FIXED, mesh)                                                                   \
    X(mesh_aa_fwd, CS_WG_FIXED, mesh)                                                                   \
    X(mesh_aa_bwd, CS_WG_FIXED, mesh)                                                                   \
    X(mesh_interior_bwd, CS_WG_FIXED, mesh)                                                             \
    X(mesh_project_bwd, CS_WG_FIXED, mesh)                                                              \
    X(mesh_lap_gather, CS_WG_FIXED, mesh)                                                               \
    X(mesh_lap_delta, CS_WG_FIXED, mesh)                                                                \
    X(mesh_lap_scatter, CS_WG_FIXED, mesh)                                                              \
    X(mesh_normal_reg, CS_WG_FIXED, mesh)                                                               \
    X(mesh_pos_adam, CS_WG_FIXED, mesh)                                                                 \
    X(mesh_color_adam, CS_WG_FIXED, mesh)                                                               \
    X(mesh_tex_draw, CS_WG_FIXED, mesh)                                                                 \
    X(mesh_tex_scatter, CS_WG_FIXED, mesh)
extern const char *const cs_wg_names[CS_WG_COUNT];
#define CS_WG_DEFAULT 256
/* local memory project_bwd stages its rows in, for a work-group of WG items (layout.h) */
static inline size_t cs_stage_bytes(size_t wg) { return wg * (CS_STAGE_W + 1) * sizeof(float); }

typedef struct {
    cs_kernel_opts opts;    /* opts.tile and opts.pixels resolved */
    size_t wg[CS_WG_COUNT];     /* work-group size of each group */
    size_t wg_max[CS_WG_COUNT]; /* the largest the device allows for every kernel of the group */
    size_t tile_fit;            /* when a build's tile group did not fit: the work-items that would */
    cl_program prog[CS_PROG_COUNT]; /* NULL: not built (not in opts.programs) */
#define CS_KERNEL_FIELD(name, group, program) cl_kernel name;
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
