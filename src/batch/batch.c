/* batch: many training runs as child processes on the host's devices (batch.h). */
#include "batch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "batch_pack.h"
#include "batch_progress.h"
#include "batch_report.h"
#include "run_report.h"
#include "cl_runtime.h"
#include "density.h"
#include "job_dir.h"
#include "kernels.h"
#include "memplan.h"
#include "run_dir.h"
#include "scene.h"
#include "schedule.h"
#include "util.h"

#define MAX_DEVICES 64

typedef struct {
    const cs_job *job;
    char dir[1200];
    cs_job_state st;
    bool active;          /* part of this run (every job, or the --task one) */
    pid_t pid;            /* running: the child */
    int dev, lock_fd;     /* running: its device, its held ROOT/<name>/.lock */
    size_t reserve, plan_bytes;
    double cost;          /* estimated length: iterations x pixels per view */
    double t_start;
} job_run;

typedef struct {
    const cs_batch_opts *o;
    cs_joblist list;
    job_run *runs;
    cs_pack_device devs[MAX_DEVICES];
    int n_devs;
    cs_batch_progress prog;
    double t0, last_draw;
    bool stopping;
} batch;

/* ---- devices ----------------------------------------------------------------------------- */

/* True when ID is one of the comma-separated ids of SPEC. */
static bool id_listed(const char *spec, const char *id, size_t len)
{
    for (const char *s = spec; *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ','))
        if (len == strcspn(s, ",") && !strncmp(s, id, len)) return true;
    return false;
}

/* "all": every GPU, else the first CPU; or the listed "P:D" ids. */
static int open_devices(batch *b)
{
    cs_cl_device_desc *all;
    int n;
    if (cs_cl_devices(&all, &n)) return -1;
    const char *spec = b->o->devices && strcmp(b->o->devices, "all") ? b->o->devices : NULL;
    int any_gpu = 0;
    for (int i = 0; i < n; i++) any_gpu |= all[i].is_gpu;
    for (int i = 0; i < n && b->n_devs < MAX_DEVICES; i++) {
        char id[24];
        snprintf(id, sizeof id, "%d:%d", all[i].p, all[i].d);
        int want = spec ? id_listed(spec, id, strlen(id)) : any_gpu ? all[i].is_gpu : all[i].is_cpu && b->n_devs == 0;
        if (!want) continue;
        cs_pack_device *d = &b->devs[b->n_devs++];
        memset(d, 0, sizeof *d);
        snprintf(d->id, sizeof d->id, "%s", id);
        snprintf(d->name, sizeof d->name, "%s", all[i].name);
        d->is_cpu = !all[i].is_gpu && all[i].is_cpu;
        d->mem = all[i].mem;
        d->max_jobs = b->o->per_device;
    }
    free(all);
    if (!b->n_devs)
        return cs_fail(spec ? "--devices %s: no such device (clsplat devices lists them)" : "no usable OpenCL device%s",
                       spec ? spec : "");
    if (spec) { /* every listed id must exist */
        for (const char *s = spec; *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
            int found = 0;
            for (int i = 0; i < b->n_devs; i++) found |= id_listed(b->devs[i].id, s, strcspn(s, ","));
            if (!found) return cs_fail("--devices %s: '%.*s' is not a device (clsplat devices lists them)", spec,
                                       (int)strcspn(s, ","), s);
        }
    }
    return 0;
}

/* ---- jobs -------------------------------------------------------------------------------- */

/* The job's iterations on device D (the CPU count on a CPU, steps_scale applied). */
static int job_iterations(const cs_job *j, const cs_pack_device *d)
{
    cs_config c = j->cfg;
    cs_config_scale_steps(&c);
    return cs_schedule_iterations(&c, d->is_cpu);
}

/* Reads the job's scene (cameras, not images) for its estimated cost (iterations x pixels of
 * a training view: jobs start longest first, so a long one does not start last) and, with
 * memory.max_gaussians, its planned bytes at the cap. A scene that cannot be read costs 0: its
 * child reports why. */
static void survey_job(job_run *r, const cs_pack_device *d)
{
    const cs_job *j = r->job;
    r->cost = 0, r->plan_bytes = 0;
    cs_scene sc;
    if (cs_scene_load(&j->cfg.data, &sc)) return;
    cs_split sp;
    if (sc.n_cams > 0 && cs_split_of(&sc, &sp) == 0) {
        const cs_camera *c = &sc.cams[sp.n_train ? sp.train[0] : 0];
        r->cost = (double)job_iterations(j, d) * c->width * c->height;
        /* a strategy that allocates a fixed cap up front (density.h) has a known peak */
        int fixed_cap = cs_density_ops_of(j->cfg.densify.strategy)->fixed_cap && j->cfg.densify.cap_max > 0;
        if (j->cfg.memory.max_gaussians > 0 || fixed_cap) {
            cs_kernel_opts ko;
            cs_kernel_opts_of(&j->cfg, &ko);
            ko.cpu = d->is_cpu;
            cs_mem_plan p;
            cs_mem_plan_make(&j->cfg, &ko, d->mem, &sc, &sp, &p);
            r->plan_bytes = p.cap ? p.peak_bytes : cs_mem_plan_bytes_at(&p, p.max_gaussians);
        }
        cs_split_free(&sp);
    }
    cs_scene_free(&sc);
}

/* True when another process holds DIR/.lock (a job running elsewhere). */
static bool locked_elsewhere(const char *dir)
{
    char p[1300];
    snprintf(p, sizeof p, "%s/.lock", dir);
    int fd = open(p, O_RDWR | O_CLOEXEC);
    if (fd < 0) return false;
    bool busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    close(fd);
    return busy;
}

/* The batch that took DIR/.lock (its pid is written there); 0 when unknown. */
static long lock_owner(const char *dir)
{
    char p[1300], text[32] = "";
    snprintf(p, sizeof p, "%s/.lock", dir);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    text[got > 0 ? got : 0] = '\0';
    return strtol(text, NULL, 10);
}

/* How long a re-run waits for the run of a killed batch to stop (it saves a checkpoint on the
   SIGTERM its batch's death sends it). */
#define ORPHAN_WAIT_S 300

/* True when DIR's lock is held by the run of a batch that is gone (killed): it was sent
   SIGTERM when its batch died and is saving its checkpoint. Waits until it lets go (true) or
   ORPHAN_WAIT_S pass (false: still held). */
static bool wait_for_orphan(batch *b, const job_run *r)
{
    long owner = lock_owner(r->dir);
    if (owner <= 0 || owner == (long)getpid() || kill((pid_t)owner, 0) == 0 || errno != ESRCH) return false;
    cs_batch_progress_event(&b->prog, "%s: its batch (pid %ld) is gone and its run (pid %ld) is stopping; waiting for "
                            "it (at most %d s)", r->job->name, owner, r->st.pid, ORPHAN_WAIT_S);
    for (double t0 = cs_now(); cs_now() - t0 < ORPHAN_WAIT_S;) {
        if (!locked_elsewhere(r->dir)) return true;
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return false;
}

static int load_jobs(batch *b)
{
    const cs_batch_opts *o = b->o;
    if (o->jobs_file ? cs_joblist_load(o->jobs_file, o->config, &o->sets, &b->list)
                     : cs_joblist_from_dirs(o->config, (char *const *)o->scenes, o->n_scenes, &o->sets, &b->list))
        return -1;
    if (o->task >= b->list.n)
        return cs_fail("--task %d: the list has %d jobs (0 to %d)", o->task, b->list.n, b->list.n - 1);
    b->runs = calloc((size_t)b->list.n, sizeof *b->runs);
    if (!b->runs) return cs_fail("out of host memory (jobs)");
    for (int i = 0; i < b->list.n; i++) {
        job_run *r = &b->runs[i];
        r->job = &b->list.jobs[i];
        r->pid = 0, r->lock_fd = -1, r->dev = -1;
        if (cs_path_join(r->dir, sizeof r->dir, o->root, r->job->name)) return cs_fail("%s: path too long", o->root);
        if (cs_run_dir_check_apart(r->dir, r->job->cfg.data.path, "batch: job folder")) return -1;
        cs_job_dir_read(r->dir, &r->st);
        r->active = o->task < 0 || o->task == i;
    }
    return 0;
}

/* ---- one job ----------------------------------------------------------------------------- */

static int job_event_write(batch *b, job_run *r)
{
    if (cs_job_dir_write(r->dir, r->job->name, &r->st) == 0) return 0;
    cs_batch_progress_event(&b->prog, "%s: note: %s", r->job->name, cs_last_error());
    return -1;
}

/* In the child: dies with the batch, output to the log, keeps its job's lock (and no other
 * job's: those are close-on-exec), then clsplat train. */
static void exec_child(const char *self, char *const *argv, int log_fd, int lock_fd, pid_t parent)
{
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
    if (getppid() != parent) _exit(143); /* the batch died before the line above */
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(log_fd, 1) < 0 || dup2(log_fd, 2) < 0 || fcntl(lock_fd, F_SETFD, 0) < 0)
        _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv(self, argv);
    dprintf(2, "clsplat: error: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
}

/* DIR/batch_config.json: the job's settings with its folder, device and budget. */
static int write_job_config(const job_run *r, const cs_pack_device *d, double budget_mb, char *path, size_t n)
{
    cs_config c = r->job->cfg;
    snprintf(c.output.dir, sizeof c.output.dir, "%s", r->dir);
    snprintf(c.device.id, sizeof c.device.id, "%s", d->id);
    if (budget_mb > 0) c.memory.vram_budget_mb = floor(budget_mb);
    char *dump = cs_config_dump(&c);
    if (!dump) return cs_fail("out of host memory (job config)");
    int rc = cs_path_join(path, n, r->dir, "batch_config.json") || cs_write_file_atomic(path, dump, strlen(dump));
    free(dump);
    return rc;
}

/* Opens the log for appending and writes the attempt's header line. */
static int open_log(job_run *r, const cs_pack_device *d, const char *ckpt)
{
    char p[1300], when[64];
    snprintf(p, sizeof p, "%s/train.log", r->dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return cs_fail("%s: cannot open for writing: %s", p, strerror(errno));
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
    dprintf(fd, "==== clsplat batch: attempt %d at %s on %s (%s)%s%s\n", r->st.attempts + 1, when, d->id, d->name,
            ckpt ? ", resuming from " : "", ckpt ? ckpt : "");
    return fd;
}

/* Takes DIR/.lock for the child's lifetime (the child inherits it). */
static int take_lock(job_run *r)
{
    char p[1300];
    snprintf(p, sizeof p, "%s/.lock", r->dir);
    int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return cs_fail("%s: %s", p, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        close(fd);
        return cs_fail("%s is running in another process (it holds %s)", r->job->name, p);
    }
    /* the batch's pid: a re-run after this batch is killed tells its orphaned run from a live batch's */
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) || pwrite(fd, pid, (size_t)n, 0) != n) {
        close(fd);
        return cs_fail("%s: cannot write the batch's pid: %s", p, strerror(errno));
    }
    r->lock_fd = fd;
    return 0;
}

static void release(job_run *r)
{
    if (r->lock_fd >= 0) close(r->lock_fd);
    r->lock_fd = -1;
    r->pid = 0;
}

static int spawn(batch *b, job_run *r, int dev, const cs_pack_need *need)
{
    cs_pack_device *d = &b->devs[dev];
    char cfg[1300], ckpt[1400];
    int from = cs_run_dir_latest_checkpoint(r->dir, ckpt, sizeof ckpt);
    if (cs_mkdirs(r->dir) || take_lock(r)) return -1;
    int log_fd = write_job_config(r, d, need->budget_mb, cfg, sizeof cfg) ? -1 : open_log(r, d, from >= 0 ? ckpt : NULL);
    if (log_fd < 0) {
        release(r);
        return -1;
    }
    char *fresh[] = {(char *)b->o->self, "train", "-c", cfg, "--force", NULL};
    char *resume[] = {(char *)b->o->self, "train", "--resume", ckpt, "-c", cfg, NULL};
    pid_t parent = getpid(), pid = fork();
    if (pid == 0) exec_child(b->o->self, from >= 0 ? resume : fresh, log_fd, r->lock_fd, parent);
    close(log_fd);
    if (pid < 0) {
        release(r);
        return cs_fail("fork failed: %s", strerror(errno));
    }
    r->pid = pid, r->dev = dev, r->reserve = need->reserve, r->t_start = cs_now();
    d->reserved += need->reserve, d->running++;
    r->st.status = CS_JOB_RUNNING, r->st.attempts++, r->st.pid = pid, r->st.error[0] = '\0';
    snprintf(r->st.device, sizeof r->st.device, "%s %s", d->id, d->name);
    job_event_write(b, r);
    char from_s[48] = "";
    if (from >= 0) snprintf(from_s, sizeof from_s, ", from its checkpoint at %d", from);
    cs_batch_progress_event(&b->prog, "%s: running on %s (%s), attempt %d%s; reserves %.0f MiB (%s)", r->job->name, d->id,
                            d->name, r->st.attempts, from_s, need->reserve / 1048576.0, need->why);
    return 0;
}

/* The child ended with STATUS: done, stopped, or failed with its error line. */
static void finished(batch *b, job_run *r, int status)
{
    cs_pack_device *d = &b->devs[r->dev];
    d->reserved -= r->reserve, d->running--;
    double wall = cs_now() - r->t_start, before = r->st.wall_seconds;
    int attempts = r->st.attempts;
    char device[sizeof r->st.device];
    snprintf(device, sizeof device, "%s", r->st.device);
    release(r);
    cs_job_dir_read(r->dir, &r->st); /* the run's own files */
    r->st.attempts = attempts, r->st.wall_seconds = before + wall, r->st.pid = 0;
    snprintf(r->st.device, sizeof r->st.device, "%s", device);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r->st.exit_code = code;
    const char *name = r->job->name;
    if (code == 0 && r->st.status == CS_JOB_DONE) {
        char q[64] = "no test views";
        if (isfinite(r->st.psnr)) snprintf(q, sizeof q, "PSNR %.2f, SSIM %.3f", r->st.psnr, r->st.ssim);
        /* the training seconds of every attempt, as summary.csv has them, and this attempt's wall time */
        cs_batch_progress_event(&b->prog, "%s: done on %s: %.0f s of training (this attempt %.0f s): %s, %d Gaussians",
                                name, d->id, r->st.train_seconds, wall, q, r->st.gaussians);
    } else if (code == 130 || code == 143) {
        r->st.status = CS_JOB_STOPPED;
        cs_batch_progress_event(&b->prog, "%s: stopped at iteration %d (checkpoint %d); the next run resumes it", name,
                                r->st.log_iteration, r->st.checkpoint);
    } else {
        char log[1300];
        r->st.status = CS_JOB_FAILED;
        snprintf(log, sizeof log, "%s/train.log", r->dir);
        cs_job_dir_error_line(log, r->st.error, sizeof r->st.error);
        if (!WIFEXITED(status)) {
            char e[sizeof r->st.error];
            snprintf(e, sizeof e, "killed by signal %d%s%s", WTERMSIG(status), r->st.error[0] ? "; " : "", r->st.error);
            snprintf(r->st.error, sizeof r->st.error, "%s", e);
        } else if (code == 0) {
            snprintf(r->st.error, sizeof r->st.error, "exited without writing result.json");
        }
        cs_batch_progress_event(&b->prog, "%s: failed (exit %d): %s (log: %s)", name, code, r->st.error, log);
    }
    job_event_write(b, r);
}

/* ---- the loop ---------------------------------------------------------------------------- */

/* The queued job that should start next and has not been tried this round (TRIED): the
 * longest by estimate, the first in the list among equals; NULL when none is left. */
static job_run *next_queued(batch *b, const bool *tried)
{
    job_run *best = NULL;
    for (int i = 0; i < b->list.n; i++) {
        job_run *r = &b->runs[i];
        if (r->active && r->st.status == CS_JOB_QUEUED && !tried[i] && (!best || r->cost > best->cost)) best = r;
    }
    return best;
}

/* Starts every queued job that fits somewhere now, longest first. */
static void start_ready(batch *b)
{
    bool *tried = calloc((size_t)b->list.n, sizeof *tried);
    job_run *r;
    while (tried && !b->stopping && (r = next_queued(b, tried))) {
        tried[r - b->runs] = true;
        cs_pack_need need[MAX_DEVICES];
        int ever = 0;
        for (int k = 0; k < b->n_devs; k++) {
            need[k] = cs_pack_need_of(&r->job->cfg, &b->devs[k], b->o->per_device, r->plan_bytes);
            ever |= cs_pack_fits_alone(&b->devs[k], &need[k]);
        }
        if (!ever) {
            r->st.status = CS_JOB_FAILED;
            snprintf(r->st.error, sizeof r->st.error, "needs %.0f MiB of device memory (%s); no device has that much",
                     need[0].reserve / 1048576.0, need[0].why);
            cs_batch_progress_event(&b->prog, "%s: failed: %s", r->job->name, r->st.error);
            job_event_write(b, r);
            continue;
        }
        int dev = cs_pack_pick(b->devs, need, b->n_devs);
        if (dev >= 0 && spawn(b, r, dev, &need[dev])) {
            r->st.status = CS_JOB_FAILED;
            snprintf(r->st.error, sizeof r->st.error, "%s", cs_last_error());
            cs_batch_progress_event(&b->prog, "%s: failed to start: %s", r->job->name, r->st.error);
            job_event_write(b, r);
        }
    }
    free(tried);
}

static void reap(batch *b)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        for (int i = 0; i < b->list.n; i++)
            if (b->runs[i].pid == pid) finished(b, &b->runs[i], status);
}

static void counts_of(const batch *b, int counts[CS_JOB_NSTATUS])
{
    memset(counts, 0, sizeof(int) * CS_JOB_NSTATUS);
    for (int i = 0; i < b->list.n; i++)
        if (b->runs[i].active) counts[b->runs[i].st.status]++;
}

static void draw(batch *b, bool force)
{
    cs_eta_job run[MAX_DEVICES * 8];
    int nr = 0, counts[CS_JOB_NSTATUS], n_done = 0;
    double done_s = 0;
    for (int i = 0; i < b->list.n; i++) {
        job_run *r = &b->runs[i];
        if (r->pid && nr < MAX_DEVICES * 8) {
            cs_eta_job *e = &run[nr++];
            cs_job_dir_progress(r->dir, &e->iteration, &e->seconds);
            e->total = job_iterations(r->job, &b->devs[r->dev]);
        } else if (r->active && r->st.status == CS_JOB_DONE && isfinite(r->st.train_seconds)) {
            done_s += r->st.train_seconds, n_done++;
        }
    }
    counts_of(b, counts);
    int slots = 0;
    for (int k = 0; k < b->n_devs; k++) slots += b->devs[k].running > 1 ? b->devs[k].running : 1;
    double eta = cs_batch_eta(run, nr, counts[CS_JOB_QUEUED], done_s, n_done, slots);
    cs_batch_progress_overall(&b->prog, counts, cs_now() - b->t0, eta, force);
    b->last_draw = cs_now();
}

static bool any_running(const batch *b)
{
    for (int i = 0; i < b->list.n; i++)
        if (b->runs[i].pid) return true;
    return false;
}

/* Marks the jobs to run as queued (or reports them done), then runs until none is left. */
static void run_jobs(batch *b)
{
    for (int i = 0; i < b->list.n; i++) {
        job_run *r = &b->runs[i];
        if (!r->active) continue;
        if (r->st.status == CS_JOB_DONE) {
            cs_batch_progress_event(&b->prog, "%s: done earlier (%d iterations), skipped", r->job->name,
                                    r->st.iterations);
            if (r->st.recorded != CS_JOB_DONE) job_event_write(b, r); /* its batch died before saying so */
            continue;
        }
        if (locked_elsewhere(r->dir)) {
            if (wait_for_orphan(b, r)) {
                cs_job_dir_read(r->dir, &r->st); /* what the stopped run left */
            } else {
                r->st.status = CS_JOB_RUNNING, r->active = false;
                cs_batch_progress_event(&b->prog, "%s: running in another process, skipped", r->job->name);
                continue;
            }
            if (r->st.status == CS_JOB_DONE) {
                cs_batch_progress_event(&b->prog, "%s: done (its run finished after its batch died)", r->job->name);
                job_event_write(b, r);
                continue;
            }
        }
        survey_job(r, &b->devs[0]);
        r->st.status = CS_JOB_QUEUED;
        if (r->st.checkpoint >= 0)
            cs_batch_progress_event(&b->prog, "%s: queued (resumes from iteration %d)", r->job->name, r->st.checkpoint);
        else
            cs_batch_progress_event(&b->prog, "%s: queued", r->job->name);
    }
    draw(b, true);
    for (;;) {
        if (*b->o->stop && !b->stopping) {
            b->stopping = true;
            cs_batch_progress_event(&b->prog, "stopping: the running jobs save checkpoints");
            for (int i = 0; i < b->list.n; i++)
                if (b->runs[i].pid) kill(b->runs[i].pid, SIGTERM);
        }
        int before[CS_JOB_NSTATUS], after[CS_JOB_NSTATUS];
        counts_of(b, before);
        reap(b);
        if (!b->stopping) start_ready(b);
        counts_of(b, after);
        bool changed = memcmp(before, after, sizeof before) != 0;
        if (!any_running(b)) break;
        if (changed || cs_now() - b->last_draw > 1.0) draw(b, changed);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    draw(b, true);
    cs_batch_progress_end(&b->prog);
}

/* ---- summary ----------------------------------------------------------------------------- */

/* Rebuilds ROOT/summary.* from the job folders (under ROOT/.summary.lock: array tasks finish
 * at once) and prints the table. Returns how many of the counted jobs are done. */
static int summarise(batch *b, double wall, int *counted)
{
    char lock[1200];
    snprintf(lock, sizeof lock, "%s/.summary.lock", b->o->root);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0) flock(fd, LOCK_EX);
    cs_report_row *rows = calloc((size_t)b->list.n, sizeof *rows);
    int done = 0;
    *counted = 0;
    if (rows) {
        for (int i = 0; i < b->list.n; i++) {
            job_run *r = &b->runs[i];
            rows[i].name = r->job->name;
            cs_job_dir_read(r->dir, &rows[i].st);
            if (rows[i].st.status != CS_JOB_DONE && locked_elsewhere(r->dir)) rows[i].st.status = CS_JOB_RUNNING;
            bool counts = b->o->task < 0 || b->o->task == i;
            *counted += counts;
            done += counts && rows[i].st.status == CS_JOB_DONE;
        }
        if (cs_report_write(b->o->root, rows, b->list.n, wall) || cs_batch_report_page(b->o->root, NULL))
            fprintf(stderr, "clsplat: note: writing the summary failed: %s\n", cs_last_error());
        cs_report_print(rows, b->list.n, stdout);
        free(rows);
    }
    if (fd >= 0) close(fd);
    return done;
}

int cs_batch_run(const cs_batch_opts *o)
{
    batch B, *b = &B;
    memset(b, 0, sizeof *b);
    b->o = o;
    b->t0 = cs_now();
    cs_batch_progress_init(&b->prog, stdout, isatty(STDOUT_FILENO));
    int rc = load_jobs(b) || cs_mkdirs(o->root) || (!o->collect && open_devices(b)) ? -1 : 0;
    if (!rc) {
        if (!o->collect) {
            printf("batch: %d jobs in %s on %d device%s:", o->task >= 0 ? 1 : b->list.n, o->root, b->n_devs,
                   b->n_devs == 1 ? "" : "s");
            for (int k = 0; k < b->n_devs; k++) printf(" %s (%s, %.0f MiB)", b->devs[k].id, b->devs[k].name,
                                                       b->devs[k].mem / 1048576.0);
            printf("\n");
            run_jobs(b);
        }
        int counted, done = summarise(b, o->collect ? 0 : cs_now() - b->t0, &counted);
        if (*o->stop) rc = 2;
        else if (done < counted)
            rc = cs_fail("%d of %d jobs are not done (see %s/summary.csv and each job's train.log)", counted - done,
                         counted, o->root);
    }
    free(b->runs);
    cs_joblist_free(&b->list);
    return rc;
}
