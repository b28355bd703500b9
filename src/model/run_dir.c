/* run_dir: a training run's output folder. */
#define _XOPEN_SOURCE 700
#include "run_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

bool cs_run_dir_holds_run(const char *dir)
{
    static const char *const marks[] = {"config.json", "train_log.jsonl", "point_cloud", "checkpoints"};
    char p[4200];
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, marks[i]);
        if (access(p, F_OK) == 0) return true;
    }
    return false;
}

/* ---- removing what a run wrote ----------------------------------------------------------- */

/* true when REL is a path inside the folder: relative, no ".." part, not empty */
static bool stays_inside(const char *rel)
{
    if (!rel[0] || rel[0] == '/') return false;
    for (const char *p = rel; *p;) {
        size_t n = strcspn(p, "/");
        if (n == 2 && p[0] == '.' && p[1] == '.') return false;
        p += n;
        if (*p) p++;
    }
    return true;
}

static int cmp_longer_first(const void *a, const void *b)
{
    size_t x = strlen(*(char *const *)a), y = strlen(*(char *const *)b);
    return (x < y) - (x > y);
}

int cs_run_dir_remove_listed(const char *dir)
{
    char mpath[4200], p[8400];
    snprintf(mpath, sizeof mpath, "%s/%s", dir, CS_MANIFEST_NAME);
    char *text = cs_read_file(mpath, NULL);
    if (!text) return -1;
    size_t n_lines = 1;
    for (const char *c = text; *c; c++) n_lines += *c == '\n';
    char **dirs = malloc(n_lines * sizeof *dirs);
    if (!dirs) {
        free(text);
        return cs_fail("out of host memory (%s)", mpath);
    }
    size_t n_dirs = 0;
    int removed = 0, rc = 0;
    for (char *line = text, *nl; *line && !rc; line = nl ? nl + 1 : line + strlen(line)) {
        nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        size_t len = strlen(line);
        bool is_dir = len > 0 && line[len - 1] == '/';
        if (is_dir) line[len - 1] = '\0';
        if (!stays_inside(line)) continue;
        if (is_dir) {
            dirs[n_dirs++] = line;
            continue;
        }
        snprintf(p, sizeof p, "%s/%s", dir, line);
        struct stat st;
        if (lstat(p, &st) || !S_ISREG(st.st_mode)) continue; /* gone, or replaced by something else */
        if (unlink(p)) rc = cs_fail("--force: cannot remove %s: %s", p, strerror(errno));
        else removed++;
    }
    /* the folders clsplat made, deepest first, where nothing else is left in them */
    qsort(dirs, n_dirs, sizeof *dirs, cmp_longer_first);
    for (size_t i = 0; i < n_dirs && !rc; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, dirs[i]);
        rmdir(p);
    }
    free(dirs);
    free(text);
    if (!rc && unlink(mpath)) rc = cs_fail("--force: cannot remove %s: %s", mpath, strerror(errno));
    return rc ? -1 : removed;
}

int cs_run_dir_prepare(const char *dir, bool force)
{
    if (!cs_run_dir_holds_run(dir)) return 0;
    if (!force)
        return cs_fail("%s holds another run (config.json, train_log.jsonl, point_cloud/ or checkpoints/): pass "
                       "--force to replace it, --resume %s/checkpoints/chkpnt_N.bin to continue it, or -o another "
                       "folder",
                       dir, dir);
    char mpath[4200];
    snprintf(mpath, sizeof mpath, "%s/%s", dir, CS_MANIFEST_NAME);
    if (!cs_file_exists(mpath))
        return cs_fail("--force: %s holds a run but no %s listing what that run wrote (an older clsplat, or not "
                       "clsplat's), so nothing there is removed: remove its outputs yourself, or -o another folder",
                       dir, CS_MANIFEST_NAME);
    int n = cs_run_dir_remove_listed(dir);
    if (n < 0) return -1;
    printf("--force: removed the %d files the earlier run wrote in %s (and nothing else)\n", n, dir);
    return 0;
}

/* ---- apart from the data, and locked ---------------------------------------------------- */

/* true when folder A is B or lies inside B (both absolute, resolved) */
static bool inside(const char *a, const char *b)
{
    size_t n = strlen(b);
    if (n == 1 && b[0] == '/') return true;
    return !strncmp(a, b, n) && (a[n] == '\0' || a[n] == '/');
}

/* the resolved absolute form of PATH; for a folder not made yet, its nearest existing parent's
 * with the rest appended */
static int resolve(const char *path, char *out, size_t n)
{
    char tail[4200] = "", head[4200];
    snprintf(head, sizeof head, "%s", path);
    for (;;) {
        char r[PATH_MAX];
        if (realpath(head[0] ? head : ".", r)) {
            if (snprintf(out, n, "%s%s", strcmp(r, "/") ? r : "", tail) >= (int)n) return -1;
            if (!out[0]) snprintf(out, n, "/");
            return 0;
        }
        char *slash = strrchr(head, '/');
        char t[4200];
        snprintf(t, sizeof t, "/%s%s", slash ? slash + 1 : head, tail);
        snprintf(tail, sizeof tail, "%s", t);
        if (!slash) head[0] = '\0';
        else if (slash == head) snprintf(head, sizeof head, "/");
        else *slash = '\0';
    }
}

int cs_run_dir_check_apart(const char *out, const char *data, const char *flag)
{
    static const char *const marks[] = {"sparse", "images", "transforms_train.json", "transforms.json"};
    char o[4200], d[4200], p[4400];
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", out, marks[i]);
        if (access(p, F_OK) == 0)
            return cs_fail("%s %s holds a dataset (%s): outputs never go into a dataset folder; give another folder",
                           flag, out, marks[i]);
    }
    if (!data || !data[0] || resolve(out, o, sizeof o) || resolve(data, d, sizeof d)) return 0;
    if (inside(o, d))
        return cs_fail("%s %s is %s the dataset folder %s: outputs never go into a dataset folder; give another folder",
                       flag, out, strcmp(o, d) ? "inside" : "the same folder as", data);
    if (inside(d, o))
        return cs_fail("%s %s holds the dataset folder %s: outputs never go around a dataset; give another folder",
                       flag, out, data);
    return 0;
}

int cs_run_dir_lock(const char *dir)
{
    char p[4200], text[32] = "";
    snprintf(p, sizeof p, "%s/.clsplat-lock", dir);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return cs_fail("%s: cannot open the run's lock: %s", p, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        ssize_t got = pread(fd, text, sizeof text - 1, 0);
        text[got > 0 ? got : 0] = '\0';
        close(fd);
        long pid = strtol(text, NULL, 10);
        return cs_fail("%s is in use by a run still training (pid %ld holds %s): wait for it, stop it, or -o another "
                       "folder (--force never replaces a live run)",
                       dir, pid, p);
    }
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
        close(fd);
        return cs_fail("%s: cannot write the run's lock: %s", p, strerror(errno));
    }
    return 0; /* held until the process ends: the descriptor is never closed */
}

int cs_run_dir_default(const char *parent, char *out, size_t n)
{
    time_t now = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    if (snprintf(out, n, "%s/%s", parent, stamp) >= (int)n) return cs_fail("output folder name too long");
    /* two runs started in the same second get -2, -3, ... */
    for (int k = 2; access(out, F_OK) == 0 && k < 1000; k++) snprintf(out, n, "%s/%s-%d", parent, stamp, k);
    return 0;
}

int cs_run_dir_of_checkpoint(const char *ckpt, char *out, size_t n)
{
    const char *slash = strrchr(ckpt, '/');
    size_t len = slash ? (size_t)(slash - ckpt) : 0;
    const char *tail = "checkpoints";
    size_t tl = strlen(tail);
    if (!slash || len < tl || strncmp(ckpt + len - tl, tail, tl) || (len > tl && ckpt[len - tl - 1] != '/'))
        return cs_fail("--resume %s: expected OUT/checkpoints/chkpnt_N.bin", ckpt);
    size_t run = len > tl ? len - tl - 1 : 0;
    if (run + 1 > n) return cs_fail("--resume %s: path too long", ckpt);
    if (run == 0) snprintf(out, n, ".");
    else snprintf(out, n, "%.*s", (int)run, ckpt);
    return 0;
}

/* The largest N of the entries of FOLDER named PREFIX<N>SUFFIX for which the path FMT (with
 * FOLDER and N) exists; -1 when none. */
static int latest_of(const char *folder, const char *prefix, const char *suffix, const char *fmt, char *out, size_t n)
{
    DIR *d = opendir(folder);
    if (!d) return -1;
    int best = -1, it, len;
    size_t pl = strlen(prefix);
    char p[4400];
    struct dirent *e;
    while ((e = readdir(d))) {
        len = 0;
        if (strncmp(e->d_name, prefix, pl) || sscanf(e->d_name + pl, "%d%n", &it, &len) != 1 || it <= best ||
            strcmp(e->d_name + pl + len, suffix))
            continue;
        snprintf(p, sizeof p, fmt, folder, it);
        if (cs_file_exists(p)) best = it, snprintf(out, n, "%s", p);
    }
    closedir(d);
    return best;
}

int cs_run_dir_latest_ply(const char *dir, char *out, size_t n, int *iteration)
{
    char folder[4200], ckpt[4400];
    snprintf(folder, sizeof folder, "%s/point_cloud", dir);
    /* only a folder whose PLY was completed (renamed into place) counts */
    *iteration = cs_dir_exists(folder) ? latest_of(folder, "iteration_", "", "%s/iteration_%d/point_cloud.ply", out, n) : -1;
    if (*iteration >= 0) return 0;
    /* an interrupted run: checkpoints and no PLY yet */
    if (cs_run_dir_latest_checkpoint(dir, ckpt, sizeof ckpt) >= 0)
        return cs_fail("%s holds no saved PLY yet, only checkpoints (the run was stopped before its first save): "
                       "'clsplat export --ply %s --format ply' writes one, 'clsplat train --resume %s' finishes the run",
                       dir, ckpt, ckpt);
    if (!cs_dir_exists(folder)) return cs_fail("%s: no point_cloud folder (is it a clsplat output folder?)", dir);
    return cs_fail("%s: no saved iteration with a complete point_cloud.ply", folder);
}

int cs_run_dir_latest_checkpoint(const char *dir, char *out, size_t n)
{
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/checkpoints", dir);
    return latest_of(folder, "chkpnt_", ".bin", "%s/chkpnt_%d.bin", out, n);
}

int cs_run_dir_remove_checkpoints_before(const char *dir, int iteration, const int *keep, int n_keep)
{
    char folder[4200], p[4400];
    snprintf(folder, sizeof folder, "%s/checkpoints", dir);
    DIR *d = opendir(folder);
    if (!d) return cs_fail("%s: cannot list the checkpoints", folder);
    struct dirent *e;
    int it, len, rc = 0;
    while (!rc && (e = readdir(d))) {
        len = 0; /* a checkpoint, or the views' exposures beside it (optim.exposure) */
        if (sscanf(e->d_name, "chkpnt_%d%n", &it, &len) != 1 || !len || it >= iteration ||
            (strcmp(e->d_name + len, ".bin") && strcmp(e->d_name + len, ".exposure.json")))
            continue;
        int kept = 0;
        for (int i = 0; i < n_keep; i++) kept |= keep[i] == it;
        snprintf(p, sizeof p, "%s/%s", folder, e->d_name);
        if (!kept && remove(p)) rc = cs_fail("removing the older checkpoint %s failed", p);
    }
    closedir(d);
    return rc;
}
