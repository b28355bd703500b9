/* util: error messages, atomic file output, hashing, small file helpers. */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static _Thread_local char g_errmsg[4096];

int cs_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_errmsg, sizeof g_errmsg, fmt, ap);
    va_end(ap);
    return -1;
}

int cs_fail_prefix(const char *fmt, ...)
{
    char old[sizeof g_errmsg];
    char pre[1024];
    memcpy(old, g_errmsg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pre, sizeof pre, fmt, ap);
    va_end(ap);
    snprintf(g_errmsg, sizeof g_errmsg, "%s: %s", pre, old);
    return -1;
}

const char *cs_last_error(void) { return g_errmsg[0] ? g_errmsg : "unknown error"; }

/* ---- atomic output ------------------------------------------------------------------ */

int cs_atomic_open(cs_atomic_file *af, const char *path)
{
    memset(af, 0, sizeof *af);
    if (strlen(path) >= sizeof af->path) return cs_fail("output path too long: %s", path);
    strcpy(af->path, path);
    snprintf(af->tmp, sizeof af->tmp, "%s.tmp.%ld", path, (long)getpid());
    af->f = fopen(af->tmp, "wb");
    if (!af->f) return cs_fail("cannot create %s: %s", af->tmp, strerror(errno));
    cs_outputs_note(af->tmp, false); /* so that a later run may remove it if this one is killed */
    return 0;
}

int cs_atomic_commit(cs_atomic_file *af)
{
    if (!af->f) return cs_fail("cs_atomic_commit: %s is not open", af->path);
    int bad = ferror(af->f);
    if (fflush(af->f) != 0) bad = 1;
    if (!bad && fsync(fileno(af->f)) != 0) bad = 1;
    int err = errno;
    if (fclose(af->f) != 0) bad = 1;
    af->f = NULL;
    if (bad) {
        unlink(af->tmp);
        return cs_fail("writing %s failed: %s", af->path, strerror(err ? err : EIO));
    }
    cs_fault_point(af->path); /* tests: a kill -9 between the data and the rename */
    if (rename(af->tmp, af->path) != 0) {
        err = errno;
        unlink(af->tmp);
        return cs_fail("renaming %s to %s failed: %s", af->tmp, af->path, strerror(err));
    }
    cs_outputs_note(af->path, false);
    return 0;
}

void cs_atomic_abort(cs_atomic_file *af)
{
    if (af->f) fclose(af->f);
    af->f = NULL;
    if (af->tmp[0]) unlink(af->tmp);
}

int cs_write_file_atomic(const char *path, const void *data, size_t n)
{
    cs_atomic_file af;
    if (cs_atomic_open(&af, path)) return -1;
    if (n && fwrite(data, 1, n, af.f) != n) {
        cs_atomic_abort(&af);
        return cs_fail("writing %s failed: %s", path, strerror(errno));
    }
    return cs_atomic_commit(&af);
}

/* ---- output manifests ----------------------------------------------------------------- */

#define MAX_TRACKED 8
typedef struct {
    char dir[1024];      /* as given, without trailing slashes or leading "./" */
    uint64_t *seen;      /* hashes of the listed paths */
    size_t n_seen, cap_seen;
} tracked_dir;
static tracked_dir g_tracked[MAX_TRACKED];
static int g_n_tracked;
static pthread_mutex_t g_track_mu = PTHREAD_MUTEX_INITIALIZER;

/* PATH without leading "./" and without repeated or trailing slashes, into OUT */
static void path_norm(const char *path, char *out, size_t n)
{
    while (path[0] == '.' && path[1] == '/') path += 2;
    size_t k = 0;
    for (const char *p = path; *p && k + 1 < n; p++) {
        if (*p == '/' && k > 0 && out[k - 1] == '/') continue;
        if (*p == '/' && p[1] == '.' && p[2] == '/') { p++; continue; }
        out[k++] = *p;
    }
    while (k > 1 && out[k - 1] == '/') k--;
    out[k] = '\0';
}

static int seen_add(tracked_dir *t, uint64_t h)
{
    for (size_t i = 0; i < t->n_seen; i++)
        if (t->seen[i] == h) return 0;
    if (t->n_seen == t->cap_seen) {
        size_t cap = t->cap_seen ? t->cap_seen * 2 : 64;
        uint64_t *ns = realloc(t->seen, cap * sizeof *ns);
        if (!ns) return 1; /* listed again rather than lost */
        t->seen = ns, t->cap_seen = cap;
    }
    t->seen[t->n_seen++] = h;
    return 1;
}

int cs_outputs_track(const char *dir)
{
    char d[1024], mpath[1200];
    path_norm(dir, d, sizeof d);
    if (strlen(d) + sizeof CS_MANIFEST_NAME + 2 > sizeof mpath) return cs_fail("output folder name too long: %s", dir);
    pthread_mutex_lock(&g_track_mu);
    int rc = 0;
    for (int i = 0; i < g_n_tracked; i++)
        if (!strcmp(g_tracked[i].dir, d)) goto out;
    if (g_n_tracked == MAX_TRACKED) {
        rc = cs_fail("more than %d output folders at once", MAX_TRACKED);
        goto out;
    }
    tracked_dir *t = &g_tracked[g_n_tracked++];
    memset(t, 0, sizeof *t);
    snprintf(t->dir, sizeof t->dir, "%s", d);
    /* the paths an earlier process of this run (before a resume) listed are not listed twice */
    snprintf(mpath, sizeof mpath, "%s/%s", d, CS_MANIFEST_NAME);
    char *text = cs_file_exists(mpath) ? cs_read_file(mpath, NULL) : NULL;
    for (char *line = text, *nl; line && *line; line = nl + 1) {
        nl = strchr(line, '\n');
        if (!nl) break;
        seen_add(t, cs_hash64(line, (size_t)(nl - line), CS_HASH_SEED));
    }
    free(text);
out:
    pthread_mutex_unlock(&g_track_mu);
    return rc;
}

void cs_outputs_untrack(const char *dir)
{
    char d[1024];
    path_norm(dir, d, sizeof d);
    pthread_mutex_lock(&g_track_mu);
    for (int i = 0; i < g_n_tracked; i++)
        if (!strcmp(g_tracked[i].dir, d)) {
            free(g_tracked[i].seen);
            g_tracked[i] = g_tracked[--g_n_tracked];
            break;
        }
    pthread_mutex_unlock(&g_track_mu);
}

/* appends REL (with a '/' when IS_DIR) to T's manifest, once */
static void manifest_append(tracked_dir *t, const char *rel, bool is_dir)
{
    char line[4200], mpath[1200];
    int n = snprintf(line, sizeof line, "%s%s\n", rel, is_dir ? "/" : "");
    if (n <= 1 || n >= (int)sizeof line || strcmp(rel, CS_MANIFEST_NAME) == 0) return;
    if (!seen_add(t, cs_hash64(line, (size_t)n - 1, CS_HASH_SEED))) return;
    snprintf(mpath, sizeof mpath, "%s/%s", t->dir, CS_MANIFEST_NAME);
    int fd = open(mpath, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return;
    /* one write of one line: appends from several threads or processes do not interleave */
    ssize_t put = write(fd, line, (size_t)n);
    (void)put; /* a file left off the list is only kept by a later cleanup, never lost */
    close(fd);
}

void cs_outputs_note(const char *path, bool is_dir)
{
    char p[4200];
    path_norm(path, p, sizeof p);
    pthread_mutex_lock(&g_track_mu);
    for (int i = 0; i < g_n_tracked; i++) {
        tracked_dir *t = &g_tracked[i];
        size_t dl = strlen(t->dir);
        if (!strncmp(p, t->dir, dl) && p[dl] == '/' && p[dl + 1]) {
            manifest_append(t, p + dl + 1, is_dir);
            break;
        }
    }
    pthread_mutex_unlock(&g_track_mu);
}

/* ---- files and paths ---------------------------------------------------------------- */

int cs_mkdirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0) return 0;
    if (n >= sizeof buf) return cs_fail("path too long: %s", path);
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0755) == 0) cs_outputs_note(buf, true);
            else if (errno != EEXIST) return cs_fail("cannot create directory %s: %s", buf, strerror(errno));
            buf[i] = c;
        }
    }
    if (!cs_dir_exists(path)) return cs_fail("%s exists and is not a directory", path);
    return 0;
}

char *cs_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        cs_fail("cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        cs_fail("out of host memory reading %s", path);
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            char *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                cs_fail("out of host memory reading %s", path);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        cs_fail("error reading %s", path);
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

int cs_file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int cs_dir_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int cs_path_join(char *out, size_t n, const char *a, const char *b)
{
    int w;
    if (!a || !a[0] || b[0] == '/')
        w = snprintf(out, n, "%s", b);
    else
        w = snprintf(out, n, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b);
    if (w < 0 || (size_t)w >= n) return cs_fail("path too long: %s/%s", a, b);
    return 0;
}

size_t cs_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[128];
    if (lb >= 127) return 1000;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (a[i - 1] != b[j - 1]);
            size_t m = row[j] + 1 < row[j - 1] + 1 ? row[j] + 1 : row[j - 1] + 1;
            row[j] = m < sub ? m : sub;
            prev = cur;
        }
    }
    return row[lb];
}

/* ---- hashing, time, random ---------------------------------------------------------- */

uint64_t cs_hash64(const void *data, size_t n, uint64_t seed)
{
    const unsigned char *p = data;
    uint64_t h = seed;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

double cs_psnr(double mse)
{
    double p = mse > 0 ? 10.0 * log10(1.0 / mse) : CS_PSNR_MAX;
    return p < CS_PSNR_MAX ? p : CS_PSNR_MAX;
}

double cs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void cs_bytes_append(cs_bytes *b, const void *p, size_t n)
{
    if (b->oom) return;
    if (b->len + n > b->cap) {
        size_t cap = (b->len + n) * 2 + 64;
        uint8_t *nb = realloc(b->buf, cap);
        if (!nb) {
            b->oom = 1;
            return;
        }
        b->buf = nb, b->cap = cap;
    }
    memcpy(b->buf + b->len, p, n);
    b->len += n;
}

void cs_bytes_free(cs_bytes *b)
{
    free(b->buf);
    memset(b, 0, sizeof *b);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cs_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return v[n / 2];
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

void cs_sort_floats(float *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_float);
}

float cs_select_desc(float *v, size_t n, size_t k)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)n - 1, at = (ptrdiff_t)k; /* v[k] lies in [lo, hi] */
    while (lo < hi) {
        /* the median of three as the pivot, then a three-way split: above, equal, below */
        float a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi];
        float p = a > b ? (b > c ? b : a > c ? c : a) : (a > c ? a : b > c ? c : b);
        ptrdiff_t gt = lo, i = lo, lt = hi; /* [lo, gt) > p, [gt, i) == p, (lt, hi] < p */
        while (i <= lt) {
            float x = v[i];
            if (x > p) v[i] = v[gt], v[gt++] = x, i++;
            else if (x < p) v[i] = v[lt], v[lt--] = x;
            else i++;
        }
        if (at < gt) hi = gt - 1;
        else if (at > lt) lo = lt + 1;
        else return p; /* [gt, lt] all equal p, the pivot, so the run is never empty */
    }
    return v[at];
}

double cs_wall_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int cs_nearest_insert(double *dist, int *idx, int n, int k, double d, int j)
{
    int at;
    if (n < k) at = n++;
    else if (k <= 0 || d >= dist[k - 1]) return n;
    else at = k - 1;
    while (at > 0 && dist[at - 1] > d) dist[at] = dist[at - 1], idx[at] = idx[at - 1], at--;
    dist[at] = d, idx[at] = j;
    return n;
}

/* Must match cl/common.h hash_u32 so host and device draw the same streams. */
uint32_t cs_hash_u32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

float cs_rand_uniform(uint64_t seed, uint64_t counter)
{
    uint32_t h = cs_hash_u32((uint32_t)seed ^ cs_hash_u32((uint32_t)(seed >> 32) + 0x9e3779b9u));
    h = cs_hash_u32(h ^ (uint32_t)counter);
    h = cs_hash_u32(h ^ (uint32_t)(counter >> 32) ^ 0x85ebca6bu);
    return (h >> 8) * (1.0f / 16777216.0f);
}

/* ---- stale temporary files ------------------------------------------------------------- */

/* The pid of a temporary name "<file>.tmp.<pid>", or 0 when NAME is not one. */
static long temp_pid(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    if (!t) return 0;
    char *end;
    long pid = strtol(t + 5, &end, 10);
    return *end == '\0' && pid > 0 ? pid : 0;
}

/* the hashes of the lines of DIR's manifest (NULL, 0 when it has none) */
static uint64_t *listed_hashes(const char *dir, size_t *n)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", dir, CS_MANIFEST_NAME);
    *n = 0;
    char *text = cs_file_exists(p) ? cs_read_file(p, NULL) : NULL;
    size_t lines = 0;
    for (const char *c = text; c && *c; c++) lines += *c == '\n';
    uint64_t *h = text && lines ? malloc(lines * sizeof *h) : NULL;
    for (char *line = text, *nl; h && line && (nl = strchr(line, '\n')); line = nl + 1)
        h[(*n)++] = cs_hash64(line, (size_t)(nl - line), CS_HASH_SEED);
    free(text);
    return h;
}

static bool is_listed(const uint64_t *h, size_t n, const char *rel)
{
    uint64_t x = cs_hash64(rel, strlen(rel), CS_HASH_SEED);
    for (size_t i = 0; i < n; i++)
        if (h[i] == x) return true;
    return false;
}

/* REL: the path below the tracked folder ("" at its top) */
static int remove_stale_in(const char *dir, const char *rel, const uint64_t *listed, size_t n_listed, int depth)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int removed = 0;
    struct dirent *e;
    char p[4200], r[4200];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        snprintf(r, sizeof r, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        long pid = temp_pid(e->d_name);
        /* a writer that is gone (no such process) left it, and a run's list says clsplat made
           it; a live writer may still rename its own */
        if (pid && pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH &&
            is_listed(listed, n_listed, r) && remove(p) == 0)
            removed++;
        else if (!pid && depth > 0 && cs_dir_exists(p))
            removed += remove_stale_in(p, r, listed, n_listed, depth - 1);
    }
    closedir(d);
    return removed;
}

int cs_remove_stale_temps(const char *dir)
{
    size_t n;
    uint64_t *listed = listed_hashes(dir, &n);
    int removed = n ? remove_stale_in(dir, "", listed, n, 3) : 0;
    free(listed);
    return removed;
}

/* ---- fault injection (tests) ------------------------------------------------------------- */

bool cs_fault_enabled(void)
{
    const char *spec = getenv("CLSPLAT_FAULT");
    return spec && *spec;
}

void cs_fault_point(const char *where)
{
    const char *spec = getenv("CLSPLAT_FAULT");
    if (!spec || !*spec) return;
    const char *colon = strchr(spec, ':');
    if (!colon || !strstr(where, colon + 1)) return;
    size_t n = (size_t)(colon - spec);
    if (!strncmp(spec, "sleep", n)) { /* a slow phase: 3 s */
        struct timespec ts = {3, 0};
        nanosleep(&ts, NULL);
        return;
    }
    int sig = !strncmp(spec, "kill", n) ? SIGKILL : !strncmp(spec, "term", n) ? SIGTERM : !strncmp(spec, "int", n) ? SIGINT : 0;
    if (sig) raise(sig);
}

size_t cs_host_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) break;
    fclose(f);
    return (size_t)kb * 1024;
}
