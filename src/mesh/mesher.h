/* mesher: clsplat mesh (#23): a trained model's training views rendered with their depths,
 * fused slab by slab into a TSDF volume on the device (tsdf.h), the surface extracted by
 * marching tetrahedra, welded, simplified to a triangle budget (mesh.h) and written as a PLY.
 * Bounds: the Gaussians' centres (opacity over 0.5, the 0.5-99.5 percentiles on each axis),
 * within max_depth of the cameras. Past the bounds the grid ends, unless --contract asks for a
 * band of voxels that grow with the distance out to max_depth (contract.h): on south_building
 * that far background, meshed coarse round the model's box, cost the refined mesh PSNR and took
 * triangles from the budget. On a capture the focus (mesh_focus.h) is the default: the fine
 * voxels span the box half the views see, with a band of 1 round it. */
#ifndef CS_MESHER_H
#define CS_MESHER_H

#include <stddef.h>

#include "cl_runtime.h"
#include "config.h"
#include "mesh_eval.h"
#include "mesh_refine.h"
#include "mesh_step.h"
#include "scene.h"
#include "splats.h"

typedef struct {
    const char *out_path;
    double voxel;          /* voxel side in world units; 0: the longest side of the bounds / resolution */
    int resolution;        /* voxels along the longest side when voxel is 0 */
    long max_triangles;    /* 0: no simplification */
    int depth_plane;       /* 0: expected depth, 1: median depth */
    double max_depth;      /* 0: cs_mesh_default_depth (else twice the cameras' spread) */
    double trunc_voxels;   /* truncation in voxels */
    double volume_mb;      /* the largest slab of the volume, MiB; 0: half of what the memory budget leaves */
    long keep_components;  /* keep the N largest connected components (0: all) */
    double refine_dssim;   /* the refinement's D-SSIM weight (mesh_refine.h) */
    double carve;          /* the fusion's weight of free space beyond 1 (tsdf.h) */
    int shell;             /* the background shell's level (mesh_shell.h; 0: none, -1: the default) */
    double contract;       /* the grid's contraction past the model's box (contract.h: S; 0: none) */
    int focus;             /* the contraction's inner box is the focus (mesh_focus.h), S 1 unless contract:
                              1 yes, 0 no, -1 on a capture (not a Blender scene) */
    int refine;            /* fit the vertex colours to the training photos over this many views (0: not; mesh_refine.h) */
    int refine_geometry;   /* then the positions and colours over this many more (0: not) */
    cs_mesh_geom_opts geom; /* that stage's step (lr < 0: by the scene's kind) and regularisers */
    double steps[CS_MESH_STEPS_MAX]; /* with n_steps > 1: the steps tried in its place (mesh_step.h) */
    int n_steps;
    int psnr;              /* compare the written mesh with the test photos (mesh_eval.h) */
    int psnr_samples;      /* drawing each pixel as the mean of N x N samples (0, 1: its centre) */
    int refine_samples;    /* the refinement fits that drawing at N x N samples (0, 1: the centres) */
    const char *from;      /* a mesh PLY taken in place of the fusion's (NULL: fuse the model's depths) */
    const char *renders;   /* and write its drawings there (NULL: not) */
    int profile;           /* time the refinement's kernels (mesh_refine.h) */
    int texture;           /* then a texture of this many subdivisions (cl/mesh_tex.h; 0: none, -1: the most
                              whose atlas fits, cs_mesh_tex_auto), for a .glb */
    int texture_views;     /* fitted over this many views */
    int consistency;       /* keep a rendered depth only where this many of the view's nearest views see a
                              surface alike (depth_check.h; 0: all, -1: by the scene's kind) */
    int carve_dropped;     /* a depth the check drops still carves the free space in front of it */
    int shell_fit;         /* the background shell brought in to the background the views see (mesh_shell_fit.h) */
    double near_cut;       /* drop triangles nearer a training camera than this times the views' median
                              depth (floaters against the lens; 0: keep them) */
    int pseudo;            /* the refinement also fits the splat model's drawings of this many views
                              between each training view and its nearest (mesh_pseudo.h; 0: none) */
    const char *exposure;  /* the model's exposure.json (optim.exposure; NULL: none): the refinement and
                              --psnr take each view under its transform (mesh_exposure.h) */
    int refine_exposure;   /* the refinement learns the views' exposures too (from the model's, or the
                              identity), and --psnr draws under the learned ones */
} cs_mesh_opts;

/* the Adam step of the views' exposures with --refine-exposure (graphdeco's exposure lr) */
#define CS_MESH_EXPOSURE_LR 0.01

/* the default grid: a training pixel at the cameras' median distance a voxel, within 64 to 512
   voxels along the bounds' longest side */
#define CS_MESH_DEFAULT_RESOLUTION 512
#define CS_MESH_MIN_RESOLUTION 64
#define CS_STR_(x) #x
#define CS_STR(x) CS_STR_(x)
#define CS_MESH_DEFAULT_TRUNC 4.0
/* on a capture the truncation is at least this share of the training views' median depth (the
   rendered depths of neighbouring views differ by about that: at a voxel of a pixel, 4 voxels
   left the fused surface in shards on the plush dog), at most CS_MESH_TRUNC_MAX voxels */
#define CS_MESH_TRUNC_DEPTH 0.01
#define CS_MESH_TRUNC_MAX 32.0
/* triangles nearer a training camera than this times the views' median depth are dropped */
#define CS_MESH_NEAR_CUT 0.05
/* the depth check's rule on captures: views of the nearest 8 that must see a surface alike */
#define CS_MESH_CONSISTENCY 2
/* the most host memory --pseudo-views' drawings take */
#define CS_MESH_PSEUDO_MAX_GIB 2
/* the background shell with --refine on a capture (20 * 4^6 = 81,920 triangles) */
#define CS_MESH_SHELL_DEFAULT 6
/* the geometry stage's defaults (mesh_geom.h); its step on Blender scenes, and on captures
   (COLMAP, nerfstudio) where none can be chosen (mesh_step.h: one training view) */
#define CS_MESH_GEOM_LR 0.05
#define CS_MESH_GEOM_LR_CAPTURE 0.025
#define CS_MESH_GEOM_LAPLACIAN 0.1
#define CS_MESH_GEOM_NORMAL 0.1

typedef struct {
    int nx, ny, nz, slabs, views, passes; /* passes: triangle emission passes, all slabs */
    float voxel, bounds[6], max_depth; /* bounds: the model's box (the contraction's inner box) */
    int focused;         /* with opts.focus: focus[] is the contraction's inner box */
    float focus[6];
    size_t soup_tris, welded_vertices, welded_tris, vertices, triangles, file_bytes;
    size_t boundary_edges, nonmanifold_edges;
    size_t components, dropped_tris; /* after welding; triangles of the components left out */
    size_t dropped_simplified;       /* and of pieces the simplification split off */
    size_t peak_device;  /* accounted bytes at the peak (model, renderer, slab, triangles) */
    float simplify_error;
    double secs_fuse, secs_extract, secs_weld, secs_simplify, secs_write;
    size_t shell_tris;   /* the background shell's triangles (in triangles too) */
    float shell_radius;
    size_t shell_fitted; /* its vertices --shell-fit brought in */
    long alpha_filled;   /* pixels fused at their expected depth where the photo's alpha said object */
    float median_depth;  /* the training views' median depth of the opaque Gaussians (-1: unknown) */
    float near_radius;   /* triangles this near a training camera were dropped (near_cut) */
    size_t near_dropped;
    int consistency;     /* the depth check's rule (0: none) */
    long dcheck_seen, dcheck_dropped; /* depth pixels it looked at and dropped (the first slab) */
    cs_mesh_refine_stats refine; /* with opts.refine */
    cs_mesh_step_choice step;    /* with opts.n_steps > 1 */
    cs_mesh_eval_result eval; /* with opts.psnr */
    cs_mesh_eval_result eval_centres; /* and with opts.psnr_samples > 1, drawn at the pixels' centres too */
} cs_mesh_stats;

/* A faint model (MCMC's opacity regulariser leaves most Gaussians faint, and a run stopped while
 * the count still grows can have none over 0.5: a plush dog's 5,000-iteration model, 26.1 dB,
 * had 1 of 32,576) would give the bounds and the depth limit a handful of Gaussians, or none:
 * where fewer than CS_MESH_OPAQUE_MIN and fewer than 1% of the Gaussians (at least 10) pass
 * the threshold, it falls to the opacity of the brightest fifth, as the focus counts them. */
#define CS_MESH_OPAQUE_MIN 1000
#define CS_MESH_FAINT_QUANTILE 0.8

/* the logit over which S's Gaussians count as opaque for the bounds and the depth limit: LG, or
 * for a faint model (above) the CS_MESH_FAINT_QUANTILE quantile of their logits where that is
 * lower; *PASSING (or NULL): how many passed LG */
float cs_mesh_opaque_logit(const cs_splats *s, float lg, int *passing);

/* The default depth limit (--max-depth unset): the depths at which the training views see the
 * centres of Gaussians over 0.5 opacity (cs_mesh_opaque_logit: lower for a faint model) inside their images (a sample of at most about 4M
 * view-Gaussian pairs), their 99th percentile grown by 25% (for the corners of the views that
 * the percentile leaves out). Floaters and sky past where the views mostly look are left out; the walls of a room around the cameras are kept (twice the
 * cameras' spread, the limit before, cut them away: #38). -1 when no view sees 10 of them.
 * *MEDIAN (or NULL): those depths' median, -1 likewise. */
double cs_mesh_default_depth(const cs_scene *scene, const cs_splats *s, double *median);

/* the truncation in voxels: ASKED (--trunc) when set (> 0), else CS_MESH_DEFAULT_TRUNC, or on a
   CAPTURE CS_MESH_TRUNC_DEPTH of the views' MEDIAN_DEPTH where that is more (VOXEL wide voxels),
   at most CS_MESH_TRUNC_MAX */
double cs_mesh_trunc_voxels(double asked, int capture, double median_depth, double voxel);

/* Meshes S (a model of SCENE) as O says, writes O->out_path, fills ST. */
int cs_mesh_model(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const cs_mesh_opts *o,
                  cs_mesh_stats *st);

#endif
