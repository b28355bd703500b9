/* job_dir: the state of one batch job, kept in its folder ROOT/<name>/ so that a batch that
 * was killed, a re-run and `clsplat batch --collect` all read the same truth:
 *   job.json     what the batch knows (status, device, attempts, exit status, error line,
 *                wall seconds), written atomically by the batch at each change;
 *   result.json  written last by a finished training run (trainer.c): the job is complete;
 *   metrics.json the run's evaluations (test PSNR / SSIM / LPIPS of the last iteration);
 *   train_log.jsonl, checkpoints/  progress and the point to resume from;
 *   train.log    the child's output, one section per attempt; its last error line. */
#ifndef CS_JOB_DIR_H
#define CS_JOB_DIR_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

typedef enum {
    CS_JOB_PENDING,  /* never started */
    CS_JOB_QUEUED,
    CS_JOB_RUNNING,
    CS_JOB_DONE,
    CS_JOB_FAILED,
    CS_JOB_STOPPED,  /* interrupted (signal, killed batch): resumes on the next run */
    CS_JOB_NSTATUS
} cs_job_status;
extern const char *const cs_job_status_names[CS_JOB_NSTATUS];

typedef struct {
    cs_job_status status;
    cs_job_status recorded;/* what job.json says (PENDING when there is none) */
    char device[160];      /* "P:D name" */
    int attempts;
    int exit_code;         /* of the last attempt; -1 none */
    char error[512];       /* failed: the error line */
    double wall_seconds;   /* all attempts */
    long pid;              /* running: the child */
    /* from the run's own files; -1 / NAN when unknown */
    int iterations, gaussians;
    double train_seconds, psnr, ssim, lpips, peak_accounted_mb, peak_driver_mb;
    int checkpoint;        /* latest checkpoint's iteration, -1 none */
    int log_iteration;     /* progress: the last train_log.jsonl line */
    double log_seconds;
} cs_job_state;

/* A state with nothing known. */
void cs_job_state_init(cs_job_state *st);
/* Reads DIR's files into ST. Missing files are unknowns, never errors; a job whose run
 * finished (result.json and its PLY) is DONE whatever job.json says, one job.json left
 * RUNNING by a killed batch is STOPPED. */
void cs_job_dir_read(const char *dir, cs_job_state *st);
/* A finite number, else JSON null: unknowns in job.json and the batch summary. */
json_t *cs_job_json_num(double v);
/* Writes DIR/job.json atomically. */
int cs_job_dir_write(const char *dir, const char *name, const cs_job_state *st);
/* The progress of a running job: the last line of DIR/train_log.jsonl (0 when none). */
void cs_job_dir_progress(const char *dir, int *iteration, double *seconds);
/* The last error line of the log LOG ("clsplat: error: ..." without its prefix, else the last
 * non-empty line) into OUT; "" when the log is missing or empty. */
void cs_job_dir_error_line(const char *log, char *out, size_t n);

#endif
