/* batch_report: the summary of a batch, from its jobs' states (job_dir.h): ROOT/summary.json
 * and ROOT/summary.csv, written atomically, and the same table for people. Per job: name,
 * status, device, iterations, test PSNR / SSIM / LPIPS, Gaussians, training seconds, accounted
 * and driver-reported peak MiB, attempts, the error line of a failed job; then totals. */
#ifndef CS_BATCH_REPORT_H
#define CS_BATCH_REPORT_H

#include <stdio.h>

#include "job_dir.h"

typedef struct {
    const char *name;
    cs_job_state st;
} cs_report_row;

/* Writes ROOT/summary.json and ROOT/summary.csv for ROWS; WALL_SECONDS: this batch's wall
 * time (0 for --collect). -1 with a message. */
int cs_report_write(const char *root, const cs_report_row *rows, int n, double wall_seconds);
/* The table and a totals line. */
void cs_report_print(const cs_report_row *rows, int n, FILE *out);
/* How many rows are DONE. */
int cs_report_done(const cs_report_row *rows, int n);

#endif
