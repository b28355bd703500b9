/* test_batch: clsplat batch. Unit tests: job lists (settings in the documented order,
 * relative paths, every kind of bad list refused naming the job and the key), packing (spread
 * over GPUs first, budgets pack, a share per job with --per-device, a CPU runs one job, a job
 * that can never fit), the ETA and the summary files. Through the binary on the CPU: a
 * three-job batch killed with kill -9 while a job runs (its child stops with a checkpoint, no
 * orphan), and a re-run that finishes without training the finished job again; a failing job
 * among good ones; SIGTERM; --collect; --task. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "batch_pack.h"
#include "batch_progress.h"
#include "batch_report.h"
#include "run_report.h"
#include "cli_run.h"
#include "fixtures.h"
#include "job_dir.h"
#include "joblist.h"
#include "test.h"
#include "util.h"

/* writes TEXT to DIR/NAME and loads it as a job list; the message goes to ERR */
static int load_list(const char *dir, const char *name, const char *text, const cs_job_sets *cli, cs_joblist *l,
                     char *err, size_t n)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    if (write_text(p, text)) return -2;
    int r = cs_joblist_load(p, NULL, cli, l);
    snprintf(err, n, "%s", r ? cs_last_error() : "");
    return r;
}

int test_joblist(void)
{
    char dir[600], p[700], err[1200];
    snprintf(dir, sizeof dir, "%s/joblist", test_tmpdir());
    snprintf(p, sizeof p, "%s/scenes/lego", dir);
    CHECK_OK(cs_mkdirs(p));
    snprintf(p, sizeof p, "%s/scenes/room", dir);
    CHECK_OK(cs_mkdirs(p));
    snprintf(p, sizeof p, "%s/base.json", dir);
    CHECK_OK(write_text(p, "{\"optim\": {\"iterations\": 100, \"iterations_on_cpu\": 7, \"seed\": 1}, "
                           "\"model\": {\"sh_degree\": 2}}"));
    snprintf(p, sizeof p, "%s/fp16.json", dir);
    CHECK_OK(write_text(p, "{\"memory\": {\"sh_dtype\": \"fp16\"}, \"optim\": {\"seed\": 2}}"));
    /* settings: list config < job config < list set < job set < command line */
    char *cli_a[] = {"optim.lambda_dssim=0.3"};
    const char *cli_f[] = {"--set"};
    cs_job_sets cli = {cli_a, cli_f, 1};
    cs_joblist l;
    CHECK(load_list(dir, "good.json",
                    "{\"config\": \"base.json\", \"set\": [\"optim.seed=3\", \"model.sh_degree=1\"], \"jobs\": ["
                    "{\"name\": \"lego\", \"data\": \"scenes/lego\", \"set\": [\"optim.seed=4\"]},"
                    "{\"data\": \"scenes/room\", \"config\": \"fp16.json\", \"set\": [\"optim.iterations=50\"]}]}",
                    &cli, &l, err, sizeof err) == 0, "%s", err);
    CHECK(l.n == 2 && !strcmp(l.jobs[0].name, "lego") && !strcmp(l.jobs[1].name, "room"), "names (room from its folder)");
    const cs_config *a = &l.jobs[0].cfg, *b = &l.jobs[1].cfg;
    CHECK(a->optim.seed == 4 && b->optim.seed == 3, "seeds %d %d: the job's set wins, then the list's set over the "
          "job's config", a->optim.seed, b->optim.seed);
    CHECK(a->model.sh_degree == 1 && a->memory.sh_dtype == CS_DTYPE_FP32 && b->memory.sh_dtype == CS_DTYPE_FP16,
          "list set over list config; job config applied to its job only");
    CHECK(a->optim.iterations == 100 && a->optim.iterations_on_cpu == 7, "the config's CPU count stays without a set");
    CHECK(b->optim.iterations == 50 && b->optim.iterations_on_cpu == 0, "an explicit iteration count wins on CPUs");
    CHECK(fabs(a->optim.lambda_dssim - 0.3) < 1e-12 && a->output.checkpoint_interval == CS_BATCH_CHECKPOINT_INTERVAL,
          "command line applied; periodic checkpoints by default");
    CHECK(a->data.path[0] == '/' && strstr(a->data.path, "/scenes/lego"), "data path made absolute: %s", a->data.path);
    cs_joblist_free(&l);
    /* bad lists: each refused, naming the job and the key */
    static const struct { const char *text, *want; } bad[] = {
        {"{\"jobs\": [{\"name\": \"x\", \"data\": \"scenes/lego\"}], \"sets\": []}", "unknown key 'sets'"},
        {"{\"jobs\": [{\"name\": \"x\", \"data\": \"scenes/lego\", \"iterations\": 5}]}", "job 'x': unknown key 'iterations'"},
        {"{\"jobs\": [{\"name\": \"x\", \"data\": \"scenes/lego\"}, {\"name\": \"x\", \"data\": \"scenes/room\"}]}",
         "job 'x': a job named 'x' is already"},
        {"{\"jobs\": [{\"data\": \"scenes/lego\"}, {\"data\": \"other/lego\"}]}", "job 'lego'"},
        {"{\"jobs\": [{\"name\": \"y\", \"data\": \"scenes/none\"}]}", "job 'y': data folder"},
        {"{\"jobs\": [{\"name\": \"z\", \"data\": \"scenes/lego\", \"set\": [\"optim.iteratons=5\"]}]}",
         "job 'z': set: unknown key 'optim.iteratons'"},
        {"{\"jobs\": [{\"name\": \"z\", \"data\": \"scenes/lego\", \"set\": [\"model.sh_degree=9\"]}]}",
         "job 'z': set: key 'model.sh_degree'"},
        {"{\"set\": [\"bogus\"], \"jobs\": [{\"name\": \"z\", \"data\": \"scenes/lego\"}]}", "expected key.sub=value"},
        {"{\"jobs\": [{\"name\": \"a/up\", \"data\": \"scenes/lego\"}]}", "may hold only letters"},
        {"{\"jobs\": [{\"name\": \"..\", \"data\": \"scenes/lego\"}]}", "not starting with"},
        {"{\"jobs\": [{\"name\": \"w\", \"data\": \"scenes/lego\", \"config\": \"nope.json\"}]}", "job 'w'"},
        {"{\"jobs\": []}", "non-empty array"},
        {"{\"jobs\": [{\"name\": \"v\", \"data\": 5}]}", "'data' must be a non-empty string"},
        {"{\"jobs\": [{\"name\": \"v\", \"data\": \"scenes/lego\"}], \"jobs\": []}", "duplicate"},
        {"{\"jobs\": [\n{\"name\": \"v\",, }]}", "line 2"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(load_list(dir, "bad.json", bad[i].text, NULL, &l, err, sizeof err) == -1 && strstr(err, bad[i].want) &&
                  strstr(err, "bad.json"), "bad list %zu: got '%s', want '%s'", i, err, bad[i].want);
    }
    /* scene folders: one job each, named by the folder; a repeated name is refused */
    snprintf(p, sizeof p, "%s/scenes/lego/", dir);
    char q[700];
    snprintf(q, sizeof q, "%s/scenes/room", dir);
    char *dirs[] = {p, q, p};
    CHECK_OK(cs_joblist_from_dirs(NULL, dirs, 2, NULL, &l));
    CHECK(l.n == 2 && !strcmp(l.jobs[0].name, "lego") && cs_joblist_find(&l, "room") == 1, "jobs from folders");
    cs_joblist_free(&l);
    CHECK(cs_joblist_from_dirs(NULL, dirs, 3, NULL, &l) == -1 && strstr(cs_last_error(), "'lego' is already"),
          "%s", cs_last_error());
    return 0;
}

static cs_pack_device gpu(const char *id, double gib, int max_jobs)
{
    cs_pack_device d;
    memset(&d, 0, sizeof d);
    snprintf(d.id, sizeof d.id, "%s", id);
    d.mem = (size_t)(gib * 1073741824.0);
    d.max_jobs = max_jobs;
    return d;
}

/* starts a job needing NEED (per device) the way the batch does; returns the device or -1 */
static int place(cs_pack_device *d, int n, const cs_config *c, int per_device, size_t plan)
{
    cs_pack_need need[4];
    for (int i = 0; i < n; i++) need[i] = cs_pack_need_of(c, &d[i], per_device, plan);
    int k = cs_pack_pick(d, need, n);
    if (k >= 0) d[k].reserved += need[k].reserve, d[k].running++;
    return k;
}

int test_batch_pack(void)
{
    cs_config whole, small;
    cs_config_defaults(&whole);
    small = whole;
    small.memory.vram_budget_mb = 15000;
    /* whole-device jobs: one per GPU, spread first */
    cs_pack_device d[2] = {gpu("0:0", 140, 0), gpu("0:1", 140, 0)};
    CHECK(place(d, 2, &whole, 0, 0) == 0 && place(d, 2, &whole, 0, 0) == 1 && place(d, 2, &whole, 0, 0) == -1,
          "one whole-device job per GPU");
    /* jobs with a 15000 MiB budget pack: 8 per 140 GiB card, spread over both */
    d[0] = gpu("0:0", 140, 0), d[1] = gpu("0:1", 140, 0);
    int per[2] = {0, 0};
    for (int i = 0; i < 20; i++) {
        int k = place(d, 2, &small, 0, 0);
        if (k >= 0) per[k]++;
    }
    size_t each = (size_t)15000 * 1048576 + CS_PACK_CONTEXT_BYTES;
    int fit = (int)(d[0].mem / each);
    CHECK(per[0] == fit && per[1] == fit, "budgeted jobs packed %d + %d, expected %d each", per[0], per[1], fit);
    /* --per-device 2: a share each (given to the job as its budget), no third */
    d[0] = gpu("0:0", 16, 2);
    cs_pack_need n = cs_pack_need_of(&whole, &d[0], 2, 0);
    CHECK(n.budget_mb > 7000 && n.budget_mb < 8192 && 2 * n.reserve <= d[0].mem, "share %.0f MiB", n.budget_mb);
    CHECK(place(d, 1, &whole, 2, 0) == 0 && place(d, 1, &whole, 2, 0) == 0 && place(d, 1, &whole, 2, 0) == -1,
          "two shares on a 16 GiB card");
    /* a job capped by memory.max_gaussians reserves its plan when that is smaller */
    d[0] = gpu("0:0", 80, 0);
    n = cs_pack_need_of(&whole, &d[0], 0, (size_t)3 << 30);
    CHECK(n.reserve == ((size_t)3 << 30) + CS_PACK_CONTEXT_BYTES && n.budget_mb == 0, "plan reservation");
    /* a CPU runs one job at a time however much memory there is */
    cs_pack_device cpu = gpu("1:0", 256, 0);
    cpu.is_cpu = 1;
    CHECK(place(&cpu, 1, &small, 0, 0) == 0 && place(&cpu, 1, &small, 0, 0) == -1, "CPU: one job at a time");
    /* a budget larger than any device can never run */
    cs_config huge = whole;
    huge.memory.vram_budget_mb = 200000;
    d[0] = gpu("0:0", 16, 0);
    n = cs_pack_need_of(&huge, &d[0], 0, 0);
    CHECK(!cs_pack_fits_alone(&d[0], &n), "a 200 GB budget fits a 16 GiB card");
    return 0;
}


int test_batch_eta_and_report(void)
{
    /* two running jobs: 100 of 1000 iterations in 10 s, 500 of 1000 in 50 s; 2 queued */
    cs_eta_job run[2] = {{100, 1000, 10.0}, {500, 1000, 50.0}};
    double eta = cs_batch_eta(run, 2, 2, 0, 0, 2);
    /* remaining 90 + 50, queued 2 x 100 (mean length), over 2 slots: 170 */
    CHECK(fabs(eta - 170) < 1e-9, "eta %g", eta);
    CHECK(cs_batch_eta(run, 1, 0, 0, 0, 4) == 90, "at least the longest running remainder");
    CHECK(cs_batch_eta(NULL, 0, 3, 0, 0, 1) == -1, "nothing known yet");
    CHECK(fabs(cs_batch_eta(NULL, 0, 3, 60, 2, 1) - 90) < 1e-9, "queued jobs at the finished ones' mean");
    /* the summary files */
    char root[600], p[700];
    snprintf(root, sizeof root, "%s/report", test_tmpdir());
    CHECK_OK(cs_mkdirs(root));
    cs_report_row rows[2];
    rows[0].name = "lego";
    cs_job_state_init(&rows[0].st);
    rows[0].st.status = CS_JOB_DONE, rows[0].st.psnr = 33.25, rows[0].st.ssim = 0.97, rows[0].st.iterations = 7000;
    rows[0].st.gaussians = 300000, rows[0].st.train_seconds = 15;
    snprintf(rows[0].st.device, sizeof rows[0].st.device, "0:0 NVIDIA H200");
    rows[1].name = "room";
    cs_job_state_init(&rows[1].st);
    rows[1].st.status = CS_JOB_FAILED;
    snprintf(rows[1].st.error, sizeof rows[1].st.error, "bad \"image\", line 3");
    CHECK_OK(cs_report_write(root, rows, 2, 20));
    snprintf(p, sizeof p, "%s/summary.csv", root);
    char *csv = cs_read_file(p, NULL);
    CHECK(csv && strstr(csv, "lego,done,0:0 NVIDIA H200,7000,33.2500,0.97000,,300000,15.0,") &&
              strstr(csv, "room,failed,,,,,,,,,,0,\"bad \"\"image\"\", line 3\""), "summary.csv:\n%s", csv);
    free(csv);
    snprintf(p, sizeof p, "%s/summary.json", root);
    json_t *j = json_load_file(p, 0, NULL), *t = json_object_get(j, "totals");
    CHECK(json_integer_value(json_object_get(t, "done")) == 1 && json_integer_value(json_object_get(t, "failed")) == 1 &&
              fabs(json_number_value(json_object_get(t, "mean_psnr")) - 33.25) < 1e-9 &&
              json_is_null(json_object_get(json_array_get(json_object_get(j, "jobs"), 0), "lpips")),
          "summary.json totals");
    json_decref(j);
    /* the batch's page: a row a job, the finished one linking to its own report, text escaped */
    snprintf(p, sizeof p, "%s/lego", root);
    CHECK_OK(cs_mkdirs(p));
    snprintf(p, sizeof p, "%s/lego/report.html", root);
    CHECK_OK(cs_write_file_atomic(p, "<!DOCTYPE html>\n<!-- clsplat report -->\n", 39));
    CHECK_OK(cs_batch_report_page(root, NULL));
    snprintf(p, sizeof p, "%s/report.html", root);
    char *page = cs_read_file(p, NULL);
    CHECK(page && strstr(page, "<a href=\"lego/report.html\">lego</a>") && strstr(page, "<td>33.250</td>") &&
              strstr(page, "room") && !strstr(page, "room/report.html") && strstr(page, "bad &quot;image&quot;, line 3"),
          "batch report.html:\n%s", page ? page : "(missing)");
    free(page);
    CHECK(cs_batch_report_page(p, NULL) != 0 && strstr(cs_last_error(), "no summary.json"), "a folder without a summary");
    CHECK(cs_report_done(rows, 2) == 1, "done count");
    /* the closing table fits 100 columns with the widest values (#33 item 7) */
    rows[0].name = "a_job_name_longer_than_the_column", rows[0].st.iterations = 999999, rows[0].st.gaussians = 99999999;
    rows[0].st.train_seconds = 99999.9, rows[0].st.peak_accounted_mb = 99999, rows[0].st.peak_driver_mb = 99999;
    rows[0].st.lpips = 0.123, rows[0].st.status = CS_JOB_STOPPED;
    snprintf(p, sizeof p, "%s/table.txt", root);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL, "cannot write %s", p);
    cs_report_print(rows, 2, f);
    fclose(f);
    char *table = cs_read_file(p, NULL);
    int widest = 0, lines = 0;
    for (char *l = table; l && *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n'), lines++) {
        int w = (int)strcspn(l, "\n");
        if (strncmp(l, "    error:", 10) && w > widest) widest = w;
    }
    CHECK(table && widest <= 100 && strstr(table, "    error: bad"), "the table is %d columns wide:\n%s", widest, table);
    free(table);
    /* a running job at its last iteration is finishing, not done in 0:00:00 */
    int counts[CS_JOB_NSTATUS] = {0};
    counts[CS_JOB_RUNNING] = 1;
    snprintf(p, sizeof p, "%s/progress.txt", root);
    f = fopen(p, "w");
    CHECK(f != NULL, "cannot write %s", p);
    cs_batch_progress prog;
    cs_batch_progress_init(&prog, f, false);
    cs_eta_job last = {1000, 1000, 60.0};
    cs_batch_progress_overall(&prog, counts, 61, cs_batch_eta(&last, 1, 0, 0, 0, 1), true);
    fclose(f);
    CHECK(file_contains(p, "ETA finishing"), "a job at its last iteration: see %s", p);
    return 0;
}

/* ---- through the binary ------------------------------------------------------------------ */

#define TINY_JOB "\"device.tune=off\", \"optim.random_init_points=500\", \"densify.from=2\", \"log.interval=5\", " \
                 "\"data.eval=true\", \"eval.test_iterations=[]\", \"output.save_iterations=[]\""

/* true once ROOT/NAME's train_log.jsonl reaches iteration IT (waits up to 120 s) */
static int wait_iteration(const char *root, const char *name, int it)
{
    char dir[800];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    for (int i = 0; i < 3000; i++) { /* 300 s: rusticl on 2 busy cores is slow */
        int at;
        double s;
        cs_job_dir_progress(dir, &at, &s);
        if (at >= it) return 1;
        usleep(100000);
    }
    return 0;
}

/* true once PID is gone (or a zombie nobody reaps), waiting up to 60 s */
static int wait_gone(long pid)
{
    char p[64], st[256];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    for (int i = 0; i < 600; i++) {
        FILE *f = fopen(p, "r");
        if (!f) return 1;
        size_t n = fread(st, 1, sizeof st - 1, f);
        fclose(f);
        st[n] = '\0';
        char *paren = strrchr(st, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'Z') return 1;
        usleep(100000);
    }
    return 0;
}


/* the job's state as a re-run or --collect sees it */
static cs_job_state job_state(const char *root, const char *name)
{
    char dir[800];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    cs_job_state st;
    cs_job_dir_read(dir, &st);
    return st;
}

static int count_in(const char *file, const char *text)
{
    char *d = cs_read_file(file, NULL);
    int n = 0;
    for (char *p = d; p && (p = strstr(p, text)); p++) n++;
    free(d);
    return n;
}

int test_batch_kill_and_rerun(void)
{
    char dir[600], scene[700], list[700], root[700], log[700], p[900];
    snprintf(dir, sizeof dir, "%s/batch", test_tmpdir());
    snprintf(scene, sizeof scene, "%s/scene", dir); /* LPIPS takes views of 31x31 and more */
    CHECK_OK(cli_demo_scene(scene, 48, 36));
    snprintf(scene, sizeof scene, "%s/small", dir);
    CHECK_OK(cli_demo_scene(scene, 20, 15));
    /* jobs start longest first (iterations x pixels): a (done before the kill), then b (800
       iterations of a quarter of the pixels: running at the kill), then c (queued) */
    snprintf(list, sizeof list, "%s/jobs.json", dir);
    char text[3000]; /* a's evaluation has LPIPS: the summary must carry it */
    snprintf(text, sizeof text, "{\"set\": [" TINY_JOB ", \"output.checkpoint_interval=50\"], \"jobs\": ["
             "{\"name\": \"c\", \"data\": \"scene\", \"set\": [\"optim.iterations=30\"]},"
             "{\"name\": \"b\", \"data\": \"small\", \"set\": [\"optim.iterations=800\"]},"
             "{\"name\": \"a\", \"data\": \"scene\", \"set\": [\"optim.iterations=300\", "
             "\"eval.lpips_weights=%s\"]}]}", test_lpips_weights());
    CHECK_OK(write_text(list, text));
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(log, sizeof log, "%s/first.log", dir);
    /* the runs take 3 s to stop: a re-run at once finds b's orphan still holding its lock */
    setenv("CLSPLAT_FAULT", "sleep:phase:stop", 1);
    /* one job at a time on a device: a GPU would otherwise start all three at once */
    pid_t batch = cli_start(log, "batch", list, "-o", root, "--per-device", "1", (char *)NULL);
    unsetenv("CLSPLAT_FAULT");
    CHECK(wait_iteration(root, "b", 120), "job b never reached iteration 120, see %s", log);
    cs_job_state b = job_state(root, "b");
    CHECK(b.pid > 0 && job_state(root, "a").status == CS_JOB_DONE && job_state(root, "c").attempts == 0,
          "want a done, b running, c queued: a %s, b %s (pid %ld), c %s (attempts %d); see %s", cs_job_status_names[job_state(root, "a").status],
          cs_job_status_names[b.status], b.pid, cs_job_status_names[job_state(root, "c").status], job_state(root, "c").attempts, log);
    kill(batch, SIGKILL);
    CHECK(cli_wait(batch) == 128 + SIGKILL, "batch not killed");
    /* the same command again at once (#33 item 6): b's orphaned run still holds its lock while
       it saves a checkpoint on its batch's death; the re-run waits for it, then a is not
       trained again, b resumes, c runs; every job done */
    snprintf(log, sizeof log, "%s/second.log", dir);
    CHECK(cli_run("", log, "batch %s -o %s --per-device 1", list, root) == 0, "re-run failed, see %s", log);
    CHECK(wait_gone(b.pid), "job b's process %ld outlived the killed batch", b.pid);
    CHECK(count_in(log, "running in another process") == 0, "the re-run skipped b's orphan, see %s", log);
    snprintf(p, sizeof p, "%s/a/train.log", root);
    CHECK(count_in(p, "==== clsplat batch") == 1 && job_state(root, "a").attempts == 1, "a was trained again");
    snprintf(p, sizeof p, "%s/b/train.log", root);
    CHECK(count_in(p, "resumed from") == 1 && job_state(root, "b").attempts == 2, "b did not resume");
    CHECK(count_in(log, "a: done earlier") == 1, "the re-run did not report a as done, see %s", log);
    for (const char *n = "abc"; *n; n++) {
        char name[2] = {*n, 0};
        cs_job_state s = job_state(root, name);
        CHECK(s.status == CS_JOB_DONE && isfinite(s.psnr) && s.psnr > 5 && s.gaussians > 0 && s.train_seconds > 0,
              "job %s: %s, PSNR %g", name, cs_job_status_names[s.status], s.psnr);
    }
    cs_job_state a = job_state(root, "a");
    CHECK(isfinite(a.lpips) && a.lpips > 0 && a.lpips < 1 && isnan(job_state(root, "c").lpips),
          "LPIPS in the summary: a %g (weights given), c %g (none)", a.lpips, job_state(root, "c").lpips);
    snprintf(p, sizeof p, "%s/summary.json", root);
    json_t *j = json_load_file(p, 0, NULL);
    CHECK(json_integer_value(json_object_get(json_object_get(j, "totals"), "done")) == 3, "summary: 3 done");
    json_decref(j);
    /* the batch's page links each job's own report (each run writes one) */
    snprintf(p, sizeof p, "%s/report.html", root);
    CHECK(count_in(p, "/report.html\">") == 3, "%s: %d job links, want 3", p, count_in(p, "/report.html\">"));
    snprintf(p, sizeof p, "%s/summary.json", root);
    /* --collect rebuilds it without running anything */
    CHECK_OK(remove(p));
    snprintf(p, sizeof p, "%s/summary.csv", root);
    CHECK(cli_run("", log, "batch %s -o %s --collect", list, root) == 0 && count_in(p, ",done,") == 3,
          "--collect, see %s", log);
    return 0;
}

int test_batch_failures_and_stop(void)
{
    char dir[600], p[800], list[700], root[700], log[700];
    snprintf(dir, sizeof dir, "%s/batch2", test_tmpdir());
    snprintf(p, sizeof p, "%s/scene", dir);
    CHECK_OK(cli_demo_scene(p, 40, 30));
    snprintf(p, sizeof p, "%s/broken", dir);
    CHECK_OK(cs_mkdirs(p));
    snprintf(p, sizeof p, "%s/broken/transforms_train.json", dir);
    CHECK_OK(write_text(p, "{\"camera_angle_x\": 0.7, \"frames\": [{\"file_path\": \"./missing\"}]}"));
    snprintf(list, sizeof list, "%s/jobs.json", dir);
    CHECK_OK(write_text(list, "{\"set\": [" TINY_JOB ", \"optim.iterations=20\"], \"jobs\": ["
                              "{\"name\": \"good1\", \"data\": \"scene\"}, {\"name\": \"bad\", \"data\": \"broken\"},"
                              "{\"name\": \"good2\", \"data\": \"scene\"}]}"));
    snprintf(root, sizeof root, "%s/root", dir);
    snprintf(log, sizeof log, "%s/run.log", dir);
    /* a failing job never stops the others; the exit status says not all are done */
    CHECK(cli_run("", log, "batch %s -o %s", list, root) == 1 && count_in(log, "1 of 3 jobs are not done"),
          "see %s", log);
    cs_job_state bad = job_state(root, "bad");
    CHECK(job_state(root, "good1").status == CS_JOB_DONE && job_state(root, "good2").status == CS_JOB_DONE &&
              bad.status == CS_JOB_FAILED && strstr(bad.error, "missing: image file does not exist") && bad.exit_code == 1,
          "statuses; bad's error line '%s'", bad.error);
    snprintf(p, sizeof p, "%s/summary.csv", root);
    CHECK(count_in(p, "bad,failed,") == 1 && count_in(p, "image file does not exist") == 1, "summary.csv names the error");
    /* --task runs one job: the finished one is skipped (0), the broken one fails again (1) */
    CHECK(cli_run("", log, "batch %s -o %s --task 0", list, root) == 0, "--task 0, see %s", log);
    CHECK(cli_run("", log, "batch %s -o %s --task 1", list, root) == 1 && job_state(root, "bad").attempts == 2,
          "--task 1, see %s", log);
    CHECK(cli_run("", log, "batch %s -o %s --task 3", list, root) == 1 && count_in(log, "the list has 3 jobs"),
          "--task 3, see %s", log);
    /* bad lists and usage: refused before anything runs */
    CHECK_OK(write_text(list, "{\"jobs\": [{\"name\": \"x\", \"data\": \"scene\", \"set\": [\"optim.seeed=1\"]}]}"));
    CHECK(cli_run("", log, "batch %s -o %s/none", list, dir) == 1 && count_in(log, "job 'x': set: unknown key 'optim.seeed'"),
          "bad list, see %s", log);
    snprintf(p, sizeof p, "%s/none", dir);
    CHECK(!cs_dir_exists(p), "a refused list created its output folder");
    CHECK(cli_run("", log, "batch %s", list) == 2, "no -o: usage error");
    /* SIGTERM: the running job stops with its checkpoint, the batch exits 143 */
    CHECK_OK(write_text(list, "{\"set\": [" TINY_JOB ", \"optim.iterations=3000\"], \"jobs\": ["
                              "{\"name\": \"long\", \"data\": \"scene\"}]}"));
    snprintf(root, sizeof root, "%s/root_term", dir);
    pid_t batch = cli_start(log, "batch", list, "-o", root, (char *)NULL);
    CHECK(wait_iteration(root, "long", 30), "no progress, see %s", log);
    kill(batch, SIGTERM);
    CHECK(cli_wait(batch) == 143, "SIGTERM: exit status, see %s", log);
    cs_job_state st = job_state(root, "long");
    CHECK(st.status == CS_JOB_STOPPED && st.checkpoint >= 30, "stopped with a checkpoint (%s, %d)",
          cs_job_status_names[st.status], st.checkpoint);
    snprintf(p, sizeof p, "%s/summary.csv", root);
    CHECK(count_in(p, "long,stopped,") == 1, "summary after SIGTERM");
    return 0;
}
