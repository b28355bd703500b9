/* batch_report: summary.json, summary.csv and the printed table (batch_report.h). */
#include "batch_report.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "outputs.h"
#include "util.h"

static json_t *jint(int v) { return v >= 0 ? json_integer(v) : json_null(); }

static json_t *row_json(const cs_report_row *r)
{
    const cs_job_state *s = &r->st;
    return json_pack("{s:s,s:s,s:s,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:s}", "name", r->name, "status",
                     cs_job_status_names[s->status], "device", s->device, "iterations", jint(s->iterations), "psnr",
                     cs_job_json_num(s->psnr), "ssim", cs_job_json_num(s->ssim), "lpips", cs_job_json_num(s->lpips), "gaussians", jint(s->gaussians),
                     "train_seconds", cs_job_json_num(s->train_seconds), "peak_accounted_mb", cs_job_json_num(s->peak_accounted_mb),
                     "peak_driver_mb", cs_job_json_num(s->peak_driver_mb), "attempts", s->attempts, "error", s->error);
}

/* totals: counts by status, training seconds, mean test metrics of the finished jobs */
static json_t *totals_json(const cs_report_row *rows, int n, double wall)
{
    int count[CS_JOB_NSTATUS] = {0}, m = 0;
    double secs = 0, psnr = 0, ssim = 0;
    for (int i = 0; i < n; i++) {
        const cs_job_state *s = &rows[i].st;
        count[s->status]++;
        if (isfinite(s->train_seconds)) secs += s->train_seconds;
        if (s->status == CS_JOB_DONE && isfinite(s->psnr)) psnr += s->psnr, ssim += s->ssim, m++;
    }
    json_t *t = json_pack("{s:i,s:f,s:o,s:o,s:o}", "jobs", n, "train_seconds", secs, "wall_seconds",
                          wall > 0 ? json_real(wall) : json_null(), "mean_psnr", m ? json_real(psnr / m) : json_null(),
                          "mean_ssim", m ? json_real(ssim / m) : json_null());
    for (int k = 0; k < CS_JOB_NSTATUS; k++) json_object_set_new(t, cs_job_status_names[k], json_integer(count[k]));
    return t;
}

/* a CSV field: quoted when it holds a comma, quote or line break */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

/* a number; empty when unknown (NAN, or a negative count) */
static void csv_num(FILE *f, double v, const char *fmt)
{
    fputc(',', f);
    if (isfinite(v) && v >= 0) fprintf(f, fmt, v);
}

static int write_csv(const char *path, const cs_report_row *rows, int n)
{
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return -1;
    fputs("name,status,device,iterations,psnr,ssim,lpips,gaussians,train_seconds,peak_accounted_mb,peak_driver_mb,"
          "attempts,error\n", af.f);
    for (int i = 0; i < n; i++) {
        const cs_job_state *s = &rows[i].st;
        csv_field(af.f, rows[i].name);
        fprintf(af.f, ",%s,", cs_job_status_names[s->status]);
        csv_field(af.f, s->device);
        csv_num(af.f, s->iterations, "%.0f");
        csv_num(af.f, s->psnr, "%.4f");
        csv_num(af.f, s->ssim, "%.5f");
        csv_num(af.f, s->lpips, "%.5f");
        csv_num(af.f, s->gaussians, "%.0f");
        csv_num(af.f, s->train_seconds, "%.1f");
        csv_num(af.f, s->peak_accounted_mb, "%.1f");
        csv_num(af.f, s->peak_driver_mb, "%.1f");
        fprintf(af.f, ",%d,", s->attempts);
        csv_field(af.f, s->error);
        fputc('\n', af.f);
    }
    return cs_atomic_commit(&af);
}

int cs_report_write(const char *root, const cs_report_row *rows, int n, double wall_seconds)
{
    char p[1200];
    json_t *jobs = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(jobs, row_json(&rows[i]));
    json_t *o = json_pack("{s:o,s:o}", "jobs", jobs, "totals", totals_json(rows, n, wall_seconds));
    if (!o) return cs_fail("out of host memory (summary)");
    int r = cs_path_join(p, sizeof p, root, "summary.json") || cs_write_json(p, o);
    json_decref(o);
    return r || cs_path_join(p, sizeof p, root, "summary.csv") || write_csv(p, rows, n);
}

/* a number in WIDTH columns, "-" when unknown */
static void cell(FILE *out, double v, int width, int prec)
{
    if (isfinite(v) && v >= 0) fprintf(out, " %*.*f", width, prec, v);
    else fprintf(out, " %*s", width, "-");
}

/* The table fits 88 columns (a terminal's 100 with room); a failed job's error follows its row
   on a line of its own. */
void cs_report_print(const cs_report_row *rows, int n, FILE *out)
{
    fprintf(out, "%-16s %-7s %-5s %6s %6s %5s %5s %8s %7s %6s %6s\n", "job", "status", "dev", "iters", "PSNR", "SSIM",
            "LPIPS", "Gaussian", "train s", "accMiB", "drvMiB");
    for (int i = 0; i < n; i++) {
        const cs_job_state *s = &rows[i].st;
        char dev[8];
        snprintf(dev, sizeof dev, "%.5s", s->device[0] ? s->device : "-");
        char *sp = strchr(dev, ' ');
        if (sp) *sp = '\0';
        fprintf(out, "%-16.16s %-7s %-5s", rows[i].name, cs_job_status_names[s->status], dev);
        cell(out, s->iterations, 6, 0), cell(out, s->psnr, 6, 2), cell(out, s->ssim, 5, 3), cell(out, s->lpips, 5, 3);
        cell(out, s->gaussians, 8, 0), cell(out, s->train_seconds, 7, 1), cell(out, s->peak_accounted_mb, 6, 0);
        cell(out, s->peak_driver_mb, 6, 0);
        fputc('\n', out);
        if (s->status == CS_JOB_FAILED && s->error[0]) fprintf(out, "    error: %s\n", s->error);
    }
    int count[CS_JOB_NSTATUS] = {0};
    for (int i = 0; i < n; i++) count[rows[i].st.status]++;
    fprintf(out, "%d jobs: %d done, %d failed, %d stopped, %d not run\n", n, count[CS_JOB_DONE], count[CS_JOB_FAILED],
            count[CS_JOB_STOPPED], count[CS_JOB_PENDING] + count[CS_JOB_QUEUED] + count[CS_JOB_RUNNING]);
}

int cs_report_done(const cs_report_row *rows, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) d += rows[i].st.status == CS_JOB_DONE;
    return d;
}
