/* job_dir: a batch job's state in its folder (job_dir.h). */
#include "job_dir.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outputs.h"
#include "run_dir.h"
#include "util.h"

const char *const cs_job_status_names[CS_JOB_NSTATUS] = {"pending", "queued", "running", "done", "failed", "stopped"};

void cs_job_state_init(cs_job_state *st)
{
    memset(st, 0, sizeof *st);
    st->exit_code = -1;
    st->iterations = st->gaussians = st->checkpoint = -1;
    st->train_seconds = st->psnr = st->ssim = st->lpips = st->peak_accounted_mb = st->peak_driver_mb = NAN;
}

static json_t *load(const char *dir, const char *file)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", dir, file);
    return json_load_file(p, 0, NULL);
}

static double num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static void copy_str(json_t *o, const char *key, char *out, size_t n)
{
    const char *s = json_string_value(json_object_get(o, key));
    if (s) snprintf(out, n, "%s", s);
}

/* What the batch wrote. */
static void read_job_json(const char *dir, cs_job_state *st)
{
    json_t *j = load(dir, "job.json");
    if (!json_is_object(j)) {
        json_decref(j);
        return;
    }
    const char *s = json_string_value(json_object_get(j, "status"));
    for (int i = 0; s && i < CS_JOB_NSTATUS; i++)
        if (!strcmp(s, cs_job_status_names[i])) st->status = (cs_job_status)i;
    copy_str(j, "device", st->device, sizeof st->device);
    copy_str(j, "error", st->error, sizeof st->error);
    double v = num(j, "attempts");
    st->attempts = isfinite(v) ? (int)v : 0;
    v = num(j, "exit_code");
    st->exit_code = isfinite(v) ? (int)v : -1;
    v = num(j, "wall_seconds");
    st->wall_seconds = isfinite(v) ? v : 0;
    v = num(j, "pid");
    st->pid = isfinite(v) ? (long)v : 0;
    json_decref(j);
}

/* The test evaluation of the last iteration (else the last test evaluation) in metrics.json. */
static void read_metrics(const char *dir, cs_job_state *st)
{
    json_t *m = load(dir, "metrics.json"), *best = NULL;
    size_t i;
    json_t *r;
    json_array_foreach(m, i, r) {
        const char *split = json_string_value(json_object_get(r, "split"));
        if (!split || strcmp(split, "test")) continue;
        if (!best || st->iterations < 0 || num(r, "iteration") == st->iterations) best = r;
    }
    if (best) st->psnr = num(best, "psnr"), st->ssim = num(best, "ssim"), st->lpips = num(best, "lpips");
    json_decref(m);
}

/* result.json: written last by a finished run; complete when its PLY is there too. */
static bool read_result(const char *dir, cs_job_state *st)
{
    json_t *r = load(dir, "result.json");
    bool done = false;
    if (json_is_object(r)) {
        double it = num(r, "iterations"), g = num(r, "gaussians");
        st->iterations = isfinite(it) ? (int)it : -1;
        st->gaussians = isfinite(g) ? (int)g : -1;
        st->train_seconds = num(r, "train_seconds");
        st->peak_accounted_mb = num(r, "peak_accounted_mb");
        st->peak_driver_mb = num(r, "peak_driver_mb");
        char p[1400];
        snprintf(p, sizeof p, "%s/point_cloud/iteration_%d/point_cloud.ply", dir, st->iterations);
        done = st->iterations >= 0 && cs_file_exists(p);
    }
    json_decref(r);
    return done;
}

void cs_job_dir_read(const char *dir, cs_job_state *st)
{
    cs_job_state_init(st);
    read_job_json(dir, st);
    st->recorded = st->status;
    char p[1400];
    st->checkpoint = cs_run_dir_latest_checkpoint(dir, p, sizeof p);
    cs_job_dir_progress(dir, &st->log_iteration, &st->log_seconds);
    if (read_result(dir, st)) {
        st->status = CS_JOB_DONE;
        st->error[0] = '\0';
    } else if (st->status == CS_JOB_RUNNING || st->status == CS_JOB_QUEUED || st->status == CS_JOB_DONE) {
        st->status = st->attempts ? CS_JOB_STOPPED : CS_JOB_PENDING; /* a killed batch's, or outputs removed */
    }
    read_metrics(dir, st);
}

/* a number, or null when unknown */
json_t *cs_job_json_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

int cs_job_dir_write(const char *dir, const char *name, const cs_job_state *st)
{
    char p[1400];
    json_t *o = json_pack("{s:s,s:s,s:s,s:i,s:i,s:s,s:o,s:I}", "name", name, "status", cs_job_status_names[st->status],
                          "device", st->device, "attempts", st->attempts, "exit_code", st->exit_code, "error",
                          st->error, "wall_seconds", cs_job_json_num(st->wall_seconds), "pid", (json_int_t)st->pid);
    if (!o) return cs_fail("out of host memory (job.json)");
    int r = cs_path_join(p, sizeof p, dir, "job.json") || cs_write_json(p, o);
    json_decref(o);
    return r;
}

/* The last LEN (at most N - 1) bytes of PATH into BUF; 0 when unreadable. */
static size_t read_tail(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t got = 0;
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        long start = end > (long)(n - 1) ? end - (long)(n - 1) : 0;
        if (end >= 0 && fseek(f, start, SEEK_SET) == 0) got = fread(buf, 1, n - 1, f);
    }
    fclose(f);
    buf[got] = '\0';
    return got;
}

void cs_job_dir_progress(const char *dir, int *iteration, double *seconds)
{
    char p[1400], buf[8192];
    *iteration = 0, *seconds = 0;
    snprintf(p, sizeof p, "%s/train_log.jsonl", dir);
    size_t n = read_tail(p, buf, sizeof buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
    char *line = strrchr(buf, '\n');
    json_t *o = json_loads(line ? line + 1 : buf, 0, NULL);
    double it = num(o, "iteration"), s = num(o, "seconds");
    if (isfinite(it)) *iteration = (int)it;
    if (isfinite(s)) *seconds = s;
    json_decref(o);
}

void cs_job_dir_error_line(const char *log, char *out, size_t n)
{
    static const char prefix[] = "clsplat: error: ";
    char buf[16384];
    out[0] = '\0';
    if (!read_tail(log, buf, sizeof buf)) return;
    char *attempt = NULL, *last = NULL, *err = NULL;
    for (char *line = buf, *nl; line && *line; line = nl ? nl + 1 : NULL) {
        nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        if (!strncmp(line, "==== clsplat batch", 18)) attempt = line, err = NULL;
        else if (!strncmp(line, prefix, sizeof prefix - 1)) err = line + sizeof prefix - 1;
        if (line[strspn(line, " \t\r")]) last = line;
    }
    const char *pick = err ? err : last != attempt ? last : NULL;
    if (pick) snprintf(out, n, "%s", pick);
}
