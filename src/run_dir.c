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
