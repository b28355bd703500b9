/* batch_progress: what a batch tells the person watching it. One line per job state change
 * (queued, running on which device, finished with its PSNR, failed with its error line), and an
 * overall line: done / running / queued / failed, elapsed time, and an ETA from the running
 * jobs' own progress. On a terminal the overall line stays at the bottom and is redrawn; when
 * standard output is not a terminal (a log file, Slurm) every line is a plain line and the
 * overall line is printed after each state change only. */
#ifndef CS_BATCH_PROGRESS_H
#define CS_BATCH_PROGRESS_H

#include <stdbool.h>
#include <stdio.h>

#include "job_dir.h"

/* a running job's progress (from its train_log.jsonl) */
typedef struct {
    int iteration, total;
    double seconds;           /* training seconds up to ITERATION */
} cs_eta_job;

/* Seconds until the batch is done: each running job's own remaining time (its seconds per
 * iteration so far), queued jobs at the mean length of the jobs measured so far (finished
 * ones' DONE_SECONDS and the running ones' projections), spread over SLOTS jobs at a time; at
 * least the longest running job's remainder. -1 when nothing is known yet. */
double cs_batch_eta(const cs_eta_job *running, int n_running, int n_queued, double done_seconds, int n_done, int slots);

typedef struct {
    FILE *out;
    bool tty;
    bool drawn;               /* an overall line is on screen (terminal) */
} cs_batch_progress;

void cs_batch_progress_init(cs_batch_progress *p, FILE *out, bool tty);
/* A state-change line (printf format). */
void cs_batch_progress_event(cs_batch_progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The overall line from COUNTS (by status), ELAPSED and ETA (-1: unknown); FORCE: also when
 * not a terminal. */
void cs_batch_progress_overall(cs_batch_progress *p, const int counts[CS_JOB_NSTATUS], double elapsed, double eta,
                               bool force);
/* Ends the overall line (before the summary table). */
void cs_batch_progress_end(cs_batch_progress *p);

#endif
