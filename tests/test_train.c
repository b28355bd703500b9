/* test_train: short training runs on the generated demo scene (PoCL in CI): loss falls and
 * PSNR reaches a floor, straight vs checkpoint + resume give identical parameters, evaluation
 * memory does not grow with the number of test views. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "outputs.h"
#include "ply.h"
#include "splats.h"
#include "test.h"
#include "cli_run.h"
#include "evaluator.h"
#include "lpips.h"
#include "init.h"
#include "mcmc.h"
#include "schedule.h"
#include "trainer.h"
#include "util.h"

static void base_config(cs_config *c, const char *data, const char *out)
{
    cs_config_defaults(c);
    snprintf(c->data.path, sizeof c->data.path, "%s", data);
    snprintf(c->output.dir, sizeof c->output.dir, "%s", out);
    c->data.eval = true;
    c->optim.random_init_points = 4000;
    c->optim.position_lr_max_steps = 300;
    c->densify.from = 100;
    c->densify.until = 250;
    c->log.interval = 10;
    c->eval.n_test_iterations = 0;
    c->output.n_save_iterations = 0;
    /* tuning builds a second program per option set (seconds each on PoCL): only the demo
       test runs it (auto), the others take the defaults */
    c->device.tune = CS_TUNE_OFF;
}

/* opens the test device, trains with C (resuming from RESUME when given), closes */
static int train_on_test_device(const cs_config *c, const char *resume)
{
    cs_scene scene;
    if (cs_scene_load(&c->data, &scene)) return -1;
    cs_cl cl;
    int r = test_open_cl(&cl);
    if (!r) {
        cs_train_opts o = {.resume = resume};
        r = cs_train(&cl, c, &scene, &o);
        cs_cl_close(&cl);
    }
    cs_scene_free(&scene);
    return r;
}

/* the train_log.jsonl records of OUT, parsed (NULL when unreadable) */
static json_t *log_records(const char *out)
{
    char p[700];
    snprintf(p, sizeof p, "%s/train_log.jsonl", out);
    char *d = cs_read_file(p, NULL);
    if (!d) return NULL;
    json_t *all = json_array();
    for (char *line = strtok(d, "\n"); line; line = strtok(NULL, "\n")) {
        json_t *o = json_loads(line, 0, NULL);
        if (o) json_array_append_new(all, o);
    }
    free(d);
    return all;
}

/* reads "loss" of the train_log line for ITER */
static double log_loss(const char *out, int iter)
{
    json_t *all = log_records(out), *o;
    size_t i;
    double v = NAN;
    json_array_foreach(all, i, o) if (json_integer_value(json_object_get(o, "iteration")) == iter) v =
        json_number_value(json_object_get(o, "loss"));
    json_decref(all);
    return v;
}

/* largest value of KEY over the lines of train_log.jsonl (0 when absent) */
static double log_max(const char *out, const char *key)
{
    json_t *all = log_records(out), *o;
    size_t i;
    double most = 0;
    json_array_foreach(all, i, o) if (json_number_value(json_object_get(o, key)) > most) most =
        json_number_value(json_object_get(o, key));
    json_decref(all);
    return most;
}

/* mean test PSNR of the first (FIRST=1) or last evaluation record */
static double test_psnr(const char *out, int first)
{
    char p[700];
    snprintf(p, sizeof p, "%s/metrics.json", out);
    char *d = cs_read_file(p, NULL);
    if (!d) return NAN;
    /* a record's mean comes before its per-view list: find the first or last test record */
    char *rec = NULL, *s, *q = d;
    while ((q = strstr(q, "\"split\": \"test\""))) {
        rec = q, q++;
        if (first) break;
    }
    double v = NAN;
    if (rec && (s = strstr(rec, "\"psnr\": "))) v = atof(s + 8);
    free(d);
    return v;
}

/* every evaluation record of OUT/metrics.json has the training seconds before it, rising
   from record to record, and result.json's total is at least the last of them */
static int check_train_seconds(const char *out)
{
    char p[700];
    snprintf(p, sizeof p, "%s/metrics.json", out);
    json_t *recs = json_load_file(p, 0, NULL), *r;
    snprintf(p, sizeof p, "%s/result.json", out);
    json_t *res = json_load_file(p, 0, NULL);
    CHECK(json_is_array(recs) && json_array_size(recs) >= 2 && res, "metrics.json or result.json unreadable in %s", out);
    double last = -1, total = json_number_value(json_object_get(res, "train_seconds"));
    size_t i;
    json_array_foreach(recs, i, r) {
        json_t *v = json_object_get(r, "train_seconds");
        CHECK(json_is_number(v) && json_number_value(v) > last, "record %zu: train_seconds %s after %g", i,
              v ? "not above" : "missing", last);
        last = json_number_value(v);
    }
    CHECK(total >= last, "result.json's train_seconds %g below the last evaluation's %g", total, last);
    json_decref(recs), json_decref(res);
    return 0;
}

/* trains the demo at 80x60 for 300 iterations with the given storage modes */
static int train_demo(const char *name, int sh_fp16, int opt_fp16)
{
    char data[600], out[600];
    snprintf(data, sizeof data, "%s/demo80", test_tmpdir());
    snprintf(out, sizeof out, "%s/%s", test_tmpdir(), name);
    CHECK_OK(cli_demo_scene(data, 80, 60));
    cs_config c;
    base_config(&c, data, out);
    c.optim.iterations = 300;
    c.eval.test_iterations[0] = 1;
    c.eval.n_test_iterations = 1;
    c.memory.sh_dtype = sh_fp16 ? CS_DTYPE_FP16 : CS_DTYPE_FP32;
    c.memory.optimizer_dtype = opt_fp16 ? CS_DTYPE_FP16 : CS_DTYPE_FP32;
    c.device.tune = sh_fp16 ? CS_TUNE_OFF : CS_TUNE_AUTO;
    CHECK_OK(train_on_test_device(&c, NULL));
    double l10 = log_loss(out, 10), l100 = log_loss(out, 100), p1 = test_psnr(out, 1), psnr = test_psnr(out, 0);
    printf("  demo 80x60, 300 iterations, %s SH, %s moments: loss %.4f at 10, %.4f at 100; test PSNR %.2f at 1, %.2f at "
           "300\n", sh_fp16 ? "fp16" : "fp32", opt_fp16 ? "16-bit" : "fp32", l10, l100, p1, psnr);
    CHECK(l100 < 0.8 * l10, "loss did not fall: %g -> %g", l10, l100);
    /* measured on PoCL: about 9.5 dB after 1 iteration, 18.5 dB at 300 */
    CHECK(psnr > 16.5 && psnr > p1 + 6.0, "test PSNR %.2f (from %.2f) below 16.5 or gained under 6 dB", psnr, p1);
    CHECK_OK(check_train_seconds(out));
    const char *files[] = {"config.json", "cameras.json", "input.ply", "metrics.json", "train_log.jsonl", "memory.json",
                           "point_cloud/iteration_300/point_cloud.ply", "report.html", "previews/ours_300/r_0.png",
                           "previews/ours_300/r_2.png"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[800];
        snprintf(p, sizeof p, "%s/%s", out, files[i]);
        CHECK(cs_file_exists(p), "missing output %s", files[i]);
    }
    cs_splats s;
    char p[800];
    snprintf(p, sizeof p, "%s/point_cloud/iteration_300/point_cloud.ply", out);
    CHECK_OK(cs_ply_read(p, &s));
    CHECK(s.n > 100 && s.sh_degree == 3, "saved model %d Gaussians", s.n);
    cs_splats_free(&s);
    /* the plan's bytes per Gaussian follow the modes: 44 + 48*(4|2) params, 59*4 grads,
       2*59*(4|2) moments, 12 stats */
    snprintf(p, sizeof p, "%s/memory.json", out);
    json_t *mj = json_load_file(p, 0, NULL);
    long bpg = (long)json_integer_value(json_object_get(json_object_get(mj, "plan"), "bytes_per_gaussian"));
    double peak_mb = json_integer_value(json_object_get(json_object_get(mj, "peak_bytes"), "total")) / 1048576.0;
    json_decref(mj);
    long want = 44 + 48 * (sh_fp16 ? 2 : 4) + 59 * 4 + 2 * 59 * (opt_fp16 ? 2 : 4) + 12;
    CHECK(bpg == want, "memory.json bytes_per_gaussian %ld, expected %ld", bpg, want);
    /* evaluations must not reset the run's peak: memory.json's total covers every logged peak */
    double logged = log_max(out, "peak_device_mb");
    CHECK(peak_mb + 0.01 >= logged && logged > 0, "memory.json peak %.2f MiB below the logged peak %.2f MiB", peak_mb,
          logged);
    return 0;
}

/* a fast config as shipped, its schedule scaled to FAST_IT iterations on the 40x30 demo: the
   count stays under its budget (set to the demo's size: fast.json's densify.budget, fast_mcmc.json's
   densify.cap_max) at every logged iteration, and its test
   PSNR is above a floor set from the default schedule scaled to the same iterations and capped
   at the same count (memory.max_gaussians), measured once rather than trained in every run
   (PoCL, 2026-11-25, 68 s for both: default 24.36 dB, fast 23.70; the floor is the default's
   less 1 dB). */
enum { FAST_IT = 800 };
static int train_scaled(const char *config, const char *data, const char *out, int budget, double *psnr, int *most)
{
    cs_config c;
    cs_config_defaults(&c);
    if (config) CHECK(cs_config_load_file(&c, config) == 0, "%s: %s", config, cs_last_error());
    c.optim.steps_scale = (double)FAST_IT / c.optim.iterations;
    cs_config_scale_steps(&c);
    CHECK(c.optim.iterations == FAST_IT, "%s scaled to %d iterations", config ? config : "default", c.optim.iterations);
    snprintf(c.data.path, sizeof c.data.path, "%s", data);
    snprintf(c.output.dir, sizeof c.output.dir, "%s", out);
    c.data.eval = true;
    c.optim.random_init_points = 4000;
    c.log.interval = 10;
    c.eval.test_iterations[0] = FAST_IT, c.eval.n_test_iterations = 1;
    c.output.n_save_iterations = 0;
    c.device.tune = CS_TUNE_OFF;
    if (!config) c.memory.max_gaussians = budget; /* the default at the same count: a cap, not a curve */
    else if (c.densify.strategy == CS_STRATEGY_MCMC) c.densify.cap_max = budget;
    else c.densify.budget = budget;
    CHECK_OK(train_on_test_device(&c, NULL));
    *psnr = test_psnr(out, 0);
    *most = (int)log_max(out, "gaussians");
    return 0;
}

/* configs/fast.json, fast_mcmc.json or mcmc_4k.json, scaled as train_scaled says: the count never
   passes the budget (fast.json's curve, the MCMC configs' cap), and the test PSNR stays above the
   default schedule's at the same iterations and count less MARGIN dB. fast_mcmc.json's margin is
   wider: on this tiny scene from random points MCMC trails the default (PoCL, 2026-11-27:
   fast_mcmc.json 23.39-23.44 dB in four runs, configs/mcmc.json scaled the same way 21.07-21.18).
   mcmc_4k.json has none: 25.17-25.23 dB in four runs (PoCL, 2026-11-28) */
static int fast_config(const char *name, double margin)
{
    char data[600], out[600], config[300];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    const int budget = 6000;
    const double default_psnr = 24.36; /* the default schedule, as above */
    double p_fast;
    int n_fast;
    snprintf(config, sizeof config, "configs/%s.json", name);
    snprintf(out, sizeof out, "%s/scaled_%s", test_tmpdir(), name);
    CHECK_OK(train_scaled(config, data, out, budget, &p_fast, &n_fast));
    printf("  %d iterations on the 40x30 demo: %s %.2f dB, %d Gaussians at most (budget %d); the default "
           "schedule: %.2f dB\n", FAST_IT, config, p_fast, n_fast, budget, default_psnr);
    CHECK(n_fast <= budget, "%s grew to %d Gaussians, over its budget %d", config, n_fast, budget);
    CHECK(p_fast > default_psnr - margin, "%s's test PSNR %.2f: the default's at the same iterations is %.2f", config,
          p_fast, default_psnr);
    return 0;
}

int test_fast_config(void) { return fast_config("fast", 1.0); }
int test_fast_mcmc_config(void) { return fast_config("fast_mcmc", 1.5); }
int test_mcmc_4k_config(void) { return fast_config("mcmc_4k", 0.0); }

int test_train_demo(void) { return train_demo("train_demo", 0, 0); }
int test_train_demo_fp16(void) { return train_demo("train_demo_fp16", 1, 1); }


static int files_equal(const char *a, const char *b)
{
    size_t la, lb;
    char *da = cs_read_file(a, &la), *db = cs_read_file(b, &lb);
    int eq = da && db && la == lb && memcmp(da, db, la) == 0;
    free(da), free(db);
    return eq;
}

/* Checkpoint at 110, then (a) resuming to 110 reproduces the saved model bit for bit and
 * (b) 110 + resume + 90 equals 200 straight, on every device (optim.deterministic: no
 * float atomics, fixed-order sums); with either densification strategy (MCMC's draws and noise
 * are functions of the seed and the iteration). */
static int resume_identical(const char *tag, int strategy, double momentum)
{
    char data[600], a[600], b[600], b0[600], ck[800], pa[800], pb[800];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    snprintf(a, sizeof a, "%s/resume%s_a", test_tmpdir(), tag);
    snprintf(b, sizeof b, "%s/resume%s_b", test_tmpdir(), tag);
    snprintf(b0, sizeof b0, "%s/resume%s_b0", test_tmpdir(), tag);
    CHECK_OK(cli_demo_scene(data, 40, 30));
    cs_config c;
    base_config(&c, data, a);
    c.optim.iterations = 200;
    c.optim.deterministic = true;
    c.optim.random_init_points = 1500;
    c.densify.from = 50;
    c.densify.interval = 50;
    c.densify.until = 160;
    c.output.checkpoint_iterations[0] = 110; /* no refinement there: a save sees an
                                                 iteration's step but not its densification */
    c.output.n_checkpoint_iterations = 1;
    c.output.save_iterations[0] = 110;
    c.output.n_save_iterations = 1;
    c.data.eval = false;
    c.densify.strategy = strategy;
    c.densify.cap_max = 2000; /* mcmc: reached by 160 from 1500 rows */
    c.densify.interval = strategy == CS_STRATEGY_MCMC ? 20 : 50;
    c.densify.budget_momentum = momentum; /* the target the checkpoint keeps decides the count at 150 */
    CHECK_OK(train_on_test_device(&c, NULL));
    snprintf(ck, sizeof ck, "%s/checkpoints/chkpnt_110.bin", a);
    /* (a) exact restore */
    c.optim.iterations = 110;
    snprintf(c.output.dir, sizeof c.output.dir, "%s", b0);
    CHECK_OK(train_on_test_device(&c, ck));
    snprintf(pa, sizeof pa, "%s/point_cloud/iteration_110/point_cloud.ply", a);
    snprintf(pb, sizeof pb, "%s/point_cloud/iteration_110/point_cloud.ply", b0);
    CHECK(files_equal(pa, pb), "the checkpoint does not restore the model exactly (%s vs %s)", pa, pb);
    /* (b) continued training */
    c.optim.iterations = 200;
    snprintf(c.output.dir, sizeof c.output.dir, "%s", b);
    CHECK_OK(train_on_test_device(&c, ck));
    snprintf(pa, sizeof pa, "%s/point_cloud/iteration_200/point_cloud.ply", a);
    snprintf(pb, sizeof pb, "%s/point_cloud/iteration_200/point_cloud.ply", b);
    CHECK(files_equal(pa, pb), "200 straight and 110 + resume + 90 differ (%s vs %s)", pa, pb);
    return 0;
}

int test_resume_identical(void) { return resume_identical("", CS_STRATEGY_DEFAULT, 0) || resume_identical("_momentum", CS_STRATEGY_DEFAULT, 0.1); }
int test_resume_identical_mcmc(void) { return resume_identical("_mcmc", CS_STRATEGY_MCMC, 0); }

/* MCMC on the demo scene: from 1000 random points the count rises by 5% a refinement to the
 * cap and never past it at any logged iteration; the arrays are allocated once for the cap
 * (the parameter arrays hold exactly cap rows from the start) and the accounted peak is the
 * plan's within 3%. Test PSNR is printed beside the default strategy's at the same count. */
int test_mcmc_train(void)
{
    char data[600], out[600], p[800];
    snprintf(data, sizeof data, "%s/demo80", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 80, 60));
    const int cap = 1400;
    double psnr[2];
    for (int strat = 0; strat < 2; strat++) {
        snprintf(out, sizeof out, "%s/mcmc_train_%d", test_tmpdir(), strat);
        cs_config c;
        base_config(&c, data, out);
        c.optim.iterations = 300;
        c.optim.random_init_points = 1000;
        c.densify.from = 50;
        c.densify.interval = 20;
        c.densify.until = 250;
        c.densify.strategy = strat ? CS_STRATEGY_MCMC : CS_STRATEGY_DEFAULT;
        c.densify.cap_max = cap;
        c.memory.max_gaussians = strat ? 0 : cap;
        c.eval.test_iterations[0] = 300;
        c.eval.n_test_iterations = 1;
        CHECK_OK(train_on_test_device(&c, NULL));
        psnr[strat] = test_psnr(out, 0);
        if (!strat) continue;
        long most = (long)log_max(out, "gaussians");
        snprintf(p, sizeof p, "%s/memory.json", out);
        json_t *mj = json_load_file(p, 0, NULL);
        CHECK(mj != NULL, "%s unreadable", p);
        json_t *plan = json_object_get(mj, "plan");
        long planned = (long)json_integer_value(json_object_get(plan, "peak_bytes"));
        long measured = (long)json_integer_value(json_object_get(json_object_get(mj, "peak_bytes"), "total"));
        json_t *pk = json_object_get(mj, "peak_bytes");
        long params = (long)json_integer_value(json_object_get(pk, "params"));
        long rows_bytes = params + (long)json_integer_value(json_object_get(pk, "grads")) +
                          (long)json_integer_value(json_object_get(pk, "optimizer")) +
                          (long)json_integer_value(json_object_get(pk, "densify"));
        long plan_rows = (long)cap * (long)(json_integer_value(json_object_get(plan, "bytes_per_gaussian")) +
                                             (long)cs_mcmc_bytes_per_row());
        long plan_cap = (long)json_integer_value(json_object_get(plan, "mcmc_cap"));
        json_decref(mj);
        printf("  mcmc: at most %ld Gaussians logged (cap %d); parameter arrays %ld rows; model and sampling rows "
               "%ld bytes at their peak, planned %ld; accounted peak %.2f MiB, planned %.2f MiB\n", most, cap,
               params / 236, rows_bytes, plan_rows, measured / 1048576.0, planned / 1048576.0);
        CHECK(most == cap && plan_cap == cap, "logged Gaussian counts peaked at %ld with a cap of %d (plan %ld)", most,
              cap, plan_cap);
        CHECK(params == (long)cap * 236, "parameter arrays peaked at %ld rows, not the cap %d", params / 236, cap);
        CHECK(labs(rows_bytes - plan_rows) < plan_rows / 100, "model and sampling rows peaked at %ld bytes, planned %ld",
              rows_bytes, plan_rows);
        /* the renderer's pool is pinned at the plan's pairs: the plan is the peak */
        CHECK(labs(measured - planned) <= planned * 3 / 100, "accounted peak %ld bytes, planned %ld: off by %.1f%%",
              measured, planned, 100.0 * (measured - planned) / planned);
    }
    printf("  test PSNR at 300 iterations with at most %d Gaussians: default %.2f dB, mcmc %.2f dB\n", cap, psnr[0],
           psnr[1]);
    CHECK(psnr[1] > 14 && psnr[1] > psnr[0] - 3, "mcmc PSNR %.2f (default %.2f)", psnr[1], psnr[0]);
    return 0;
}

/* Adam step count stored in a checkpoint's header (-1 if unreadable) */
/* The header of checkpoint PATH into *H; -1 when it is missing or not a checkpoint. */
static int ckpt_read_header(const char *path, cs_ckpt_header *h)
{
    size_t len = 0;
    char *d = cs_read_file(path, &len);
    int rc = d && !cs_checkpoint_header(d, len, path, h) ? 0 : -1;
    free(d);
    return rc;
}

static int ckpt_step(const char *path)
{
    cs_ckpt_header h;
    return ckpt_read_header(path, &h) ? -1 : h.step;
}

/* optim.step_on_densify: gsplat steps Adam on every iteration (120 steps in 120 iterations);
   graphdeco skips the step on its 4 densification iterations (60, 70, 80, 90) */
int test_step_on_densify(void)
{
    char data[600], out[600], ck[800];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    for (int on = 0; on < 2; on++) {
        snprintf(out, sizeof out, "%s/step_on_densify_%d", test_tmpdir(), on);
        cs_config c;
        base_config(&c, data, out);
        c.optim.iterations = 120;
        c.optim.random_init_points = 1000;
        c.optim.step_on_densify = on;
        c.densify.from = 50;
        c.densify.interval = 10;
        c.densify.until = 100;
        c.output.checkpoint_iterations[0] = 120;
        c.output.n_checkpoint_iterations = 1;
        c.data.eval = false;
        CHECK_OK(train_on_test_device(&c, NULL));
        snprintf(ck, sizeof ck, "%s/checkpoints/chkpnt_120.bin", out);
        int step = ckpt_step(ck), want = on ? 120 : 116;
        CHECK(step == want, "step_on_densify %d: %d Adam steps after 120 iterations, expected %d", on, step, want);
    }
    return 0;
}

/* The loss, L1 and PSNR logged while the resolution schedule trains a view smaller are that
   size's means: a frozen model (no step, no densification) logs about the same error at 1/4 size
   as at full size. Dividing the reduced view's sums by the full size's pixels (as the log once
   did) gives 1/16 of the L1 and +12 dB at 1/4 size. */
int test_log_scaled_views(void)
{
    char data[600], out[600];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(out, sizeof out, "%s/log_scaled_views", test_tmpdir());
    cs_config c;
    base_config(&c, data, out);
    c.optim.iterations = 24;
    c.optim.random_init_points = 1000;
    c.optim.res_schedule_start = 4; /* 1/4 size first, full size from 12 */
    c.optim.position_lr_init = c.optim.position_lr_final = 0;
    c.optim.feature_lr = c.optim.feature_rest_lr = c.optim.opacity_lr = c.optim.scaling_lr = c.optim.rotation_lr = 0;
    c.densify.from = 1000;
    c.log.interval = 1;
    c.data.eval = false;
    CHECK_OK(train_on_test_device(&c, NULL));
    json_t *all = log_records(out), *o;
    CHECK(all != NULL, "no train_log.jsonl in %s", out);
    double l1[2] = {0, 0}, psnr[2] = {0, 0};
    int n[2] = {0, 0};
    size_t i;
    json_array_foreach(all, i, o)
    {
        int it = (int)json_integer_value(json_object_get(o, "iteration"));
        int f = cs_res_factor(&c.optim, it, c.optim.iterations), k = f == 4 ? 0 : f == 1 ? 1 : -1;
        if (k < 0) continue;
        l1[k] += json_number_value(json_object_get(o, "l1"));
        psnr[k] += json_number_value(json_object_get(o, "psnr"));
        n[k]++;
    }
    json_decref(all);
    CHECK(n[0] > 0 && n[1] > 0, "records at 1/4 size %d, at full size %d", n[0], n[1]);
    for (int k = 0; k < 2; k++) l1[k] /= n[k], psnr[k] /= n[k];
    CHECK(l1[1] > 0.01 && l1[0] > 0.4 * l1[1] && l1[0] < 2.5 * l1[1] && fabs(psnr[0] - psnr[1]) < 4.0,
          "a frozen model logs L1 %.4f / PSNR %.2f dB at 1/4 size and %.4f / %.2f at full size", l1[0], psnr[0], l1[1],
          psnr[1]);
    return 0;
}

/* Gaussians in a PLY file's header, or -1 */
static int ply_vertices(const char *path)
{
    size_t len = 0;
    char *d = cs_read_file(path, &len);
    const char *e = d ? strstr(d, "element vertex ") : NULL;
    int n = e ? atoi(e + 15) : -1;
    free(d);
    return n;
}

/* The order within an evaluated or saved iteration: graphdeco's clones and splits come after
   the evaluation and the save (the PLY at a densification iteration holds the Gaussians from
   before it, the checkpoint those after it), MCMC's relocation and growth before them (the
   PLY and the checkpoint agree) */
int test_marks_before_densification(void)
{
    char data[600], out[600], path[800];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    for (int mcmc = 0; mcmc < 2; mcmc++) {
        snprintf(out, sizeof out, "%s/marks_order_%d", test_tmpdir(), mcmc);
        cs_config c;
        base_config(&c, data, out);
        c.optim.iterations = 100;
        c.optim.random_init_points = 1000;
        c.densify.strategy = mcmc ? CS_STRATEGY_MCMC : CS_STRATEGY_DEFAULT;
        c.densify.cap_max = 3000;
        c.densify.from = 50, c.densify.interval = 10, c.densify.until = 200;
        c.densify.grad_threshold = 1e-6; /* every Gaussian a candidate: each refinement adds */
        c.output.checkpoint_iterations[0] = 100;
        c.output.n_checkpoint_iterations = 1;
        c.data.eval = false;
        CHECK_OK(train_on_test_device(&c, NULL));
        snprintf(path, sizeof path, "%s/point_cloud/iteration_100/point_cloud.ply", out);
        int saved = ply_vertices(path);
        snprintf(path, sizeof path, "%s/checkpoints/chkpnt_100.bin", out);
        cs_ckpt_header h;        CHECK(!ckpt_read_header(path, &h), "no checkpoint %s", path);
        printf("  %s: %d Gaussians saved at iteration 100, %d in its checkpoint\n", mcmc ? "mcmc" : "default", saved,
               h.n);
        if (mcmc)
            CHECK(saved == h.n, "mcmc: the save at 100 has %d Gaussians, the checkpoint %d", saved, h.n);
        else
            CHECK(saved > 1000 && saved < h.n, "default: the save at 100 has %d Gaussians, the checkpoint %d: the "
                  "save should come before the densification of its iteration", saved, h.n);
    }
    return 0;
}

/* densify.budget: the Gaussians after each refinement stay under the linear curve (or the 1000
   they started from, which a budget never prunes), checked at every densification iteration
   through checkpoints; without it the same run grows past the curve */
int test_density_budget(void)
{
    char data[600], out[600], ck[800];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    const int budget = 4000, marks[4] = {60, 70, 80, 90};
    int grown = 0;
    for (int on = 1; on >= 0; on--) {
        snprintf(out, sizeof out, "%s/density_budget_%d", test_tmpdir(), on);
        cs_config c;
        base_config(&c, data, out);
        c.optim.iterations = 95;
        c.optim.random_init_points = 1000;
        c.densify.from = 50, c.densify.interval = 10, c.densify.until = 100;
        c.densify.grad_threshold = 1e-6; /* every Gaussian a candidate: only the budget holds them */
        c.densify.budget = on ? budget : 0;
        for (int i = 0; i < 4; i++) c.output.checkpoint_iterations[i] = marks[i];
        c.output.n_checkpoint_iterations = 4;
        c.data.eval = false;
        CHECK_OK(train_on_test_device(&c, NULL));
        for (int i = 0; i < 4; i++) {
            snprintf(ck, sizeof ck, "%s/checkpoints/chkpnt_%d.bin", out, marks[i]);
            cs_ckpt_header h;            CHECK(!ckpt_read_header(ck, &h), "no checkpoint %s", ck);
            int allowed = (int)ceil(budget * (marks[i] - 50) / 50.0);
            allowed = allowed > 1000 ? allowed : 1000;
            if (on) CHECK(h.n <= allowed, "iteration %d: %d Gaussians, the budget's curve allows %d", marks[i], h.n, allowed);
            else grown += h.n > allowed;
        }
    }
    CHECK(grown, "without the budget the run never passed the curve: the test shows nothing");
    return 0;
}

/* densify.prune_fraction in a training run: at densify.until the count falls from the
   checkpoint of the iteration before to exactly that less the fraction, rounded down (a
   checkpoint holds the model after its iteration's density control), and the test PSNR at the end stays within
   MARGIN dB of the same run without it (PoCL, 2026-12-03: 20.21-20.30 dB with a 0.4 prune,
   20.08-20.16 without; a build that dropped the most important rows instead: 17.93) */
int test_importance_prune_train(void)
{
    char data[600], out[600], ck[800];
    snprintf(data, sizeof data, "%s/demo40", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    const double fraction = 0.4, margin = 1.0;
    double psnr[2] = {0, 0};
    int n[2][2] = {{0, 0}, {0, 0}};
    for (int on = 0; on < 2; on++) {
        snprintf(out, sizeof out, "%s/importance_prune_%d", test_tmpdir(), on);
        cs_config c;
        base_config(&c, data, out);
        c.optim.iterations = 300;
        c.densify.from = 50, c.densify.interval = 25, c.densify.until = 200;
        c.densify.prune_fraction = on ? fraction : 0;
        c.output.checkpoint_iterations[0] = 199, c.output.checkpoint_iterations[1] = 200;
        c.output.n_checkpoint_iterations = 2;
        CHECK_OK(train_on_test_device(&c, NULL));
        for (int k = 0; k < 2; k++) {
            snprintf(ck, sizeof ck, "%s/checkpoints/chkpnt_%d.bin", out, 199 + k);
            cs_ckpt_header h;
            CHECK(!ckpt_read_header(ck, &h), "no checkpoint %s", ck);
            n[on][k] = (int)h.n;
        }
        psnr[on] = test_psnr(out, 0);
    }
    int want = n[1][0] - (int)(fraction * n[1][0]);
    printf("  demo 40x30, 300 iterations: %d -> %d Gaussians at 199 / 200 with the prune, %.2f dB at 300 (%d, %.2f dB "
           "without)\n", n[1][0], n[1][1], psnr[1], n[0][1], psnr[0]);
    CHECK(n[0][1] == n[0][0] && n[1][1] == want, "the counts at 199 / 200: %d / %d with the prune (want %d), %d / %d "
          "without", n[1][0], n[1][1], want, n[0][0], n[0][1]);
    CHECK(psnr[1] > psnr[0] - margin, "test PSNR %.2f after the prune, %.2f without", psnr[1], psnr[0]);
    return 0;
}

/* device, host (two upload slots on a second queue) and lazy residency (no cache, and a
   1 MiB cache smaller than the images, so views are evicted and decoded again; one and four
   decoding threads) train the same model: the same images reach the same kernels */
int test_image_residency(void)
{
    char data[600], out[600], ply[800], first[800];
    snprintf(data, sizeof data, "%s/demo160", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 160, 120)); /* 40 views of 56 KiB: 2.2 MiB */
    const char *names[5] = {"device", "host", "lazy_nocache", "lazy_1mb", "lazy_4_threads"};
    int modes[5] = {CS_RES_DEVICE, CS_RES_HOST, CS_RES_LAZY, CS_RES_LAZY, CS_RES_LAZY}, cache[5] = {2048, 2048, 0, 1, 0};
    int threads[5] = {0, 0, 1, 0, 4};
    for (int m = 0; m < 5; m++) {
        snprintf(out, sizeof out, "%s/residency_%s", test_tmpdir(), names[m]);
        cs_config c;
        base_config(&c, data, out);
        c.optim.iterations = 40;
        c.optim.deterministic = true;
        c.optim.random_init_points = 1000;
        c.densify.from = 20;
        c.densify.interval = 10;
        c.densify.until = 35;
        c.data.image_residency = modes[m];
        c.data.host_cache_mb = cache[m];
        c.data.decode_threads = threads[m];
        c.eval.test_iterations[0] = 20;
        c.eval.n_test_iterations = 1;
        CHECK_OK(train_on_test_device(&c, NULL));
        snprintf(ply, sizeof ply, "%s/point_cloud/iteration_40/point_cloud.ply", out);
        if (m == 0) {
            snprintf(first, sizeof first, "%s", ply);
        } else {
            CHECK(files_equal(first, ply), "residency %s trains a different model than device residency (%s vs %s)",
                  names[m], ply, first);
        }
        /* the evaluation at iteration 20 and the end read test views from disk in every mode */
        CHECK(test_psnr(out, 1) > 5, "%s: no evaluation record", names[m]);
    }
    return 0;
}

/* memory.max_gaussians: densification wanting far more (threshold 1e-7) stays at the cap, and
 * the arrays' spare capacity does not go past it either */
int test_gaussian_cap(void)
{
    char data[600], out[600], p[800];
    snprintf(data, sizeof data, "%s/demo80", test_tmpdir());
    snprintf(out, sizeof out, "%s/gaussian_cap", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 80, 60));
    cs_config c;
    base_config(&c, data, out);
    const int cap = 5000;
    c.optim.iterations = 200;
    c.densify.grad_threshold = 1e-7;
    c.densify.min_opacity = 0.0;
    c.memory.max_gaussians = cap;
    c.output.checkpoint_iterations[0] = 200; /* the count after the last densification, which
                                                comes after the last log line */
    c.output.n_checkpoint_iterations = 1;
    CHECK_OK(train_on_test_device(&c, NULL));
    long most = (long)log_max(out, "gaussians");
    snprintf(p, sizeof p, "%s/checkpoints/chkpnt_200.bin", out);
    cs_ckpt_header h;    CHECK(!ckpt_read_header(p, &h), "no checkpoint %s", p);
    most = h.n > most ? h.n : most;
    snprintf(p, sizeof p, "%s/memory.json", out);
    json_t *mj = json_load_file(p, 0, NULL);
    long params = (long)json_integer_value(json_object_get(json_object_get(mj, "current_bytes"), "params"));
    json_decref(mj);
    printf("  at most %ld Gaussians logged (cap %d, start 4000); parameter arrays %ld bytes = %ld rows\n", most, cap,
           params, params / 236);
    CHECK(most <= cap && most > 4000, "logged Gaussian counts peaked at %ld with a cap of %d", most, cap);
    CHECK(params > 0 && params <= (long)cap * 236, "parameter arrays hold %ld rows, past the cap %d", params / 236, cap);
    return 0;
}

int test_eval_memory_flat(void)
{
    char data[600], out[600];
    snprintf(data, sizeof data, "%s/demo48", test_tmpdir()); /* LPIPS takes 31x31 and more */
    snprintf(out, sizeof out, "%s/eval_mem", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 48, 36));
    CHECK_OK(cs_mkdirs(out));
    cs_config c;
    base_config(&c, data, out);
    c.data.eval = false; /* all 60 views load as training views; the test marks some as test */
    cs_scene scene;
    CHECK_OK(cs_scene_load(&c.data, &scene));
    cs_splats s;
    CHECK_OK(cs_init_splats(&scene, &c.model, &c.optim, &s));
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    size_t peak[3];
    int counts[3] = {3, 30, 30};
    /* copies of one camera, so only the number of views changes between the two runs; the
       third run adds LPIPS, which may add its weights and scratch and nothing else */
    for (int i = 1; i < scene.n_cams; i++) scene.cams[i] = scene.cams[0];
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < scene.n_cams; i++) scene.cams[i].is_test = i < counts[r];
        if (r == 2) snprintf(c.eval.lpips_weights, sizeof c.eval.lpips_weights, "%s", test_lpips_weights());
        cs_mem_reset_peak(&cl);
        CHECK_OK(cs_evaluate_model(&cl, &c, &scene, &s, out, r));
        peak[r] = cl.mem.peak_total;
    }
    cs_cl_close(&cl);
    cs_splats_free(&s);
    size_t lp = cs_lpips_bytes(scene.cams[0].width, scene.cams[0].height);
    cs_scene_free(&scene);
    printf("  evaluation peak: %zu bytes with 3 test views, %zu with 30, %zu with LPIPS (its plan: %zu)\n", peak[0],
           peak[1], peak[2], lp);
    CHECK(peak[0] == peak[1], "evaluation peak grows with the number of views: %zu vs %zu", peak[0], peak[1]);
    CHECK(peak[2] > peak[1] && peak[2] <= peak[1] + lp, "LPIPS adds %zu bytes to the peak, planned %zu",
          peak[2] - peak[1], lp);
    return 0;
}

/* ---- real scenes (../shared/data, `make check-real`) ----------------------------------- */

static const char *real_root(void)
{
    const char *r = getenv("CLSPLAT_REAL_DATA");
    return r ? r : "../shared/data";
}

int test_real_colmap_split(void)
{
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s/south_building", real_root());
    c.data.eval = true;
    cs_scene s;
    CHECK_OK(cs_scene_load(&c.data, &s));
    CHECK(s.n_cams == 128 && s.n_points == 18312 && cs_scene_count(&s, 1) == 16, "cams %d points %d test %d", s.n_cams,
          s.n_points, cs_scene_count(&s, 1));
    CHECK(s.cams[0].width == 1030 && s.cams[0].height == 770 && fabs(s.cams[0].fx - 853.15) < 0.01, "intrinsics");
    char p[700];
    snprintf(p, sizeof p, "%s/south_building/test_split_llffhold8.txt", real_root());
    char *list = cs_read_file(p, NULL);
    CHECK(list != NULL, "%s", cs_last_error());
    for (int i = 0; i < s.n_cams; i++)
        if (s.cams[i].is_test) CHECK(strstr(list, s.cams[i].name), "test view %s not in the published split", s.cams[i].name);
    free(list);
    cs_scene_free(&s);
    return 0;
}

static int real_train(const char *scene, int white, int iters, double min_psnr, double min_gain)
{
    char data[600], out[600];
    snprintf(data, sizeof data, "%s/%s", real_root(), scene);
    snprintf(out, sizeof out, "%s/real_%s", test_tmpdir(), scene);
    cs_config c;
    base_config(&c, data, out);
    c.data.resolution = 8;
    c.data.white_background = white;
    c.optim.iterations = iters;
    c.optim.random_init_points = 10000;
    c.optim.position_lr_max_steps = iters;
    c.densify.from = 100;
    c.densify.until = iters - 50;
    c.log.interval = 50;
    c.eval.test_iterations[0] = 1;
    c.eval.n_test_iterations = 1;
    CHECK_OK(train_on_test_device(&c, NULL));
    double l50 = log_loss(out, 50), l100 = log_loss(out, 100), p1 = test_psnr(out, 1), p = test_psnr(out, 0);
    printf("  %s at 1/8 resolution, %d iterations: loss %.4f at 50, %.4f at 100; test PSNR %.2f at 1, %.2f at the end\n",
           scene, iters, l50, l100, p1, p);
    CHECK(l100 < l50, "loss did not fall: %g -> %g", l50, l100);
    CHECK(p > min_psnr && p > p1 + min_gain, "test PSNR %.2f (from %.2f) below %.2f or gained under %.1f dB", p, p1,
          min_psnr, min_gain);
    return 0;
}

/* thresholds from PoCL runs on this 2-core machine (see the issue notes) */
int test_real_south_building(void) { return real_train("south_building", 0, 500, 18.0, 4.0); }
int test_real_lego(void) { return real_train("lego", 1, 500, 20.0, 8.0); }
