/* outputs: the files a run writes (cameras.json, metrics.json, train_log.jsonl, memory.json,
 * PLYs, checkpoints), all through the atomic-write helper. */
#ifndef CS_OUTPUTS_H
#define CS_OUTPUTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cl_runtime.h"
#include "config.h"
#include "model.h"
#include "scene.h"

/* graphdeco cameras.json (id, img_name, width, height, position, rotation (c2w), fx, fy), and
 * the principal point cx, cy */
int cs_write_cameras_json(const char *path, const cs_scene *s);
/* graphdeco's cfg_args (str(Namespace(...)) of its ModelParams), which SIBR's viewers and
 * graphdeco's render.py / metrics.py read: source_path (absolute), model_path, images,
 * resolution, sh_degree, white_background, eval; data_device 'cuda', depths '',
 * train_test_exp False. */
int cs_write_cfg_args(const char *path, const cs_config *cfg);
/* Writes a JSON value atomically (indented). Does not steal the reference. */
int cs_write_json(const char *path, json_t *v);
/* Memory accounting as JSON: {"current": {...}, "peak": {"total": ..., per category}} */
json_t *cs_mem_json(const cs_cl *cl);

/* checkpoint file header; the model's arrays follow it. Version 2 added TARGET (cs_model.target);
   a version 1 header ends before it (CS_CKPT_V1_BYTES) and reads as target 0. */
typedef struct {
    char magic[8];
    int32_t version, iteration, n, sh_degree, sh_half, has_filter, step, opt_half;
    int32_t target;
} cs_ckpt_header;
#define CS_CKPT_VERSION 2
#define CS_CKPT_V1_BYTES offsetof(cs_ckpt_header, target)
/* The bytes of H's header in its file (its version's size). */
size_t cs_checkpoint_header_bytes(const cs_ckpt_header *h);
/* Limits a checkpoint header must respect (a corrupt or hostile file is refused before
   anything is allocated for it). */
#define CS_CKPT_MAX_ITERATION 100000000
#define CS_CKPT_MAX_GAUSSIANS 1000000000
/* Copies the header out of a checkpoint's first LEN bytes and checks its magic, version (1 or 2)
   and ranges (iteration and step 0..CS_CKPT_MAX_ITERATION, 0..CS_CKPT_MAX_GAUSSIANS Gaussians and
   target, SH degree 0..3); PATH names the file in the error. */
int cs_checkpoint_header(const void *data, size_t len, const char *path, cs_ckpt_header *h);
/* The checks cs_checkpoint_load makes on a checkpoint's LEN bytes before allocating anything:
 * the header's ranges, its match with LAYOUT, the exact size the header implies, finite
 * geometry. Fills *H. -1 with a message naming PATH. */
int cs_checkpoint_check(const void *data, size_t len, const char *path, const cs_model_layout *layout,
                        cs_ckpt_header *h);
/* checkpoint: the model's arrays, Adam state, stats, iteration and target */
int cs_checkpoint_save(cs_cl *cl, const cs_model *m, int iteration, const char *path);
/* Reads the checkpoint at PATH into a new model laid out as LAYOUT (1.5x spare rows): -1 with a
 * message when the header is out of range, does not match LAYOUT, the file size differs from
 * what the header claims (checked before allocating), or a Gaussian's geometry is not finite.
 * Blocks for the upload. */
int cs_checkpoint_load(cs_cl *cl, cs_model *m, int *iteration, const char *path, const cs_model_layout *layout);

#endif
