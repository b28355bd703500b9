/* joblist: the jobs of `clsplat batch`, from a JSON job list or from scene folders, each
 * resolved to the settings its training run will have. Everything is checked before anything
 * runs: unknown keys, wrong types, duplicate or unsafe names, missing data folders and bad
 * assignments are refused with a message naming the file, the job and the key.
 *
 * A job list:
 *   {"config": "configs/default.json", "set": ["optim.iterations=30000"],
 *    "jobs": [{"name": "lego", "data": "/data/lego", "config": "...", "set": ["..."]}]}
 * Relative paths are relative to the job list's folder. Settings resolve as for `clsplat
 * train`, files first, then assignments: built-in defaults < the batch's defaults (periodic
 * checkpoints) < the command line's -c < the list's config < the job's config < the list's set < the job's set < the
 * command line's flags and --set. An explicit optim.iterations in any set is the count trained
 * (cs_config_explicit_iterations). */
#ifndef CS_JOBLIST_H
#define CS_JOBLIST_H

#include "config.h"

#define CS_JOB_NAME_MAX 96
/* clsplat batch's default output.checkpoint_interval (iterations) */
#define CS_BATCH_CHECKPOINT_INTERVAL 2000

typedef struct {
    char name[CS_JOB_NAME_MAX];  /* the job's folder under the batch root */
    cs_config cfg;               /* resolved; data.path absolute, output.dir unset */
} cs_job;

typedef struct {
    cs_job *jobs;
    int n;
} cs_joblist;

/* Command-line assignments ("key=value") applied last to every job, with the flag that gave
 * each (for messages), and whether they include an explicit optim.iterations. */
typedef struct {
    char *const *assign;
    const char *const *from;
    int n;
} cs_job_sets;

/* Reads the job list at PATH over BASE_CONFIG (the command line's -c, or NULL). -1 with a
 * message naming the file, the job and the key. */
int cs_joblist_load(const char *path, const char *base_config, const cs_job_sets *cli, cs_joblist *out);
/* One job per scene folder in DIRS (named by its basename) over CONFIG (or NULL). */
int cs_joblist_from_dirs(const char *config, char *const *dirs, int n, const cs_job_sets *cli, cs_joblist *out);
/* Index of the job named NAME, or -1. */
int cs_joblist_find(const cs_joblist *l, const char *name);
void cs_joblist_free(cs_joblist *l);

#endif
