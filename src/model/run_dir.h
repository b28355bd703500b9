/* run_dir: the output folder of a training run: what marks it as holding a run, refusing or
 * clearing it before a new run, the default name, and the run a checkpoint belongs to. */
#ifndef CS_RUN_DIR_H
#define CS_RUN_DIR_H

#include <stdbool.h>
#include <stddef.h>

/* True when DIR holds another run's outputs (config.json, train_log.jsonl, point_cloud/ or
 * checkpoints/). */
bool cs_run_dir_holds_run(const char *dir);
/* Before a fresh run into DIR: with FORCE, removes what the earlier runs there listed in
 * DIR/.clsplat-outputs (files clsplat wrote, and the folders it made once they are empty; a
 * folder without that list is refused, whatever it holds); without it, -1 with a message when
 * DIR holds another run. */
int cs_run_dir_prepare(const char *dir, bool force);
/* Removes the files and (empty) folders DIR/.clsplat-outputs lists, then the list itself;
 * nothing else. Entries that leave DIR (absolute, "..") are skipped. Returns how many files
 * went, or -1 with a message. */
int cs_run_dir_remove_listed(const char *dir);
/* -1 with a message when the output folder OUT and the dataset folder DATA are the same
 * folder or one lies inside the other (outputs would mix with, or be removed from, the
 * photos), or when OUT itself holds a dataset (sparse/, images/, transforms*.json). */
int cs_run_dir_check_apart(const char *out, const char *data, const char *flag);
/* Takes DIR/.clsplat-lock for this process's lifetime (writes its pid there): -1 with a
 * message naming the holder's pid when another process holds it (a run still training). */
int cs_run_dir_lock(const char *dir);
/* A fresh folder name under PARENT: PARENT/YYYYmmdd-HHMMSS (graphdeco picks output/<uuid>). */
int cs_run_dir_default(const char *parent, char *out, size_t n);
/* The run folder of a checkpoint OUT/checkpoints/chkpnt_N.bin (OUT), or -1 with a message
 * when the path is not shaped like one. */
int cs_run_dir_of_checkpoint(const char *ckpt, char *out, size_t n);
/* The latest complete DIR/point_cloud/iteration_N/point_cloud.ply into OUT and N into
 * *ITERATION; -1 with a message when there is none (naming the latest checkpoint and how to
 * export it when the run was stopped before its first save). */
int cs_run_dir_latest_ply(const char *dir, char *out, size_t n, int *iteration);
/* The latest DIR/checkpoints/chkpnt_N.bin into OUT; returns N, or -1 when there is none. */
int cs_run_dir_latest_checkpoint(const char *dir, char *out, size_t n);
/* Removes DIR/checkpoints/chkpnt_N.bin and the views' exposures beside it (chkpnt_N.exposure.json)
 * for every N < ITERATION not among KEEP (N_KEEP of them): periodic checkpoints replacing the
 * older ones. -1 with a message. */
int cs_run_dir_remove_checkpoints_before(const char *dir, int iteration, const int *keep, int n_keep);

#endif
