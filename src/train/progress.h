/* progress: what a training run shows while it works. On a terminal, one line redrawn about
 * once a second (carriage return), fitted to the terminal's width: a bar, percent,
 * iteration, loss, PSNR, Gaussians, it/s, elapsed and ETA as h:mm:ss, device memory used and
 * budget. Otherwise (a log file, a pipe) one plain line per log interval. */
#ifndef CS_PROGRESS_H
#define CS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct {
    FILE *out;            /* stderr on a terminal, stdout otherwise */
    bool tty;
    int total, start;     /* the run's last iteration; the iteration it started after */
    double t_start, t_draw, t_rate;
    int it_rate;          /* iteration at t_rate, for it/s over the last stretch */
    double its;
    double loss, psnr;    /* the last logged values (NAN before the first log) */
    int drawn;            /* a line is on the terminal */
} cs_progress;

/* Starts showing a run of iterations START+1 .. TOTAL. */
void cs_progress_start(cs_progress *p, int start, int total);
/* Every iteration: redraws the terminal line when a second has passed since the last. */
void cs_progress_tick(cs_progress *p, int iter, int gaussians, size_t mem_used, size_t mem_budget);
/* At a log interval: records LOSS and PSNR; without a terminal prints the plain line. */
void cs_progress_log(cs_progress *p, int iter, double loss, double psnr, int gaussians, size_t mem_used,
                     size_t mem_budget);
/* Ends the terminal line (before other output, and at the end). */
void cs_progress_break(cs_progress *p);
/* Seconds as h:mm:ss into OUT. */
void cs_format_hms(double seconds, char *out, size_t n);
/* Fills LINE (width WIDTH at most) as the terminal line shows it; for tests. */
void cs_progress_format(const cs_progress *p, int iter, int gaussians, size_t mem_used, size_t mem_budget, int width,
                        char *line, size_t n);

#endif
