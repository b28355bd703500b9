/* batch: `clsplat batch`, many training runs as child `clsplat train` processes.
 *
 * Each job runs in ROOT/<name>/ (its outputs, train.log with one section per attempt,
 * job.json, batch_config.json: the settings it was started with), pinned to one device
 * (device.id). Jobs start in list order on the device batch_pack.h picks; a job that fails
 * never stops the others. The children get SIGTERM when the batch dies, even by kill -9
 * (PR_SET_PDEATHSIG), and then save a checkpoint; Ctrl-C / SIGTERM stops them the same way.
 * Running the same command again skips finished jobs (result.json) and resumes the others
 * from their latest checkpoint (periodic by default, joblist.h). A folder lock per job
 * (ROOT/<name>/.lock, held while its child runs) keeps two batches off one job. At the end
 * ROOT/summary.json and summary.csv are rebuilt from the job folders (batch_report.h). */
#ifndef CS_BATCH_H
#define CS_BATCH_H

#include <signal.h>
#include <stdbool.h>

#include "joblist.h"

typedef struct {
    const char *jobs_file;          /* a job list, or NULL with SCENES */
    const char *const *scenes;
    int n_scenes;
    const char *config;             /* -c */
    const char *root;               /* -o */
    const char *devices;            /* --devices: NULL or "all", or "P:D,P:D" */
    int task;                       /* --task I, -1 for all jobs */
    int per_device;                 /* --per-device K, 0: memory decides */
    bool collect;
    cs_job_sets sets;               /* the command line's settings */
    const char *self;               /* the clsplat binary the children run */
    volatile sig_atomic_t *stop;    /* set by SIGINT / SIGTERM */
} cs_batch_opts;

/* Runs (or with COLLECT, summarises) the batch. 0 when every job (the task's job with TASK)
 * is done; -1 with a message when not, or on an error before any job ran; 2 when stopped by a
 * signal (the jobs stopped with checkpoints). */
int cs_batch_run(const cs_batch_opts *o);

#endif
