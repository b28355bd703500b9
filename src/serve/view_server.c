/* view_server: the run's pages over HTTP (view_server.h). */
#include "view_server.h"

#include <arpa/inet.h>
#include <jansson.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "run_report.h"
#include "svg_plot.h"
#include "util.h"
#include "view_model.h"
#include "view_photo.h"

/* the page and its script, embedded by tools/embed_sources.c (src/serve/web/) */
extern const int cs_web_nsources;
extern const char *const cs_web_source_names[];
extern const char *const cs_web_sources[];

#define MAX_FILE_BYTES (64L << 20)

/* a run folder's view: what its page draws and shows */
typedef struct {
    char dir[1400];
    char name[256];         /* a batch job's name ("" for the served run) */
    cs_view_model *model;
    cs_view_photos *photos;
} run_view;

#define MAX_JOB_VIEWS 256

struct cs_view_server {
    struct MHD_Daemon *d;
    char dir[1024];
    char host[64];
    char token[33]; /* "" on loopback */
    int port;
    bool batch;     /* DIR is a batch folder (summary.json, no config.json) */
    run_view run;   /* a run folder's */
    /* a batch's jobs, opened on their first request; only the server's one thread (libmicrohttpd's
       internal polling thread) touches them */
    run_view *jobs[MAX_JOB_VIEWS];
    int njobs;
};

/* the viewer page's policy: its own script, requests to this server, images from it */
#define PAGE_CSP "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data: blob:; style-src 'unsafe-inline'"

static enum MHD_Result reply_csp(struct MHD_Connection *c, unsigned status, const char *type, void *data, size_t n,
                                 bool owned, const char *cookie, const char *csp)
{
    struct MHD_Response *r = owned ? MHD_create_response_from_buffer(n, data, MHD_RESPMEM_MUST_FREE)
                                   : MHD_create_response_from_buffer(n, data, MHD_RESPMEM_PERSISTENT);
    if (!r) {
        if (owned) free(data);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Content-Security-Policy", csp);
    if (cookie) MHD_add_response_header(r, "Set-Cookie", cookie);
    enum MHD_Result ok = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type, void *data, size_t n,
                             bool owned, const char *cookie)
{
    return reply_csp(c, status, type, data, n, owned, cookie,
                     "default-src 'none'; img-src data:; style-src 'unsafe-inline'");
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
    return reply(c, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg), false, NULL);
}

/* the job named in URL "/<job>/<rest>" when summary.json lists it (*REST: "/<rest>"); 0 otherwise */
static int batch_job(const cs_view_server *s, const char *url, char *job, size_t n, const char **rest)
{
    const char *end = strchr(url + 1, '/');
    size_t len = end ? (size_t)(end - url - 1) : 0;
    if (!end || len == 0 || len >= n) return 0;
    memcpy(job, url + 1, len), job[len] = '\0';
    *rest = end;
    char p[1300];
    if (cs_path_join(p, sizeof p, s->dir, "summary.json")) return 0;
    json_t *sum = json_load_file(p, 0, NULL), *j;
    size_t i;
    int found = 0;
    json_array_foreach(json_object_get(sum, "jobs"), i, j) {
        const char *name = json_string_value(json_object_get(j, "name"));
        found |= name && !strcmp(name, job) && strcmp(name, ".") && strcmp(name, "..");
    }
    json_decref(sum);
    return found;
}

static void run_view_free(run_view *r)
{
    if (!r) return;
    cs_view_model_free(r->model);
    cs_view_photos_free(r->photos);
}

static int run_view_open(run_view *r, const char *dir, const char *name)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    snprintf(r->name, sizeof r->name, "%s", name);
    if ((r->model = cs_view_model_new(dir)) && (r->photos = cs_view_photos_new(dir))) return 0;
    run_view_free(r);
    return cs_fail("out of host memory");
}

/* batch job JOB's view, opened on its first request; NULL when MAX_JOB_VIEWS are open */
static run_view *job_view(cs_view_server *s, const char *job)
{
    for (int i = 0; i < s->njobs; i++)
        if (!strcmp(s->jobs[i]->name, job)) return s->jobs[i];
    if (s->njobs == MAX_JOB_VIEWS) return NULL;
    char dir[1400];
    snprintf(dir, sizeof dir, "%s/%s", s->dir, job);
    run_view *r = malloc(sizeof *r);
    if (!r || run_view_open(r, dir, job)) return free(r), NULL;
    return s->jobs[s->njobs++] = r;
}

/* STATUS with PREFIX and the last error as the text */
static enum MHD_Result last_error(struct MHD_Connection *c, unsigned status, const char *prefix, const char *cookie)
{
    char msg[1200];
    snprintf(msg, sizeof msg, "%s%s\n", prefix, cs_last_error());
    char *m = strdup(msg);
    return m ? reply(c, status, "text/plain; charset=utf-8", m, strlen(m), true, cookie) : MHD_NO;
}

static enum MHD_Result page(struct MHD_Connection *c, const char *dir, bool batch, const char *cookie)
{
    char *html;
    size_t n;
    if (cs_report_html(dir, batch, &html, &n)) return last_error(c, 503, "no page yet: ", cookie);
    return reply(c, 200, "text/html; charset=utf-8", html, n, true, cookie);
}

/* one of the run's known files, read whole */
static enum MHD_Result run_file(struct MHD_Connection *c, const run_view *s, const char *name)
{
    static const char *const names[] = {"train_log.jsonl", "metrics.json", "result.json", "config.json", "cameras.json"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(name, names[i])) continue;
        char p[1300];
        size_t n = 0;
        char *d = cs_path_join(p, sizeof p, s->dir, name) || !cs_file_exists(p) ? NULL : cs_read_file(p, &n);
        if (!d) return text(c, 404, "not written yet\n");
        if ((long)n > MAX_FILE_BYTES) {
            free(d);
            return text(c, 413, "file too large to serve\n");
        }
        return reply(c, 200, i ? "application/json" : "application/x-ndjson", d, n, true, NULL);
    }
    return text(c, 404, "unknown resource\n");
}

/* the embedded page or script NAME (src/serve/web/) */
static enum MHD_Result web_file(struct MHD_Connection *c, const char *name, const char *cookie)
{
    for (int i = 0; i < cs_web_nsources; i++) {
        if (strcmp(cs_web_source_names[i], name)) continue;
        const char *type = strstr(name, ".js") ? "text/javascript; charset=utf-8" : "text/html; charset=utf-8";
        return reply_csp(c, 200, type, (void *)cs_web_sources[i], strlen(cs_web_sources[i]), false, cookie, PAGE_CSP);
    }
    return text(c, 404, "unknown resource\n");
}

/* what the page needs to draw the model as clsplat does: its iteration and count, the 2D
   filter and the background of the run's config */
static enum MHD_Result model_json(struct MHD_Connection *c, const run_view *s)
{
    int it, count;
    cs_view_model_peek(s->model, &it, &count);
    cs_config cfg;
    cs_config_defaults(&cfg);
    char p[1300];
    if (cs_path_join(p, sizeof p, s->dir, "config.json") || cs_config_load_file(&cfg, p)) cs_config_defaults(&cfg);
    float bg[3];
    if (cs_config_background(&cfg.data, bg) < 0) bg[0] = bg[1] = bg[2] = 0.f; /* a config no run wrote */
    json_t *o = json_pack("{s:i, s:i, s:b, s:f, s:[f,f,f]}", "iteration", it, "count", count, "mip",
                          cfg.model.antialias == CS_AA_MIP, "kernel_size", cfg.model.kernel_size, "background",
                          (double)bg[0], (double)bg[1], (double)bg[2]);
    char *d = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return d ? reply(c, 200, "application/json", d, strlen(d), true, NULL) : MHD_NO;
}

static enum MHD_Result model_bin(struct MHD_Connection *c, const run_view *s)
{
    char *d;
    size_t n;
    int it;
    if (cs_view_model_get(s->model, &d, &n, &it)) return last_error(c, 404, "", NULL);
    return reply(c, 200, "application/octet-stream", d, n, true, NULL);
}

/* "/photo/ID": ID in decimal digits only */
static enum MHD_Result photo(struct MHD_Connection *c, const run_view *s, const char *id)
{
    size_t len = strspn(id, "0123456789");
    if (len == 0 || len > 6 || id[len]) return text(c, 404, "unknown resource\n");
    uint8_t *png;
    size_t n;
    if (cs_view_photo_png(s->photos, atoi(id), &png, &n)) return last_error(c, 404, "", NULL);
    return reply(c, 200, "image/png", png, n, true, NULL);
}

/* the run's dashboard for the viewer page, which polls it: before the run has written its
   first log line, a line saying so (200: it is no error of the page's) */
static enum MHD_Result dashboard(struct MHD_Connection *c, const run_view *s)
{
    char *html;
    size_t n;
    if (!cs_report_html(s->dir, false, &html, &n)) return reply(c, 200, "text/html; charset=utf-8", html, n, true, NULL);
    char *f = NULL;
    size_t fn = 0;
    FILE *m = open_memstream(&f, &fn);
    if (!m) return MHD_NO;
    fputs("<!DOCTYPE html><html><body><p>no dashboard yet: ", m);
    cs_html_escape(m, cs_last_error());
    fputs("</p></body></html>", m);
    fclose(m);
    return reply(c, 200, "text/html; charset=utf-8", f, fn, true, NULL);
}

/* a run folder's resources (not a batch's) */
static enum MHD_Result run_resource(struct MHD_Connection *c, const run_view *s, const char *url, const char *cookie)
{
    if (!strcmp(url, "/")) return web_file(c, "viewer.html", cookie);
    if (!strcmp(url, "/viewer.js")) return web_file(c, "viewer.js", NULL);
    if (!strcmp(url, "/dashboard")) return dashboard(c, s);
    if (!strcmp(url, "/model.json")) return model_json(c, s);
    if (!strcmp(url, "/model.bin")) return model_bin(c, s);
    if (!strncmp(url, "/photo/", 7)) return photo(c, s, url + 7);
    return url[0] == '/' ? run_file(c, s, url + 1) : text(c, 404, "unknown resource\n");
}

/* the token from ?token= or the cookie; on a match by the query, a cookie to set */
static bool authorized(const cs_view_server *s, struct MHD_Connection *c, char *cookie, size_t n)
{
    *cookie = '\0';
    if (!s->token[0]) return true;
    const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    const char *k = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, "clsplat_token");
    if (q && !strcmp(q, s->token)) {
        snprintf(cookie, n, "clsplat_token=%s; HttpOnly; SameSite=Strict; Path=/", s->token);
        return true;
    }
    return k && !strcmp(k, s->token);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_n, void **state)
{
    (void)version, (void)upload;
    cs_view_server *s = cls;
    if (!*state) { /* the first call has the headers only: answer on the second */
        *state = (void *)1;
        return MHD_YES;
    }
    if (*upload_n) {
        *upload_n = 0; /* a body is read and dropped; the method is refused below */
        return MHD_YES;
    }
    if (strcmp(method, "GET") && strcmp(method, "HEAD")) return text(c, 405, "read-only: GET and HEAD only\n");
    char cookie[128], job[256];
    if (!authorized(s, c, cookie, sizeof cookie)) return text(c, 403, "an access token is required (see clsplat's output)\n");
    const char *set = cookie[0] ? cookie : NULL;
    if (!s->batch) return run_resource(c, &s->run, url, set);
    if (!strcmp(url, "/")) return page(c, s->dir, true, set);
    const char *rest;
    if (!batch_job(s, url, job, sizeof job, &rest)) return text(c, 404, "unknown resource\n");
    char p[1400];
    snprintf(p, sizeof p, "%s/%s", s->dir, job);
    if (!strcmp(rest, "/report.html")) return page(c, p, false, set);
    run_view *r = job_view(s, job);
    return r ? run_resource(c, r, rest, set) : text(c, 503, "too many jobs open in this server\n");
}

static int make_token(char out[33])
{
    unsigned char b[16];
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(b, 1, sizeof b, f) : 0;
    if (f) fclose(f);
    if (got != sizeof b) return cs_fail("cannot read /dev/urandom for the access token");
    for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static void release(cs_view_server *s)
{
    run_view_free(&s->run);
    for (int i = 0; i < s->njobs; i++) run_view_free(s->jobs[i]), free(s->jobs[i]);
    free(s);
}

int cs_view_start(const cs_view_opts *o, cs_view_server **out)
{
    *out = NULL;
    if (o->port < 0 || o->port > 65535) return cs_fail("view: port %d is not 0..65535", o->port);
    cs_view_server *s = calloc(1, sizeof *s);
    if (!s) return cs_fail("out of host memory");
    snprintf(s->dir, sizeof s->dir, "%s", o->dir);
    snprintf(s->host, sizeof s->host, "%s", o->host && o->host[0] ? o->host : "127.0.0.1");
    s->batch = cs_report_is_batch(o->dir);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET, a.sin_port = htons((uint16_t)o->port);
    if (inet_pton(AF_INET, s->host, &a.sin_addr) != 1) {
        free(s);
        return cs_fail("view: --host %s is not an IPv4 address (e.g. 127.0.0.1, 0.0.0.0)", o->host);
    }
    if (!s->batch && run_view_open(&s->run, o->dir, "")) return free(s), -1;
    bool loopback = (ntohl(a.sin_addr.s_addr) >> 24) == 127;
    if (!loopback && make_token(s->token)) return release(s), -1;
    s->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL, 0, NULL, NULL, handle, s,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a, MHD_OPTION_CONNECTION_LIMIT, 32u,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, 8u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_END);
    if (!s->d) {
        int port = o->port;
        release(s);
        return cs_fail("view: cannot listen on %s:%d (in use, or not an address of this machine)", o->host && o->host[0] ? o->host : "127.0.0.1", port);
    }
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : o->port;
    *out = s;
    return 0;
}

int cs_view_port(const cs_view_server *s) { return s->port; }
const char *cs_view_token(const cs_view_server *s) { return s->token; }

void cs_view_announce(const cs_view_server *s)
{
    printf("view: http://%s:%d/%s%s (%s, read-only)\n", s->host, s->port, s->token[0] ? "?token=" : "", s->token,
           s->batch ? "the batch" : "the run");
}

void cs_view_stop(cs_view_server *s)
{
    if (!s) return;
    MHD_stop_daemon(s->d);
    release(s);
}

void cs_view_publish(cs_view_server *s, cs_splats *model, int iteration)
{
    if (s->run.model) cs_view_model_publish(s->run.model, model, iteration);
    else cs_splats_free(model);
}

bool cs_view_watched(cs_view_server *s)
{
    return s->run.model && cs_view_model_watched(s->run.model, CS_VIEW_WATCHED_SECONDS);
}
