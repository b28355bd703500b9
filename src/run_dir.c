/* run_dir: a training run's output folder. */
#define _XOPEN_SOURCE 700
#include "run_dir.h"

#include <dirent.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* what a run writes at the top of its folder: files, then folders */
static const char *const RUN_FILES[] = {"config.json", "cameras.json", "input.ply", "metrics.json",
                                        "train_log.jsonl", "memory.json", "cfg_args", "result.json"};
static const char *const RUN_DIRS[] = {"point_cloud", "checkpoints", "renders", "test", "train"};

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

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path) ? -1 : 0;
}

/* event files of earlier runs: events.out.tfevents.* */
static int remove_event_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    struct dirent *e;
    char p[4200];
    int rc = 0;
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, "events.out.tfevents.", 20)) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            if (remove(p)) rc = cs_fail("--force: cannot remove %s", p);
        }
    closedir(d);
    return rc;
}

int cs_run_dir_prepare(const char *dir, bool force)
{
    if (!cs_run_dir_holds_run(dir)) return 0;
    if (!force)
        return cs_fail("%s holds another run (config.json, train_log.jsonl, point_cloud/ or checkpoints/): pass "
                       "--force to replace it, --resume %s/checkpoints/chkpnt_N.bin to continue it, or -o another "
                       "folder",
                       dir, dir);
    char p[4200];
    for (size_t i = 0; i < sizeof RUN_FILES / sizeof RUN_FILES[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, RUN_FILES[i]);
        if (access(p, F_OK) == 0 && remove(p)) return cs_fail("--force: cannot remove %s", p);
    }
    for (size_t i = 0; i < sizeof RUN_DIRS / sizeof RUN_DIRS[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, RUN_DIRS[i]);
        if (access(p, F_OK) == 0 && nftw(p, remove_entry, 16, FTW_DEPTH | FTW_PHYS))
            return cs_fail("--force: cannot remove %s", p);
    }
    printf("--force: removed the earlier run's outputs in %s\n", dir);
    return remove_event_files(dir);
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
    char folder[4200];
    snprintf(folder, sizeof folder, "%s/point_cloud", dir);
    if (!cs_dir_exists(folder)) return cs_fail("%s: no point_cloud folder (is it a clsplat output folder?)", dir);
    /* only a folder whose PLY was completed (renamed into place) counts */
    *iteration = latest_of(folder, "iteration_", "", "%s/iteration_%d/point_cloud.ply", out, n);
    return *iteration < 0 ? cs_fail("%s: no saved iteration with a complete point_cloud.ply", folder) : 0;
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
        len = 0;
        if (sscanf(e->d_name, "chkpnt_%d.bin%n", &it, &len) != 1 || !len || e->d_name[len] || it >= iteration) continue;
        int kept = 0;
        for (int i = 0; i < n_keep; i++) kept |= keep[i] == it;
        snprintf(p, sizeof p, "%s/%s", folder, e->d_name);
        if (!kept && remove(p)) rc = cs_fail("removing the older checkpoint %s failed", p);
    }
    closedir(d);
    return rc;
}
