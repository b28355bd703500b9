/* block_plan: one scene cut into spatial blocks on its ground plane for block training (#37).
 * A plan holds the ground frame (up, and u, v across the ground), each block's core (a
 * half-open rectangle in (u, v); the outer sides open, so every point of the scene lies in
 * exactly one core), its expanded region (the core grown by the plan's margin on each inner
 * side) and the cameras assigned to it (those that see enough of its core, or stand in its
 * expanded region). `clsplat partition` makes one (blocks/), a training run with data.block_plan
 * and data.block trains one block (cs_block_restrict), `clsplat merge` keeps each block's
 * Gaussians whose centre lies in its core. */
#ifndef CS_BLOCK_PLAN_H
#define CS_BLOCK_PLAN_H

#include "dataset.h"

#define CS_BLOCKS_MAX 64

typedef struct {
    double core[4];     /* u0 u1 v0 v1: [u0, u1) x [v0, v1), +-INFINITY on the outer sides */
    double expanded[4]; /* the core grown by the margin on its inner sides */
    char (*cams)[256];  /* names of the cameras assigned (training and test views) */
    int n_cams, n_train;
    int n_points;       /* the scene's points in the expanded region: the block's initial points */
    int n_core;         /* the scene's points in the core (partition only; 0 in a plan read back) */
} cs_block;

typedef struct {
    char source[1024];  /* the dataset the plan was made for */
    double origin[3], up[3], u[3], v[3];
    double margin;      /* the expanded region's growth, a fraction of the core's size */
    double min_share;   /* a camera is assigned to a block when it sees this share of its core's points */
    int n;
    cs_block *blocks;
} cs_block_plan;

/* Cuts scene S (with its sparse points) into N blocks balanced by points: recursive splits at
 * the quantile that leaves each side its share of the blocks, across the longer spread. -1 with
 * a message (no points, too few for N, a block no training camera sees). */
int cs_block_partition(const cs_scene *s, const char *source, int n, double margin, double min_share,
                       cs_block_plan *out);
/* (u, v) of world point X in the plan's ground frame */
void cs_block_ground(const cs_block_plan *p, const double x[3], double uv[2]);
/* True when UV lies in the half-open rectangle R (u0 u1 v0 v1). */
int cs_block_inside(const double r[4], const double uv[2]);
/* The block whose core holds world point X (exactly one). */
int cs_block_of(const cs_block_plan *p, const double x[3]);
/* Writes the plan as JSON (atomically); reads one back. -1 with a message naming the file. */
int cs_block_plan_write(const cs_block_plan *p, const char *path);
int cs_block_plan_read(const char *path, cs_block_plan *out);
/* Keeps of S only block K's cameras (the split as the whole scene's) and the points in its
 * expanded region; with MASK, S's block region is that expanded region (masks.h: pixels whose
 * ray misses it leave the loss). -1 with a message (no such block, a plan made for another dataset,
 * assigned cameras missing). */
int cs_block_restrict(cs_scene *s, const char *data_path, const char *plan_path, int k, int mask);
void cs_block_plan_free(cs_block_plan *p);

#endif
