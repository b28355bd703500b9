/* run_report: OUT/report.html from a run's files. */
#include "run_report.h"

#include <ctype.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svg_plot.h"
#include "util.h"

typedef struct {
    const char *dir;
    json_t *log;     /* train_log.jsonl: array of objects */
    json_t *metrics; /* metrics.json: array of evaluation records, or NULL */
    json_t *result;  /* result.json, or NULL (the run did not finish) */
    json_t *memory;  /* memory.json (the plan, and the bytes by category), or NULL */
    char *config;    /* config.json's text */
} run_files;

/* train_log.jsonl as an array; a line that is not a JSON object is an error naming it */
static json_t *read_log(const char *path)
{
    char *text = cs_read_file(path, NULL);
    if (!text) return NULL;
    json_t *all = json_array();
    int line = 0;
    for (char *p = text, *next; p && *p; p = next) {
        next = strchr(p, '\n');
        if (next) *next++ = '\0';
        line++;
        if (!*p) continue;
        json_error_t err;
        json_t *o = json_loads(p, 0, &err);
        if (!json_is_object(o)) {
            json_decref(o), json_decref(all), free(text);
            cs_fail("%s:%d: not a JSON object (%s)", path, line, o ? "another JSON value" : err.text);
            return NULL;
        }
        json_array_append_new(all, o);
    }
    free(text);
    return all;
}

static json_t *read_optional(const char *dir, const char *name)
{
    char p[1300];
    if (cs_path_join(p, sizeof p, dir, name) || !cs_file_exists(p)) return NULL;
    return json_load_file(p, 0, NULL);
}

static int load(run_files *r, const char *dir)
{
    char p[1300];
    memset(r, 0, sizeof *r);
    r->dir = dir;
    if (cs_path_join(p, sizeof p, dir, "config.json")) return -1;
    if (!cs_file_exists(p)) return cs_fail("%s: no config.json: not a clsplat run folder", dir);
    if (!(r->config = cs_read_file(p, NULL))) return -1;
    if (cs_path_join(p, sizeof p, dir, "train_log.jsonl")) return -1;
    if (!cs_file_exists(p)) return cs_fail("%s: no train_log.jsonl: not a clsplat training run", dir);
    if (!(r->log = read_log(p))) return -1;
    r->metrics = read_optional(dir, "metrics.json");
    if (r->metrics && !json_is_array(r->metrics)) json_decref(r->metrics), r->metrics = NULL;
    r->result = read_optional(dir, "result.json");
    r->memory = read_optional(dir, "memory.json");
    if (r->memory && !json_is_object(r->memory)) json_decref(r->memory), r->memory = NULL;
    return 0;
}

static void unload(run_files *r)
{
    json_decref(r->log), json_decref(r->metrics), json_decref(r->result), json_decref(r->memory);
    free(r->config);
}

static double num(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

/* X and Y of every record of ARR (of SPLIT when given): XKEY, YKEY; NAN where absent */
static int pick(const json_t *arr, const char *split, const char *xkey, const char *ykey, double *x, double *y)
{
    size_t i;
    const json_t *o;
    int n = 0;
    json_array_foreach(arr, i, o) {
        const char *sp = json_string_value(json_object_get(o, "split"));
        if (split && (!sp || strcmp(sp, split))) continue;
        x[n] = num(o, xkey), y[n] = num(o, ykey), n++;
    }
    return n;
}

enum { CHART_W = 460, CHART_H = 260, MAX_SERIES = 3 };

typedef struct {
    const char *title, *xlabel, *ylabel;
    const char *labels[MAX_SERIES], *keys[MAX_SERIES];
    const char *xkey, *xkey_metrics; /* x of train_log lines, of metrics.json records */
    bool from_metrics[MAX_SERIES]; /* test records of metrics.json, else train_log lines */
} chart_def;

/* against iteration, then the same against training seconds (train_log's "seconds" and metrics.json's
   "train_seconds": evaluations excluded) */
#define SECONDS "training seconds (evaluations excluded)"
static const chart_def CHARTS[] = {
    {"loss", "iteration", "loss", {"L1 + D-SSIM (the view trained)"}, {"loss"}, "iteration", "iteration", {0}},
    {"PSNR", "iteration", "dB", {"training view", "test views"}, {"psnr", "psnr"}, "iteration", "iteration", {false, true}},
    {"Gaussians", "iteration", "count", {"Gaussians"}, {"gaussians"}, "iteration", "iteration", {0}},
    {"device memory", "iteration", "MiB", {"accounted", "accounted peak", "driver"},
     {"device_mb", "peak_device_mb", "driver_mb"}, "iteration", "iteration", {0}},
    {"speed", "iteration", "iterations / s", {"it/s"}, {"its"}, "iteration", "iteration", {0}},
    {"loss against training time", SECONDS, "loss", {"L1 + D-SSIM (the view trained)"}, {"loss"}, "seconds",
     "train_seconds", {0}},
    {"PSNR against training time", SECONDS, "dB", {"training view", "test views"}, {"psnr", "psnr"}, "seconds",
     "train_seconds", {false, true}},
    {"Gaussians against training time", SECONDS, "count", {"Gaussians"}, {"gaussians"}, "seconds", "train_seconds", {0}},
    {"device memory against training time", SECONDS, "MiB", {"accounted", "accounted peak", "driver"},
     {"device_mb", "peak_device_mb", "driver_mb"}, "seconds", "train_seconds", {0}},
    {"speed against training time", SECONDS, "iterations / s", {"it/s"}, {"its"}, "seconds", "train_seconds", {0}},
};

static int chart(FILE *f, const run_files *r, const chart_def *c)
{
    size_t most = json_array_size(r->log) + (r->metrics ? json_array_size(r->metrics) : 0) + 1;
    double *buf = malloc(sizeof(double) * most * 2 * MAX_SERIES);
    if (!buf) return cs_fail("out of host memory (report)");
    cs_plot_series s[MAX_SERIES];
    int ns = 0;
    for (int i = 0; i < MAX_SERIES && c->keys[i]; i++) {
        const json_t *src = c->from_metrics[i] ? r->metrics : r->log;
        if (!src) continue;
        double *x = buf + (size_t)ns * 2 * most, *y = x + most;
        int n = pick(src, c->from_metrics[i] ? "test" : NULL, c->from_metrics[i] ? c->xkey_metrics : c->xkey,
                     c->keys[i], x, y);
        s[ns++] = (cs_plot_series){c->labels[i], x, y, n};
    }
    cs_plot p = {c->title, c->xlabel, c->ylabel, CHART_W, CHART_H};
    int rc = cs_svg_plot(f, &p, s, ns);
    free(buf);
    return rc;
}

static void base64(FILE *f, const unsigned char *d, size_t n)
{
    static const char T[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)d[i] << 16 | (i + 1 < n ? (unsigned)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        fputc(T[v >> 18 & 63], f), fputc(T[v >> 12 & 63], f);
        fputc(i + 1 < n ? T[v >> 6 & 63] : '=', f), fputc(i + 2 < n ? T[v & 63] : '=', f);
    }
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the highest N of RUN/previews/ours_N, or -1 */
static int latest_previews(const char *dir)
{
    char p[1300];
    if (cs_path_join(p, sizeof p, dir, "previews")) return -1;
    DIR *d = opendir(p);
    if (!d) return -1;
    int best = -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        int it;
        char tail;
        if (sscanf(e->d_name, "ours_%d%c", &it, &tail) == 1 && it > best) best = it;
    }
    closedir(d);
    return best;
}

/* the PNG names in DIR, sorted, at most CS_RUN_REPORT_MAX_PREVIEWS */
static int preview_names(const char *dir, char *names[CS_RUN_REPORT_MAX_PREVIEWS])
{
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) && n < CS_RUN_REPORT_MAX_PREVIEWS) {
        size_t l = strlen(e->d_name);
        if (l > 4 && !strcmp(e->d_name + l - 4, ".png") && (names[n] = strdup(e->d_name))) n++;
    }
    if (d) closedir(d);
    qsort(names, n, sizeof *names, by_name);
    return n;
}

static int previews(FILE *f, const char *run)
{
    int it = latest_previews(run);
    fputs("<h2>Test views</h2>\n", f);
    if (it < 0) {
        fputs("<p class=\"note\">No previews (eval.preview_views is 0, or no evaluation has run yet).</p>\n", f);
        return 0;
    }
    char dir[1400], *names[CS_RUN_REPORT_MAX_PREVIEWS];
    snprintf(dir, sizeof dir, "%s/previews/ours_%d", run, it);
    int n = preview_names(dir, names);
    fprintf(f, "<p>At iteration %d: render | ground truth | error (the channels' mean absolute difference, "
               "times 4).</p>\n", it);
    for (int i = 0; i < n; i++) {
        char p[1700];
        size_t len = 0;
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        unsigned char *png = (unsigned char *)cs_read_file(p, &len);
        if (png && len <= CS_RUN_REPORT_MAX_PREVIEW_BYTES && len > 8 && !memcmp(png, "\x89PNG", 4)) {
            fputs("<figure><img alt=\"", f);
            cs_html_escape(f, names[i]);
            fputs("\" src=\"data:image/png;base64,", f);
            base64(f, png, len);
            fputs("\"><figcaption>", f);
            cs_html_escape(f, names[i]);
            fputs("</figcaption></figure>\n", f);
        }
        free(png), free(names[i]);
    }
    return 0;
}

static void cell(FILE *f, double v, const char *fmt)
{
    if (isfinite(v)) fputs("<td>", f), fprintf(f, fmt, v), fputs("</td>", f);
    else fputs("<td>-</td>", f);
}

static void evaluations(FILE *f, const json_t *metrics)
{
    fputs("<h2>Evaluations</h2>\n", f);
    if (!metrics || !json_array_size(metrics)) {
        fputs("<p class=\"note\">No evaluation yet (metrics.json).</p>\n", f);
        return;
    }
    fputs("<table><tr><th>iteration</th><th>split</th><th>views</th><th>PSNR</th><th>SSIM</th><th>LPIPS</th>"
          "<th>Gaussians</th><th>training s</th><th>eval peak MiB</th></tr>\n", f);
    size_t i;
    const json_t *o;
    json_array_foreach(metrics, i, o) {
        fputs("<tr>", f);
        cell(f, num(o, "iteration"), "%.0f");
        fputs("<td>", f), cs_html_escape(f, json_string_value(json_object_get(o, "split"))), fputs("</td>", f);
        cell(f, num(o, "views"), "%.0f"), cell(f, num(o, "psnr"), "%.3f"), cell(f, num(o, "ssim"), "%.4f");
        cell(f, num(o, "lpips"), "%.4f"), cell(f, num(o, "gaussians"), "%.0f"), cell(f, num(o, "train_seconds"), "%.1f");
        cell(f, num(o, "peak_device_mb"), "%.1f");
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
}

static void summary(FILE *f, const run_files *r)
{
    const json_t *last = json_array_get(r->log, json_array_size(r->log) - 1);
    fputs("<table class=\"summary\">", f);
    fputs("<tr><th>folder</th><td>", f), cs_html_escape(f, r->dir), fputs("</td></tr>\n", f);
    if (r->result) {
        fputs("<tr><th>state</th><td>finished</td></tr><tr><th>device</th><td>", f);
        cs_html_escape(f, json_string_value(json_object_get(r->result, "device")));
        fprintf(f, "</td></tr>\n<tr><th>iterations</th><td>%.0f</td></tr><tr><th>Gaussians</th><td>%.0f</td></tr>"
                   "<tr><th>training time</th><td>%.1f s</td></tr><tr><th>peak memory</th><td>%.1f MiB accounted",
                num(r->result, "iterations"), num(r->result, "gaussians"), num(r->result, "train_seconds"),
                num(r->result, "peak_accounted_mb"));
        if (isfinite(num(r->result, "peak_driver_mb")))
            fprintf(f, ", %.1f MiB driver", num(r->result, "peak_driver_mb"));
        fputs("</td></tr>\n", f);
    } else {
        fprintf(f, "<tr><th>state</th><td>not finished (no result.json): last logged iteration %.0f, %.0f Gaussians, "
                   "%.1f s</td></tr>\n", num(last, "iteration"), num(last, "gaussians"), num(last, "seconds"));
    }
    fputs("</table>\n", f);
}

static const char STYLE[] =
    "body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1500px}h1{font-size:1.4em}h2{font-size:1.15em;"
    "margin-top:1.6em}table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:3px 8px;"
    "text-align:right}.summary th,.summary td{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:10px}"
    "figure{margin:0 0 1em 0}img{max-width:100%;image-rendering:pixelated}pre{background:#f6f6f6;padding:1em;"
    "overflow:auto;font-size:.85em}.note{color:#777}";

/* the first bytes of every report: a file that does not start so is not replaced */
static const char MARK[] = "<!DOCTYPE html>\n<!-- clsplat report -->\n";

/* 0 when PATH is absent or a clsplat report; -1 with a message otherwise */
static int may_replace(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    char head[sizeof MARK];
    size_t n = fread(head, 1, sizeof MARK - 1, f);
    fclose(f);
    if (n == sizeof MARK - 1 && !memcmp(head, MARK, n)) return 0;
    return cs_fail("%s exists and is not a clsplat report: not replaced (choose another -o)", path);
}

/* a served page reloads itself every few seconds (no script: a meta refresh) */
static const char REFRESH[] = "<meta http-equiv=\"refresh\" content=\"5\">";

/* memory.json: the plan the run made (written when training starts) and the bytes by
   category, now and at the peak (rewritten when it ends) */
static void memory(FILE *f, const json_t *m)
{
    fputs("<h2>Memory</h2>\n", f);
    if (!m) {
        fputs("<p>No memory.json yet.</p>\n", f);
        return;
    }
    const json_t *plan = json_object_get(m, "plan");
    const double MiB = 1048576.0;
    fputs("<table><tr><th>plan</th><th></th></tr>", f);
    fputs("<tr><td>budget</td>", f), cell(f, num(plan, "budget_bytes") / MiB, "%.1f MiB"), fputs("</tr>", f);
    fputs("<tr><td>fixed (images, scratch)</td>", f), cell(f, num(plan, "fixed_bytes") / MiB, "%.1f MiB"), fputs("</tr>", f);
    fputs("<tr><td>bytes a Gaussian</td>", f), cell(f, num(plan, "bytes_per_gaussian"), "%.0f"), fputs("</tr>", f);
    fputs("<tr><td>Gaussians at most</td>", f), cell(f, num(plan, "max_gaussians"), "%.0f"), fputs("</tr>", f);
    fputs("</table>\n<table><tr><th>accounted</th><th>now</th><th>peak</th></tr>", f);
    const json_t *cur = json_object_get(m, "current_bytes"), *peak = json_object_get(m, "peak_bytes");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)peak, key, v) {
        fputs("<tr><td>", f), cs_html_escape(f, key), fputs("</td>", f);
        cell(f, num(cur, key) / MiB, "%.1f MiB"), cell(f, json_number_value(v) / MiB, "%.1f MiB"), fputs("</tr>", f);
    }
    fputs("</table>\n", f);
}

static int page(FILE *f, const run_files *r, bool live)
{
    fputs(MARK, f);
    fprintf(f, "<html lang=\"en\"><head><meta charset=\"utf-8\">%s<title>clsplat report: ", live ? REFRESH : "");
    cs_html_escape(f, r->dir);
    fprintf(f, "</title><style>%s</style></head><body>\n<h1>clsplat run report</h1>\n", STYLE);
    summary(f, r);
    fputs("<h2>Training</h2>\n<div class=\"charts\">\n", f);
    for (size_t i = 0; i < sizeof CHARTS / sizeof CHARTS[0]; i++)
        if (chart(f, r, &CHARTS[i])) return -1;
    fputs("</div>\n", f);
    evaluations(f, r->metrics);
    if (previews(f, r->dir)) return -1;
    memory(f, r->memory);
    fputs("<h2>Config</h2>\n<pre>", f);
    cs_html_escape(f, r->config);
    fputs("</pre>\n</body></html>\n", f);
    return 0;
}

/* ---- a batch root: ROOT/summary.json as one table, each job linking to its own page ---- */

/* NAME percent-encoded for a link (all but unreserved characters) */
static void url_escape(FILE *f, const char *name)
{
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        if (isalnum(*c) || strchr("-._~", *c)) fputc(*c, f);
        else fprintf(f, "%%%02X", *c);
}

/* a job's row; its name links to its page: the file report.html, or served (LIVE) the job's
   live view, from its start */
static void job_row(FILE *f, const char *root, const json_t *j, bool live)
{
    const char *name = json_string_value(json_object_get(j, "name"));
    char p[1400];
    snprintf(p, sizeof p, live ? "%s/%s/config.json" : "%s/%s/report.html", root, name ? name : "");
    fputs("<tr><td style=\"text-align:left\">", f);
    if (name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..") && cs_file_exists(p)) {
        fputs("<a href=\"", f), url_escape(f, name), fputs(live ? "/\">" : "/report.html\">", f); /* a folder of ROOT */
        cs_html_escape(f, name), fputs("</a>", f);
    } else {
        cs_html_escape(f, name);
    }
    fputs("</td><td>", f), cs_html_escape(f, json_string_value(json_object_get(j, "status"))), fputs("</td>", f);
    cell(f, num(j, "iterations"), "%.0f"), cell(f, num(j, "psnr"), "%.3f"), cell(f, num(j, "ssim"), "%.4f");
    cell(f, num(j, "lpips"), "%.4f"), cell(f, num(j, "gaussians"), "%.0f"), cell(f, num(j, "train_seconds"), "%.1f");
    cell(f, num(j, "peak_accounted_mb"), "%.1f"), cell(f, num(j, "peak_driver_mb"), "%.1f"), cell(f, num(j, "attempts"), "%.0f");
    fputs("<td style=\"text-align:left\">", f), cs_html_escape(f, json_string_value(json_object_get(j, "error")));
    fputs("</td></tr>\n", f);
}

static int batch_page(FILE *f, const char *root, const json_t *summary, bool live)
{
    const json_t *jobs = json_object_get(summary, "jobs"), *t = json_object_get(summary, "totals"), *j;
    fputs(MARK, f);
    fprintf(f, "<html lang=\"en\"><head><meta charset=\"utf-8\">%s<title>clsplat batch: ", live ? REFRESH : "");
    cs_html_escape(f, root);
    fprintf(f, "</title><style>%s</style></head><body>\n<h1>clsplat batch report</h1>\n<p>", STYLE);
    cs_html_escape(f, root);
    fprintf(f, ": %.0f jobs, %.0f done, %.0f failed, %.0f stopped; mean test PSNR of the finished %.3f dB; %.1f s of "
               "training</p>\n", num(t, "jobs"), num(t, "done"), num(t, "failed"), num(t, "stopped"), num(t, "mean_psnr"),
            num(t, "train_seconds"));
    fputs("<table><tr><th>job</th><th>status</th><th>iterations</th><th>PSNR</th><th>SSIM</th><th>LPIPS</th>"
          "<th>Gaussians</th><th>training s</th><th>peak MiB</th><th>driver MiB</th><th>attempts</th><th>error</th></tr>\n",
          f);
    size_t i;
    json_array_foreach(jobs, i, j) job_row(f, root, j, live);
    fputs("</table>\n</body></html>\n", f);
    return ferror(f) ? cs_fail("writing the batch report failed") : 0;
}

static json_t *load_summary(const char *root)
{
    char s[1300];
    if (cs_path_join(s, sizeof s, root, "summary.json")) return NULL;
    if (!cs_file_exists(s)) return cs_fail("%s: no summary.json: not a clsplat batch folder", root), NULL;
    json_error_t err;
    json_t *summary = json_load_file(s, 0, &err);
    if (json_is_array(json_object_get(summary, "jobs"))) return summary;
    cs_fail("%s: not a batch summary (%s)", s, summary ? "no jobs array" : err.text);
    json_decref(summary);
    return NULL;
}

int cs_batch_report_page(const char *root, const char *out_path)
{
    char p[1300];
    if (!out_path) {
        if (cs_path_join(p, sizeof p, root, "report.html")) return -1;
        out_path = p;
    }
    json_t *summary = load_summary(root);
    if (!summary) return -1;
    cs_atomic_file af;
    int rc = may_replace(out_path) || cs_atomic_open(&af, out_path) ? -1 : 0;
    if (!rc && batch_page(af.f, root, summary, false)) cs_atomic_abort(&af), rc = -1;
    else if (!rc) rc = cs_atomic_commit(&af);
    json_decref(summary);
    return rc;
}

int cs_report_html(const char *dir, bool batch, char **html, size_t *len)
{
    *html = NULL, *len = 0;
    FILE *f = open_memstream(html, len);
    if (!f) return cs_fail("open_memstream: out of host memory");
    int rc;
    if (batch) {
        json_t *summary = load_summary(dir);
        rc = !summary || batch_page(f, dir, summary, true) ? -1 : 0;
        json_decref(summary);
    } else {
        run_files r;
        rc = load(&r, dir) || page(f, &r, true) ? -1 : 0;
        unload(&r);
    }
    if (fclose(f) || rc) {
        free(*html), *html = NULL, *len = 0;
        return rc ? -1 : cs_fail("open_memstream: out of host memory");
    }
    return 0;
}

bool cs_report_is_batch(const char *dir)
{
    char p[1300];
    return !cs_path_join(p, sizeof p, dir, "summary.json") && cs_file_exists(p) &&
           !cs_path_join(p, sizeof p, dir, "config.json") && !cs_file_exists(p);
}

int cs_run_report_write(const char *run_dir, const char *out_path)
{
    char p[1300];
    if (!out_path) {
        if (cs_path_join(p, sizeof p, run_dir, "report.html")) return -1;
        out_path = p;
    }
    if (may_replace(out_path)) return -1;
    run_files r;
    if (load(&r, run_dir)) {
        unload(&r);
        return cs_fail_prefix("report of %s", run_dir);
    }
    cs_atomic_file af;
    int rc = cs_atomic_open(&af, out_path);
    if (!rc && page(af.f, &r, false)) cs_atomic_abort(&af), rc = -1;
    else if (!rc) rc = cs_atomic_commit(&af);
    unload(&r);
    return rc;
}
