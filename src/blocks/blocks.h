/* blocks: block training's two ends (#37). `clsplat partition` cuts a scene into blocks
 * (data/block_plan.h) and writes the plan and a job list that `clsplat batch` and the Slurm
 * array script run unchanged; each job trains one block (data.block_plan, data.block).
 * `clsplat merge` keeps each block's Gaussians whose centre lies in its core and writes one
 * run folder (the PLY, config.json of the whole scene) that eval, render, view, export and
 * mesh take with -m. */
#ifndef CS_BLOCKS_H
#define CS_BLOCKS_H

#include "config.h"

typedef struct {
    const cs_config *cfg;   /* the scene (data.*) and the settings every block trains with */
    const char *plan_dir;   /* -o PLAN */
    int blocks;
    double margin, min_share;
    long gaussians;               /* --gaussians: the scene's total, shared out as each block's
                                     memory.max_gaussians by its core's points x headroom (0: none) */
    double headroom;              /* --headroom (0: the default, 1.3) */
    const char *config_file;      /* -c, passed on to the jobs (NULL: none) */
    char *const *sets;            /* --set assignments passed on to every job */
    int n_sets;
} cs_partition_opts;

/* Partitions, prints each block's share, writes PLAN/plan.json and PLAN/jobs.json. -1 with a
 * message; PLAN must not hold or lie in a dataset. */
int cs_partition(const cs_partition_opts *o);

/* Merges the blocks of PLAN (plan.json, or its folder) trained under ROOT (ROOT/block_K/, the
 * latest saved PLY of each) into OUT (OUT/point_cloud/iteration_N/point_cloud.ply, N the
 * largest block iteration, and OUT/config.json: the blocks' settings on the whole scene).
 * *ITERATION gets N. -1 with a message (a block not trained, SH degrees that differ, OUT
 * holding a run or a dataset). */
int cs_merge(const char *plan, const char *root, const char *out, int *iteration);

/* After the merged model's evaluation in OUT (metrics.json): splits its test views into those
 * assigned to one block of PLAN and those assigned to several (across a border), prints both
 * PSNRs and adds them to the record (psnr_one_block, psnr_border, views_border; each view gets
 * "blocks"). -1 with a message. */
int cs_merge_report(const char *plan, const char *out);

#endif
