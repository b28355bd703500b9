/* batch_progress: state lines, the overall line and the ETA of a batch (batch_progress.h). */
#include "batch_progress.h"

#include <stdarg.h>

#include "progress.h"

double cs_batch_eta(const cs_eta_job *running, int n_running, int n_queued, double done_seconds, int n_done, int slots)
{
    double known = done_seconds, longest = 0, remaining = 0;
    int n_known = n_done, unknown = 0;
    for (int i = 0; i < n_running; i++) {
        const cs_eta_job *j = &running[i];
        if (j->iteration <= 0 || j->seconds <= 0 || j->total <= 0) {
            unknown++;
            continue;
        }
        double per_it = j->seconds / j->iteration;
        double left = per_it * (j->total > j->iteration ? j->total - j->iteration : 0);
        remaining += left;
        if (left > longest) longest = left;
        known += per_it * j->total, n_known++;
    }
    if (!n_known) return -1;
    double mean = known / n_known;
    /* a running job without progress yet counts as a whole job */
    double work = remaining + (n_queued + unknown) * mean;
    double spread = work / (slots > 0 ? slots : 1);
    return spread > longest ? spread : longest;
}

void cs_batch_progress_init(cs_batch_progress *p, FILE *out, bool tty)
{
    p->out = out, p->tty = tty, p->drawn = false;
}

static void clear_line(cs_batch_progress *p)
{
    if (p->tty && p->drawn) fputs("\r\033[K", p->out);
    p->drawn = false;
}

void cs_batch_progress_event(cs_batch_progress *p, const char *fmt, ...)
{
    clear_line(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    fflush(p->out);
}

void cs_batch_progress_overall(cs_batch_progress *p, const int counts[CS_JOB_NSTATUS], double elapsed, double eta,
                               bool force)
{
    if (!p->tty && !force) return;
    char el[32], et[32] = "unknown";
    cs_format_hms(elapsed, el, sizeof el);
    if (eta >= 1) cs_format_hms(eta, et, sizeof et);
    else if (eta >= 0 && counts[CS_JOB_RUNNING]) snprintf(et, sizeof et, "finishing"); /* evaluating and saving */
    int queued = counts[CS_JOB_QUEUED] + counts[CS_JOB_PENDING];
    clear_line(p);
    fprintf(p->out, "batch: %d done, %d running, %d queued, %d failed, %d stopped; %s elapsed, ETA %s",
            counts[CS_JOB_DONE], counts[CS_JOB_RUNNING], queued, counts[CS_JOB_FAILED], counts[CS_JOB_STOPPED], el, et);
    if (p->tty) p->drawn = true;
    else fputc('\n', p->out);
    fflush(p->out);
}

void cs_batch_progress_end(cs_batch_progress *p)
{
    if (p->tty && p->drawn) fputc('\n', p->out);
    p->drawn = false;
    fflush(p->out);
}
