/* joblist: the jobs of a batch, read and resolved (joblist.h). */
#include "joblist.h"

#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const LIST_KEYS[] = {"config", "set", "jobs", NULL};
static const char *const JOB_KEYS[] = {"name", "data", "config", "set", NULL};

/* what the message names: the file, and the job when there is one */
typedef struct {
    const char *file;
    char job[CS_JOB_NAME_MAX + 32];
} where;

static int unknown_keys(json_t *obj, const char *const *allowed, const where *w)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        int ok = 0;
        for (int i = 0; allowed[i]; i++) ok |= !strcmp(k, allowed[i]);
        if (!ok) {
            char list[128] = "";
            for (int i = 0; allowed[i]; i++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", allowed[i]);
            return cs_fail("%s%s: unknown key '%s' (allowed: %s)", w->file, w->job, k, list);
        }
    }
    return 0;
}

/* A path from the job list: relative ones are relative to BASE (the list's folder). */
static int list_path(const char *base, const char *p, char *out, size_t n)
{
    int r = p[0] == '/' || !base[0] ? snprintf(out, n, "%s", p) : snprintf(out, n, "%s/%s", base, p);
    return r < 0 || (size_t)r >= n ? cs_fail("path too long: %s", p) : 0;
}

/* A string member KEY of OBJ (NULL when absent); -1 when present but not a string. */
static int string_member(json_t *obj, const char *key, const char **out, const where *w)
{
    json_t *v = json_object_get(obj, key);
    *out = NULL;
    if (!v) return 0;
    if (!json_is_string(v) || !json_string_value(v)[0])
        return cs_fail("%s%s: '%s' must be a non-empty string", w->file, w->job, key);
    *out = json_string_value(v);
    return 0;
}

/* "set": an array of "key=value" strings; applies them to CFG. Notes explicit iteration keys. */
static int apply_sets(json_t *set, cs_config *cfg, const where *w, int *sets_iters, int *sets_cpu)
{
    if (!set) return 0;
    if (!json_is_array(set)) return cs_fail("%s%s: 'set' must be an array of \"key=value\" strings", w->file, w->job);
    char src[1200];
    snprintf(src, sizeof src, "%s%s: set", w->file, w->job);
    size_t i;
    json_t *v;
    json_array_foreach(set, i, v) {
        if (!json_is_string(v))
            return cs_fail("%s%s: set[%zu] must be a \"key=value\" string", w->file, w->job, i);
        const char *a = json_string_value(v);
        if (cs_config_set_from(cfg, a, src)) return -1;
        *sets_iters |= !strncmp(a, "optim.iterations=", 17);
        *sets_cpu |= !strncmp(a, "optim.iterations_on_cpu=", 24);
    }
    return 0;
}

/* true when a 'set' of the list or the job, or the command line's, assigns KEY */
static bool sets_key(json_t *list_set, json_t *job_set, const cs_job_sets *cli, const char *key)
{
    size_t n = strlen(key), i;
    json_t *sets[2] = {list_set, job_set}, *v;
    for (int s = 0; s < 2; s++)
        if (json_is_array(sets[s])) json_array_foreach(sets[s], i, v) {
                const char *a = json_string_value(v);
                if (a && !strncmp(a, key, n) && a[n] == '=') return true;
            }
    for (int k = 0; cli && k < cli->n; k++)
        if (!strncmp(cli->assign[k], key, n) && cli->assign[k][n] == '=') return true;
    return false;
}

/* A job folder name: letters, digits, '.', '_', '-', '+', not starting with '.'. */
static int check_name(const char *name, const where *w)
{
    size_t n = strlen(name);
    if (!n || n >= CS_JOB_NAME_MAX || name[0] == '.')
        return cs_fail("%s%s: job name '%s' must be 1-%d characters, not starting with '.'", w->file, w->job, name,
                       CS_JOB_NAME_MAX - 1);
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._-+", c)))
            return cs_fail("%s%s: job name '%s' may hold only letters, digits, '.', '_', '-' and '+' (it names a "
                           "folder)", w->file, w->job, name);
    }
    return 0;
}

/* the last component of a folder path, without trailing slashes */
static void base_name(const char *path, char *out, size_t n)
{
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') len--;
    size_t start = len;
    while (start > 0 && path[start - 1] != '/') start--;
    size_t k = len - start < n - 1 ? len - start : n - 1;
    memcpy(out, path + start, k);
    out[k] = '\0';
}

/* The job's settings in order (joblist.h) and its data folder, made absolute. */
static int resolve(cs_job *j, const char *base_cfg, const char *list_cfg, json_t *list_set, const char *job_cfg, json_t *job_set,
                   const char *data, const cs_job_sets *cli, const where *lw, const where *w)
{
    cs_config *c = &j->cfg;
    int iters = 0, cpu = 0;
    cs_config_defaults(c);
    c->output.checkpoint_interval = CS_BATCH_CHECKPOINT_INTERVAL;
    if (base_cfg && cs_config_load_file(c, base_cfg)) return cs_fail_prefix("%s%s", w->file, w->job);
    if (list_cfg && cs_config_load_file(c, list_cfg)) return cs_fail_prefix("%s%s", w->file, w->job);
    if (job_cfg && cs_config_load_file(c, job_cfg)) return cs_fail_prefix("%s%s", w->file, w->job);
    if (apply_sets(list_set, c, lw, &iters, &cpu) || apply_sets(job_set, c, w, &iters, &cpu)) return -1;
    for (int i = 0; cli && i < cli->n; i++) {
        if (cs_config_set_from(c, cli->assign[i], cli->from[i])) return cs_fail_prefix("%s", w->job + 2);
        iters |= !strncmp(cli->assign[i], "optim.iterations=", 17);
        cpu |= !strncmp(cli->assign[i], "optim.iterations_on_cpu=", 24);
    }
    if (iters) cs_config_explicit_iterations(c, cpu);
    static const char *const marks[] = {"eval.test_iterations", "output.save_iterations", "output.checkpoint_iterations"};
    for (int i = 0; i < 3; i++)
        if (sets_key(list_set, job_set, cli, marks[i]) && cs_config_explicit_marks(c, marks[i]))
            return cs_fail_prefix("%s%s", w->file, w->job);
    if (data) snprintf(c->data.path, sizeof c->data.path, "%s", data);
    if (!c->data.path[0]) return cs_fail("%s%s: no data folder (give \"data\")", w->file, w->job);
    char abs[PATH_MAX];
    if (!cs_dir_exists(c->data.path) || !realpath(c->data.path, abs))
        return cs_fail("%s%s: data folder %s does not exist", w->file, w->job, c->data.path);
    if (strlen(abs) >= sizeof c->data.path) return cs_fail("%s%s: data path too long", w->file, w->job);
    snprintf(c->data.path, sizeof c->data.path, "%s", abs);
    c->output.dir[0] = '\0';
    return 0;
}

static int add_job(cs_joblist *l, const char *name, const where *w)
{
    if (cs_joblist_find(l, name) >= 0) return cs_fail("%s%s: a job named '%s' is already in the list", w->file, w->job, name);
    cs_job *nj = realloc(l->jobs, sizeof *nj * (size_t)(l->n + 1));
    if (!nj) return cs_fail("out of host memory (job list)");
    l->jobs = nj;
    memset(&nj[l->n], 0, sizeof nj[l->n]);
    snprintf(nj[l->n].name, sizeof nj[l->n].name, "%s", name);
    l->n++;
    return 0;
}

/* jobs[i] of the list */
typedef struct {
    const char *folder;       /* the list's folder ("" for the working folder) */
    const char *base_cfg;     /* -c */
    const char *list_cfg;     /* the list's "config", resolved */
    json_t *list_set;
    const cs_job_sets *cli;
} list_ctx;

static int read_job(cs_joblist *l, json_t *o, size_t i, const list_ctx *x, const where *lw)
{
    where w = {lw->file, ""};
    snprintf(w.job, sizeof w.job, ": jobs[%zu]", i);
    if (!json_is_object(o)) return cs_fail("%s%s: must be an object {\"name\", \"data\", ...}", w.file, w.job);
    const char *name, *data, *cfg;
    char name_buf[CS_JOB_NAME_MAX], data_p[1024], cfg_p[1024];
    if (string_member(o, "name", &name, &w) || string_member(o, "data", &data, &w)) return -1;
    if (!name && !data) return cs_fail("%s%s: needs \"data\" (and a \"name\", else the folder's name)", w.file, w.job);
    if (!name) base_name(data, name_buf, sizeof name_buf), name = name_buf;
    snprintf(w.job, sizeof w.job, ": job '%.*s'", CS_JOB_NAME_MAX, name);
    if (unknown_keys(o, JOB_KEYS, &w) || string_member(o, "config", &cfg, &w)) return -1;
    if (check_name(name, &w) || (data && list_path(x->folder, data, data_p, sizeof data_p)) ||
        (cfg && list_path(x->folder, cfg, cfg_p, sizeof cfg_p)) || add_job(l, name, &w))
        return -1;
    return resolve(&l->jobs[l->n - 1], x->base_cfg, x->list_cfg, x->list_set, cfg ? cfg_p : NULL,
                   json_object_get(o, "set"), data ? data_p : NULL, x->cli, lw, &w);
}

static int read_list(json_t *root, const char *path, const char *base_cfg, const cs_job_sets *cli, cs_joblist *l)
{
    where lw = {path, ""};
    char base[1024], cfg_p[1024];
    const char *slash = strrchr(path, '/'); /* the list's folder: "" for the working folder */
    snprintf(base, sizeof base, "%.*s", slash ? (slash == path ? 1 : (int)(slash - path)) : 0, path);
    if (!json_is_object(root)) return cs_fail("%s: the top level must be an object with \"jobs\"", path);
    const char *cfg;
    if (unknown_keys(root, LIST_KEYS, &lw) || string_member(root, "config", &cfg, &lw)) return -1;
    if (cfg && list_path(base, cfg, cfg_p, sizeof cfg_p)) return -1;
    json_t *jobs = json_object_get(root, "jobs"), *set = json_object_get(root, "set");
    if (!json_is_array(jobs) || !json_array_size(jobs))
        return cs_fail("%s: \"jobs\" must be a non-empty array of {\"name\", \"data\", \"config\", \"set\"}", path);
    if (set && !json_is_array(set)) return cs_fail("%s: 'set' must be an array of \"key=value\" strings", path);
    size_t i;
    json_t *o;
    list_ctx x = {base, base_cfg, cfg ? cfg_p : NULL, set, cli};
    json_array_foreach(jobs, i, o) {
        if (read_job(l, o, i, &x, &lw)) return -1;
    }
    return 0;
}

int cs_joblist_load(const char *path, const char *base_config, const cs_job_sets *cli, cs_joblist *out)
{
    memset(out, 0, sizeof *out);
    json_error_t err;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!root) {
        if (!cs_file_exists(path)) return cs_fail("%s: no such job list", path);
        return cs_fail("%s: line %d column %d: %s", path, err.line, err.column, err.text);
    }
    int r = read_list(root, path, base_config, cli, out);
    json_decref(root);
    if (r) cs_joblist_free(out);
    return r;
}

int cs_joblist_from_dirs(const char *config, char *const *dirs, int n, const cs_job_sets *cli, cs_joblist *out)
{
    memset(out, 0, sizeof *out);
    where lw = {"clsplat batch", ""};
    if (n < 1) return cs_fail("clsplat batch: no scene folders given");
    for (int i = 0; i < n; i++) {
        char name[CS_JOB_NAME_MAX];
        base_name(dirs[i], name, sizeof name);
        where w = {"clsplat batch", ""};
        snprintf(w.job, sizeof w.job, ": scene %s", dirs[i]);
        if (check_name(name, &w) || add_job(out, name, &w) ||
            resolve(&out->jobs[out->n - 1], config, NULL, NULL, NULL, NULL, dirs[i], cli, &lw, &w)) {
            cs_joblist_free(out);
            return -1;
        }
    }
    return 0;
}

int cs_joblist_find(const cs_joblist *l, const char *name)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->jobs[i].name, name)) return i;
    return -1;
}

void cs_joblist_free(cs_joblist *l)
{
    free(l->jobs);
    l->jobs = NULL;
    l->n = 0;
}
