/* layout.h: the one source of truth for row layouts and constants that host code, kernels
 * and tests share. Plain macros in the common subset of C11 and OpenCL C 1.2: the host
 * includes it (-Icl), the program build prepends it to cl/common.h and the stage files.
 * Change a value here and every reader follows. */
#ifndef CS_LAYOUT_H
#define CS_LAYOUT_H

/* ---- the geometry row of a Gaussian: geo (N, CS_GEO_W) float --------------------------
 * Parameters, their gradients (v_geo) and both Adam moments use the same row, so the
 * optimizer is one flat loop over N * CS_GEO_W values. */
#define CS_GEO_MEAN 0            /* x y z, world space */
#define CS_GEO_LOG_SCALE 3       /* log sx, log sy, log sz */
#define CS_GEO_QUAT 6            /* w x y z, not necessarily normalised */
#define CS_GEO_LOGIT_OPACITY 10  /* opacity = sigmoid(this) */
#define CS_GEO_W 11

/* ---- project_bwd writes its rows through local memory in slices of this many columns (at
 * least CS_GEO_W; 16 floats keep each row's slice whole 32-byte sectors). A work-item stages
 * CS_STAGE_W + 1 floats (cs_stage_bytes in kernels.h). */
#define CS_STAGE_W 16

/* ---- the model: every per-Gaussian array, described once ---------------------------------
 * X(name, what, width, storage, present, category, checkpointed, of, on_new), in the model's
 * one order (the checkpoint's order too). Allocation, growth and compaction, the bytes a row
 * costs (and so the memory plan), checkpoints and the rows densification and MCMC make all
 * iterate this list (model_schema.h); a feature that needs one more array adds a line here
 * (or, at run time, cs_schema_extend) and touches none of them.
 *   name          cs_model's field and the kernels' argument name
 *   width         values a row; CS_ROW_SH3 stands for 3 (sh_degree + 1)^2 of the layout
 *   storage       F32 | SH (f32, or f16 with memory.sh_dtype fp16) | MOM_M | MOM_V (f32, or
 *                 the 16-bit moments model.h describes with memory.optimizer_dtype fp16)
 *   present       ALWAYS | FILTER_3D (the mip-splatting 3D filter)
 *   category      memory accounting (cl_mem.h): PARAMS GRADS OPTIMIZER DENSIFY
 *   checkpointed  1: checkpoints keep it (gradients are recomputed every step)
 *   of            the parameter array whose gradient or optimizer state it is (NONE)
 *   on_new        a row densification or MCMC makes: COPY its source row (the strategy's own
 *                 rule then moves a split child's mean and scale), ZERO (optimizer state;
 *                 a source that MCMC relocates from is zeroed too), or KEEP (its owner writes
 *                 it before reading: gradients every step, statistics after densification) */
#define CS_ROW_SH3 (-1)
#define CS_MODEL_ARRAYS(X)                                                                      \
    X(geo, "Gaussian geometry", CS_GEO_W, F32, ALWAYS, PARAMS, 1, NONE, COPY)                   \
    X(sh, "SH coefficients", CS_ROW_SH3, SH, ALWAYS, PARAMS, 1, NONE, COPY)                     \
    X(filter3d, "3D filter", 1, F32, FILTER_3D, PARAMS, 1, NONE, COPY)                          \
    X(v_geo, "geometry gradients", CS_GEO_W, F32, ALWAYS, GRADS, 0, geo, KEEP)                  \
    X(v_sh, "SH gradients", CS_ROW_SH3, F32, ALWAYS, GRADS, 0, sh, KEEP)                        \
    X(m_geo, "Adam m (geometry)", CS_GEO_W, MOM_M, ALWAYS, OPTIMIZER, 1, geo, ZERO)             \
    X(v2_geo, "Adam v (geometry)", CS_GEO_W, MOM_V, ALWAYS, OPTIMIZER, 1, geo, ZERO)            \
    X(m_sh, "Adam m (SH)", CS_ROW_SH3, MOM_M, ALWAYS, OPTIMIZER, 1, sh, ZERO)                   \
    X(v2_sh, "Adam v (SH)", CS_ROW_SH3, MOM_V, ALWAYS, OPTIMIZER, 1, sh, ZERO)                  \
    X(stats, "densification statistics", 3, F32, ALWAYS, DENSIFY, 1, NONE, KEEP)

/* ---- the per-Gaussian 2D gradient row of one view: v_2d (N, CS_V2D_W) float ------------
 * What the rasterizer backward hands to the projection backward (and, per pair, to the
 * deterministic reduction). Mean in pixels; conic (a, b, c) of [[a b] [b c]]. */
#define CS_V2D_MEAN 0            /* d/d mean2d x, y */
#define CS_V2D_CONIC 2           /* d/d conic a, b, c */
#define CS_V2D_OPACITY 5         /* d/d opacity (activated) */
#define CS_V2D_RGB 6             /* d/d colour r, g, b */
#define CS_V2D_W 9

/* ---- per-view exposure (optim.exposure, cl/exposure.cl): a training view's affine colour
 * transform of the render, a row of 3 float4, one an output channel c: (A_c0, A_c1, A_c2, b_c),
 * out_c = A_c0 r + A_c1 g + A_c2 b + b_c. The identity row is (1 0 0 0, 0 1 0 0, 0 0 1 0).
 * Its gradient's partial sums: one such row a 16 x 16 group of pixels. */
#define CS_EXPOSURE_W 12
#define CS_EXPOSURE_T 16

/* ---- per-Gaussian projection outputs (bytes a row, for the memory plan) ---------------- */
/* xy float2 | conic_opacity float4 | rgb float3 | depth | radii | tiles touched | screen
   bounds uint2 | pair offset | colour clamp mask */
#define CS_PROJ_BYTES (8 + 16 + 12 + 4 + 4 + 4 + 8 + 4 + 4)

/* ---- screen bounds: the tiles a primitive covers, [x0, x1) x [y0, y1), as two uints of
 * 16-bit tile coordinates (x0 | y0 << 16, x1 | y1 << 16). A Gaussian's projection writes them;
 * the pair emission keeps, row by row, the tiles of them its ellipse reaches (xy and conic,
 * tile_row_span in common.h). Empty bounds: culled. */
#define CS_BOUNDS_MAX_TILES 65535
#define CS_BOUNDS_PACK(rmin, rmax)                                                                  \
    ((uint2)((uint)(rmin).x | (uint)(rmin).y << 16, (uint)(rmax).x | (uint)(rmax).y << 16))
#define CS_BOUNDS_UNPACK(b, rmin, rmax)                                                             \
    ((rmin) = (int2)((int)((b).x & 0xffffu), (int)((b).x >> 16)),                                   \
     (rmax) = (int2)((int)((b).y & 0xffffu), (int)((b).y >> 16)))
/* a pair: its depth key and value, and the two again for bin_sort_tiles' merges of long tiles;
   plus the pair -> Gaussian map and the per-pair gradient row in deterministic mode */
#define CS_PAIR_BYTES (4 + 4 + 4 + 4)
#define CS_PAIR_BYTES_DETERMINISTIC (4 + CS_V2D_W * 4)

/* ---- the forward's tile order (bin_tile_order): tiles bucketed by pair count, two classes
 * an octave from 1 pair up to 2^15 (longer tiles share the first class), the last class the
 * empty tiles */
#define CS_TILE_CLASSES 32u

/* ---- rasterizer thresholds (graphdeco's, as gsplat names them) -------------------------
 * CS_ALPHA_MAX: alpha is clamped below 1 so that T / (1 - alpha) stays finite when the
 *   backward replays the blend from the final transmittance; the clamp has zero gradient.
 * CS_ALPHA_MIN: a Gaussian whose alpha at a pixel is below 1/255 cannot change an 8-bit
 *   pixel, so it is skipped (and the tile rectangles are cut to where it reaches this).
 * CS_T_MIN: blending stops once transmittance would fall below this: what is left behind
 *   contributes less than 1e-4 of the pixel. */
#define CS_ALPHA_MAX 0.99f
#define CS_ALPHA_MIN_INV 255.f
#define CS_ALPHA_MIN (1.f / CS_ALPHA_MIN_INV)
#define CS_T_MIN 0.0001f

/* ---- device scan ------------------------------------------------------------------------
 * A work-group of CS_SORT_WG items handles a block of CS_SORT_BLOCK values; scans of up to
 * CS_SCAN_SINGLE_MAX values run as one work-group in one launch. */
#define CS_SORT_WG 256
#define CS_SORT_IPT 4
#define CS_SORT_BLOCK (CS_SORT_WG * CS_SORT_IPT)
/* 32768: on an H100 every launch costs about 5 us however small (clsplat bench, by kernel),
 * so one slow launch beats three: at 4096, south_building's bin+sort took 0.85 ms, not 0.77 */
#define CS_SCAN_SINGLE_MAX 32768

/* ---- each tile's pairs sorted in local memory (bin_sort_tiles): up to this many at once, a
 * key and a value each (16 KiB: inside OpenCL's 32 KiB minimum of local memory); longer tiles
 * are sorted in chunks of it and merged */
#define CS_TILE_SORT_CAP 2048u

/* ---- MCMC densification (cl/mcmc.cl) ---------------------------------------------------
 * A row sampled k times becomes min(k + 1, CS_MCMC_NMAX) Gaussians (gsplat's n_max); sampling
 * works in blocks of CS_SORT_BLOCK rows and scans the block totals in one work-group, so a
 * budget holds at most CS_MCMC_MAX_ROWS rows. */
#define CS_MCMC_NMAX 51
#define CS_MCMC_MAX_ROWS (CS_SORT_BLOCK * 32768)

/* ---- histograms for TensorBoard (cl/histo.cl) ------------------------------------------
 * CS_HISTO_GROUPS work-groups of CS_HISTO_WG items each reduce their share into a partial
 * row; the host adds the rows up (CS_HISTO_GROUPS x (4 + CS_HISTO_BUCKETS) words in all). */
#define CS_HISTO_WG 256
#define CS_HISTO_GROUPS 64
#define CS_HISTO_BUCKETS 64
#define CS_HISTO_OPACITY 0       /* sigmoid(logit opacity) */
#define CS_HISTO_SCALE 1         /* exp(largest log scale), log-spaced buckets */
#define CS_HISTO_SH_REST 2       /* L2 norm of the SH coefficients above degree 0 */
#define CS_HISTO_GRAD 3          /* densification statistic: accumulated gradient / views */
#define CS_HISTO_COUNT 4

/* ---- LPIPS (cl/lpips.cl) ---------------------------------------------------------------
 * Convolutions: (16, 16) groups, each a CS_LPIPS_TM (output channels) x CS_LPIPS_TN (output
 * positions) block, CS_LPIPS_TK deep a step; the 4 x 4 per work-item is fixed by these. */
#define CS_LPIPS_TM 64
#define CS_LPIPS_TN 64
#define CS_LPIPS_TK 16
#define CS_LPIPS_WG 256          /* distance reduction group */
#define CS_LPIPS_CPB 16          /* output channels per work-item of the CPU convolution */

#endif
