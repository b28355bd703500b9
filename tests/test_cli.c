/* test_cli: the command line as a user meets it, through the clsplat binary (CLSPLAT_BIN,
 * default ./build/clsplat) on a tiny generated scene: each command rejects options that are
 * not its own, graphdeco's flags work, settings resolve in the documented order, metrics.json
 * accumulates, an output folder holding a run is refused without --force, --resume reads the
 * run's config.json, cfg_args and the renders / gt layout are written. */
#include <jansson.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cl_runtime.h"
#include "cli_run.h"
#include "config.h"
#include "fixtures.h"
#include "image.h"
#include "progress.h"
#include "test.h"
#include "util.h"


/* the common flags of a tiny run: no tuning, few points, densification early */
#define TINY "--set device.tune=off --set optim.random_init_points=800 --set densify.from=2 --set log.interval=2"

int test_cli_arguments(void)
{
    char log[600];
    snprintf(log, sizeof log, "%s/cli.log", test_tmpdir());
    struct { const char *args, *expect; int status; } cases[] = {
        {"train --ply x.ply", "'--ply' is not an option of 'clsplat train'", 2},
        {"train --split test", "'--split' is not an option of 'clsplat train'", 2},
        {"info -s somewhere", "'-s' is not an option of 'clsplat info'", 2},
        {"eval --iterations 3", "'--iterations' is not an option of 'clsplat eval'", 2},
        {"bench --iters abc -s x --ply y", "--iters: 'abc' is not a whole number", 2},
        {"bench --view -1 -s x --ply y", "--view: '-1' is not a whole number >= 0", 2},
        {"mesh -m x --carve -1", "--carve: '-1' is not a number >= 0", 2},
        {"train --iterations", "--iterations needs a value", 2},
        {"train --test_iterations --eval", "--test_iterations needs at least one value", 2},
        {"frobnicate", "unknown command 'frobnicate'", 2},
        {"eval", "eval needs -m OUTDIR", 2},
        {"render", "render needs -m OUTDIR", 2},
        {"info", "info needs a scene file", 2},
        {"export -m x", "export needs --format", 2},
        {"export --format spz", "export needs -m OUTDIR or --ply FILE", 2},
        {"config", "config needs --list", 2},
        {"train -s /nonexistent/scene --iterations 5", "dataset folder /nonexistent/scene does not exist", 1},
        {"train -s x --set optim.iterations=abc", "--set: key 'optim.iterations' must be an integer", 2},
        {"train -s x --iterations -5", "--iterations: key 'optim.iterations' = -5 is out of range", 2},
        /* #33 item 8: values and names on the command line are usage errors, with a suggestion */
        {"train -s x -r 3", "-r: key 'data.resolution' = 3: allowed are 1, 2, 4, 8", 2},
        {"train -s x --iteration 5", "(did you mean '--iterations'?", 2},
        {"train -s x --white-background", "(did you mean '--white_background'?", 2},
        {"train -s x --set optim.iteratons=5", "did you mean 'optim.iterations'?", 2},
        {"train -s x --data_device gpu", "--data_device: 'gpu' is cpu (images in host memory) or cuda", 2},
        {"train -s /nonexistent/scene --data_device cpu --test_iterations -1", "dataset folder /nonexistent/scene", 1},
        {"train -s x --optimizer_type adamw", "--optimizer_type: 'adamw' is default (Adam over every Gaussian) or sparse_adam", 2},
        {"render --eval -w --ply x.ply", "render needs -m OUTDIR, or --ply FILE and -s DATASET", 2},
        {"--version", "clsplat 0.9.0", 0},
        {"train --help", "--white_background", 0},
        {"config --list", "optim.steps_scale", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int st = cli_run("", log, "%s", cases[i].args);
        if (st != cases[i].status || !file_contains(log, cases[i].expect)) {
            char *d = cs_read_file(log, NULL);
            fprintf(stderr, "  clsplat %s: exit %d (want %d), output:\n%s\n", cases[i].args, st, cases[i].status,
                    d ? d : "");
            free(d);
            CHECK(0, "case %zu", i);
        }
    }
    /* a path longer than the setting holds is refused, not cut (it once wrote into the parent) */
    char longo[1200];
    memset(longo, 'x', sizeof longo - 1);
    longo[sizeof longo - 1] = '\0';
    CHECK(cli_run("", log, "train -s x -o %s", longo) == 2 && file_contains(log, "-o: key 'output.dir' is too long"),
          "an over-long -o");
    /* a failed dataset load leaves no output folder behind */
    char out[600];
    snprintf(out, sizeof out, "%s/cli_never", test_tmpdir());
    CHECK(cli_run("", log, "train -s /nonexistent/scene -o %s", out) == 1 && !cs_dir_exists(out), "empty output folder");
    /* every key of the table is listed */
    CHECK(cli_run("", log, "config --list") == 0, "config --list");
    char *list = cs_read_file(log, NULL);
    int n = 0;
    for (char *p = list; p && (p = strstr(p, "\n    ")); p++) n++;
    free(list);
    CHECK(n >= 50, "config --list lists %d keys", n);
    return 0;
}

/* the number of records in OUT/metrics.json, and the source of the last */
static int metrics_records(const char *out, char *last_source, size_t n)
{
    char p[700];
    snprintf(p, sizeof p, "%s/metrics.json", out);
    json_t *j = json_load_file(p, 0, NULL);
    int count = json_is_array(j) ? (int)json_array_size(j) : -1;
    const char *src = count > 0 ? json_string_value(json_object_get(json_array_get(j, count - 1), "source")) : NULL;
    snprintf(last_source, n, "%s", src ? src : "");
    json_decref(j);
    return count;
}

/* the PSNR of OUT/metrics.json's last two records, both drawn under the views' exposures */
static int records_psnr(const char *out, double *before_last, double *last)
{
    char p[700];
    snprintf(p, sizeof p, "%s/metrics.json", out);
    json_t *j = json_load_file(p, 0, NULL);
    size_t n = json_array_size(j);
    int ok = n >= 2;
    for (size_t i = n - 2; ok && i < n; i++) {
        json_t *r = json_array_get(j, i);
        ok = json_is_number(json_object_get(r, "psnr")) && json_integer_value(json_object_get(r, "exposure_nearest")) > 0;
        *(i == n - 1 ? last : before_last) = json_number_value(json_object_get(r, "psnr"));
    }
    json_decref(j);
    return ok;
}

/* true when OUT/checkpoints holds exactly the iterations listed in WANT ("6 8"), in order */
static int checkpoints_are(const char *out, const char *want)
{
    char got[256] = "", p[800];
    for (int it = 0; it <= 100; it++) {
        snprintf(p, sizeof p, "%s/checkpoints/chkpnt_%d.bin", out, it);
        if (cs_file_exists(p)) snprintf(got + strlen(got), sizeof got - strlen(got), "%s%d", got[0] ? " " : "", it);
    }
    return !strcmp(got, want);
}

/* train_seconds of OUT/result.json (written when a run finishes), or -1 */
static double result_seconds(const char *out)
{
    char p[700];
    snprintf(p, sizeof p, "%s/result.json", out);
    json_t *j = json_load_file(p, 0, NULL);
    json_t *v = json_object_get(j, "train_seconds");
    double s = json_is_number(v) ? json_number_value(v) : -1;
    json_decref(j);
    return s;
}

/* DIR/exposure.json (optim.exposure) as graphdeco writes it: a 3 x 4 matrix of numbers for each
   of the scene's training views (DATA/transforms_train.json's frames), named by its photo */
static int exposure_json_ok(const char *dir, const char *data)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/transforms_train.json", data);
    json_t *tr = json_load_file(p, 0, NULL);
    snprintf(p, sizeof p, "%s/exposure.json", dir);
    json_t *ex = json_load_file(p, 0, NULL);
    size_t frames = json_array_size(json_object_get(tr, "frames"));
    int ok = ex && json_object_size(ex) == frames && frames > 0, moved = 0;
    const char *key;
    json_t *m;
    json_object_foreach(ex, key, m) {
        ok = ok && json_array_size(m) == 3 && strstr(key, ".png") != NULL;
        for (size_t r = 0; ok && r < 3; r++) {
            json_t *row = json_array_get(m, r);
            ok = json_array_size(row) == 4;
            for (size_t c = 0; ok && c < 4; c++) {
                ok = json_is_number(json_array_get(row, c));
                moved += fabs(json_number_value(json_array_get(row, c)) - (r == c ? 1.0 : 0.0)) > 1e-4;
            }
        }
    }
    if (!ok) fprintf(stderr, "  %s: not %zu views' 3 x 4 matrices\n", p, frames);
    if (ok && !moved) fprintf(stderr, "  %s: every view's transform is still the identity\n", p);
    ok = ok && moved;
    json_decref(tr), json_decref(ex);
    return ok;
}

/* the number of pixels of PATH (a PNG) within 1 of RGB; *N: its pixels */
static long pixels_of(const char *path, const int rgb[3], long *n)
{
    cs_image img;
    *n = 0;
    if (cs_image_load(path, &img)) return -1;
    long hit = 0;
    *n = (long)img.width * img.height;
    for (long i = 0; i < *n; i++) {
        const uint8_t *q = img.px + (size_t)img.channels * i;
        hit += abs(q[0] - rgb[0]) <= 1 && abs(q[1] - rgb[1]) <= 1 && abs(q[2] - rgb[2]) <= 1;
    }
    cs_image_free(&img);
    return hit;
}

/* render -m draws the views under the model's exposure.json, as the evaluation does: with every
   training view's transform made one constant colour (a zero matrix, offsets 0.2 0.4 0.6), every
   pixel of a held-out view's render is that colour (the blend of equal rows); with --no-exposure
   none need be. The run's own file is put back after. */
static int render_exposure(const char *out, const char *log)
{
    char p[900], dir[900];
    snprintf(p, sizeof p, "%s/point_cloud/iteration_10/exposure.json", out);
    size_t len;
    char *kept = cs_read_file(p, &len);
    json_t *ex = json_load_file(p, 0, NULL);
    CHECK(kept && json_object_size(ex) > 0, "no %s to start from", p);
    const char *key;
    json_t *m;
    json_object_foreach(ex, key, m) {
        json_object_set_new(ex, key, json_pack("[[ffff][ffff][ffff]]", 0., 0., 0., .2, 0., 0., 0., .4, 0., 0., 0., .6));
    }
    int rc = json_dump_file(ex, p, 0);
    json_decref(ex);
    const int want[3] = {51, 102, 153};
    long hit[2] = {-1, -1}, n[2] = {0, 0};
    for (int k = 0; k < 2 && !rc; k++) {
        snprintf(dir, sizeof dir, "%s/renders_exposure%d", out, k);
        rc = cli_run("", log, "render -m %s -o %s%s", out, dir, k ? " --no-exposure" : "") != 0 ||
             file_contains(log, "per-view exposure") != !k;
        snprintf(dir + strlen(dir), sizeof dir - strlen(dir), "/r_0.png");
        if (!rc) hit[k] = pixels_of(dir, want, &n[k]);
    }
    int back = cs_write_file_atomic(p, kept, len);
    free(kept);
    CHECK(!rc && !back, "render under a constant exposure.json failed, or it was (not) said, or the file was not put "
          "back: see %s", log);
    CHECK(n[0] > 0 && hit[0] == n[0] && hit[1] < n[1], "the held-out render has %ld of %ld pixels in the exposure's "
          "colour (all expected); with --no-exposure %ld of %ld (not all)", hit[0], n[0], hit[1], n[1]);
    return 0;
}

int test_cli_runs(void)
{
    char data[600], out[600], log[700], p[900], cfgp[700];
    snprintf(data, sizeof data, "%s/cli_scene", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(out, sizeof out, "%s/cli_run", test_tmpdir());
    snprintf(log, sizeof log, "%s/cli_run.log", test_tmpdir());
    /* a config whose CPU count must lose against an explicit --iterations */
    snprintf(cfgp, sizeof cfgp, "%s/cli_cfg.json", test_tmpdir());
    const char *cfg = "{\"optim\": {\"iterations\": 500, \"iterations_on_cpu\": 7}, \"eval\": {\"save_renders\": true}}";
    CHECK_OK(cs_write_file_atomic(cfgp, cfg, strlen(cfg)));
    /* graphdeco's flags: -m is the output folder, --eval, --test_iterations, --save_iterations,
       --optimizer_type */
    CHECK(cli_run("", log, "train -c %s -s %s -m %s --eval --iterations 10 --test_iterations 4 10 --save_iterations 10 "
                       "--checkpoint_iterations 6 --optimizer_type sparse_adam --set optim.exposure=true " TINY, cfgp,
                  data, out) == 0,
          "training failed, see %s", log);
    snprintf(p, sizeof p, "%s/config.json", out);
    CHECK(file_contains(p, "\"sparse_adam\": true"), "--optimizer_type sparse_adam did not set optim.sparse_adam");
    snprintf(p, sizeof p, "%s/point_cloud/iteration_10/point_cloud.ply", out);
    CHECK(cs_file_exists(p), "--iterations 10 did not win over iterations_on_cpu (no %s)", p);
    /* cfg_args as graphdeco writes it, and renders beside their ground truth */
    snprintf(p, sizeof p, "%s/cfg_args", out);
    CHECK(file_contains(p, "Namespace(data_device='cuda'") && file_contains(p, "eval=True") && file_contains(p, "source_path='/"),
          "cfg_args");
    snprintf(p, sizeof p, "%s/test/ours_10/renders/r_0.png", out);
    CHECK(cs_file_exists(p), "no %s", p);
    snprintf(p, sizeof p, "%s/test/ours_10/gt/r_0.png", out);
    CHECK(cs_file_exists(p), "no %s", p);
    char src[32];
    CHECK(metrics_records(out, src, sizeof src) == 2 && !strcmp(src, "train"), "training's records");
    /* optim.exposure: the views' transforms beside the model */
    snprintf(p, sizeof p, "%s/point_cloud/iteration_10", out);
    CHECK(exposure_json_ok(p, data), "optim.exposure's exposure.json");
    /* eval appends its record, the test views drawn under the same exposures as the training's
       last evaluation (held-out views: their nearest training views'), so the same PSNR */
    CHECK(cli_run("", log, "eval -m %s", out) == 0, "eval failed, see %s", log);
    CHECK(metrics_records(out, src, sizeof src) == 3 && !strcmp(src, "eval"), "eval lost or did not add a record");
    double tr_psnr, ev_psnr;
    CHECK(records_psnr(out, &tr_psnr, &ev_psnr), "metrics.json's last two records: no psnr or no exposure_nearest");
    CHECK(fabs(tr_psnr - ev_psnr) < 1e-3, "eval -m reads %.4f dB where the training's evaluation read %.4f", ev_psnr,
          tr_psnr);
    CHECK(render_exposure(out, log) == 0, "render -m under the model's exposures (above)");
    /* the same folder again: refused; with --force the earlier run's outputs go */
    CHECK(cli_run("", log, "train -c %s -s %s -o %s --iterations 8 " TINY, cfgp, data, out) == 1 &&
              file_contains(log, "holds another run"), "a run folder was reused without --force");
    /* without --iterations the config's CPU count applies (7): the test device is a CPU in CI */
    CHECK(cli_run("", log, "train -c %s -s %s -o %s --force " TINY, cfgp, data, out) == 0, "--force run failed");
    snprintf(p, sizeof p, "%s/point_cloud/iteration_10", out);
    CHECK(!cs_dir_exists(p), "--force kept the earlier run's iteration_10");
    char p7[900], p500[900];
    snprintf(p7, sizeof p7, "%s/point_cloud/iteration_7", out);
    snprintf(p500, sizeof p500, "%s/point_cloud/iteration_500", out);
    CHECK(cs_dir_exists(p7) != cs_dir_exists(p500), "neither the CPU count (7) nor the count (500) was trained");
    /* --resume reads the run's config.json (no -c, no -s) and finishes the run */
    /* periodic checkpoints (every 4) replace each other; the kept mark (6) stays */
    CHECK(cli_run("", log, "train -c %s -s %s -o %s --force --iterations 10 --checkpoint_iterations 6 "
                  "--set output.checkpoint_interval=4 --set optim.exposure=true " TINY, cfgp, data, out) == 0,
          "run for resume");
    CHECK(checkpoints_are(out, "6 8"), "periodic checkpoints: 4 not replaced by 8, or the mark 6 removed");
    /* optim.exposure: the views' transforms beside each checkpoint, replaced with it */
    for (int it = 4; it <= 8; it += 2) {
        snprintf(p, sizeof p, "%s/checkpoints/chkpnt_%d.exposure.json", out, it);
        CHECK(cs_file_exists(p) == (it != 4), "%s %s", p, it == 4 ? "was kept with its checkpoint removed" : "is missing");
    }
    double secs = result_seconds(out);
    CHECK(secs > 0, "no result.json with train_seconds after a finished run");
    CHECK(cli_run("", log, "train --resume %s/checkpoints/chkpnt_8.bin", out) == 0 && file_contains(log, "resumed from"),
          "--resume without -c/-s failed, see %s", log);
    CHECK(file_contains(log, "views' exposures from"), "the resume did not read chkpnt_8.exposure.json, see %s", log);
    CHECK(result_seconds(out) > 0, "no result.json after a resumed run");
    CHECK(cli_run("", log, "render -m %s --split bogus", out) == 1 && file_contains(log, "unknown split 'bogus'"),
          "render --split bogus");
    /* no -o: a fresh output/<date-time> in the working folder, as graphdeco's output/<id> */
    char cwd[700], cmd[2400];
    snprintf(cwd, sizeof cwd, "%s/cli_cwd", test_tmpdir());
    CHECK_OK(cs_mkdirs(cwd));
    const char *b = cli_bin();
    char absbin[1200];
    if (b[0] == '/') snprintf(absbin, sizeof absbin, "%s", b);
    else CHECK(realpath(b, absbin) != NULL, "no %s", b);
    snprintf(cmd, sizeof cmd, "cd %s && XDG_CACHE_HOME=%s/cli_cache %s train -s %s --iterations 3 " TINY " > %s 2>&1 && "
             "ls output/*/config.json > /dev/null", cwd, test_tmpdir(), absbin, data, log);
    CHECK(system(cmd) == 0, "no output/<date-time>/config.json, see %s", log);
    snprintf(p, sizeof p, "%s/point_cloud/iteration_10/point_cloud.ply", out);
    CHECK(cli_run("", log, "bench -s %s --ply %s --view 999 --iters 1", data, p) == 1 &&
              file_contains(log, "--view 999: the dataset has views 0 to"), "bench --view out of range");
    /* a real bench run: its kernel options once held an uninitialised program set */
    CHECK(cli_run("", log, "bench -s %s --ply %s --iters 2", data, p) == 0 && file_contains(log, "rasterize bwd") &&
              file_contains(log, "sum of stages") && file_contains(log, "by kernel (mean a pass)") &&
              file_contains(log, " rasterize_fwd ") && file_contains(log, " bin_sort_tiles "),
          "bench on the trained PLY, see %s", log);
    return 0;
}

/* train --profile: one table a phase of the resolution schedule, the evaluations left out; with
   device.tile_choice measure, both tiles' kernels and a choice at the first iteration */
int test_train_profile(void)
{
    char data[600], out[600], log[700];
    snprintf(data, sizeof data, "%s/cli_scene", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(out, sizeof out, "%s/cli_profile", test_tmpdir());
    snprintf(log, sizeof log, "%s/cli_profile.log", test_tmpdir());
    /* 12 iterations from 1/4 size, full size from 6: the divisors 4, 3, 2, 2, 2, then 1 */
    CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 12 --eval --test_iterations 4 12 --profile "
                  "--set optim.res_schedule_start=4 " TINY, data, out) == 0,
          "train --profile failed, see %s", log);
    const char *phases[] = {"profile: iterations 1-1 at 1/4 size", "profile: iterations 2-2 at 1/3 size",
                            "profile: iterations 3-5 at 1/2 size", "profile: iterations 6-12 at 1/1 size"};
    for (int i = 0; i < 4; i++) CHECK(file_contains(log, phases[i]), "no '%s' in %s", phases[i], log);
    CHECK(file_contains(log, "by kernel (ms and launches an iteration):") && file_contains(log, " rasterize_bwd ") &&
              file_contains(log, "between kernels"),
          "the profile names no kernels, see %s", log);
    /* the evaluations' kernels are not the loop's: ssim_fwd runs once an iteration, and the
       evaluation at 12 (two test views) would add to it */
    size_t len = 0;
    char *text = cs_read_file(log, &len);
    CHECK(text != NULL, "cannot read %s", log);
    const char *last = strstr(text, phases[3]), *ssim = last ? strstr(last, " ssim_fwd ") : NULL;
    double ms = -1, launches = -1;
    int got = ssim ? sscanf(ssim, " ssim_fwd %lf ms x%lf", &ms, &launches) : 0;
    free(text);
    CHECK(got == 2 && ms >= 0 && launches == 1.0, "ssim_fwd in the last phase: %d values, %g launches an iteration, "
          "see %s", got, launches, log);
    CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 3 --set device.tile_choice=measure " TINY, data,
                  out) == 0 && !file_contains(log, "profile: iterations"),
          "a run without --profile printed a profile, see %s", log);
    CHECK(file_contains(log, "the faster measured during training (device.tile_choice)") &&
              file_contains(log, "from iteration 1 (a pass"),
          "device.tile_choice measure: no choice at the first iteration, see %s", log);
    return 0;
}

/* the progress line fits the terminal and shows what it promises */
int test_progress_line(void)
{
    cs_progress p;
    cs_progress_start(&p, 0, 30000);
    p.its = 100.0, p.loss = 0.05, p.psnr = 27.5;
    char line[512];
    cs_progress_format(&p, 12000, 543210, (size_t)1200 << 20, (size_t)15000 << 20, 120, line, sizeof line);
    CHECK(strlen(line) <= 119 && strstr(line, "40.0%") && strstr(line, "12000/30000") && strstr(line, "0:03:00") &&
              strstr(line, "loss 0.0500") && strstr(line, "psnr 27.50") && strstr(line, "543210 G") &&
              strstr(line, "100.0 it/s") && strstr(line, "1200/15000 MiB") && strchr(line, '['),
          "wide line: '%s'", line);
    cs_progress_format(&p, 12000, 543210, (size_t)1200 << 20, (size_t)15000 << 20, 50, line, sizeof line);
    CHECK(strlen(line) <= 49 && strstr(line, "12000/30000") && !strchr(line, '\n'), "narrow line: '%s'", line);
    char hms[32];
    cs_format_hms(75235, hms, sizeof hms);
    CHECK(!strcmp(hms, "20:53:55"), "h:mm:ss %s", hms);
    return 0;
}

/* settings precedence through the parser alone: flags and --set in order over the file;
 * an explicit count beats iterations_on_cpu and is the count trained under steps_scale */
int test_cli_precedence(void)
{
    char cfgp[700];
    snprintf(cfgp, sizeof cfgp, "%s/prec.json", test_tmpdir());
    const char *text = "{\"optim\": {\"iterations\": 30000, \"iterations_on_cpu\": 1000, \"steps_scale\": 0.25},"
                       " \"data\": {\"resolution\": 4}}";
    CHECK_OK(cs_write_file_atomic(cfgp, text, strlen(text)));
    char *argv[] = {"clsplat", "train", "-c", cfgp, "-r", "2", "--set", "data.resolution=8", "--iterations", "400", NULL};
    cs_args a;
    CHECK_OK(cs_cli_parse(10, argv, &a));
    cs_config c;
    cs_config_defaults(&c);
    CHECK_OK(cs_config_load_file(&c, a.config));
    CHECK_OK(cs_cli_apply(&a, &c));
    cs_cli_free(&a);
    CHECK(c.data.resolution == 8, "the later --set should win over -r: %d", c.data.resolution);
    CHECK(c.device.tile_choice == CS_TILES_AUTO, "device.tile_choice defaults to %d, not auto", c.device.tile_choice);
    CHECK(c.optim.iterations_on_cpu == 0, "iterations_on_cpu survived an explicit --iterations");
    cs_config_scale_steps(&c);
    CHECK(c.optim.iterations == 400 && c.densify.interval == 25, "trained %d iterations, interval %d",
          c.optim.iterations, c.densify.interval);
    /* without --iterations the file's CPU count stays */
    char *argv2[] = {"clsplat", "train", "-c", cfgp, NULL};
    CHECK_OK(cs_cli_parse(4, argv2, &a));
    cs_config_defaults(&c);
    CHECK_OK(cs_config_load_file(&c, a.config));
    CHECK_OK(cs_cli_apply(&a, &c));
    cs_cli_free(&a);
    CHECK(c.optim.iterations_on_cpu == 1000 && c.data.resolution == 4, "file values");
    /* a mesh flag reaches its field (main.c copies it into the mesher's options) */
    char *argv3[] = {"clsplat", "mesh", "-m", "x", "--carve-dropped", "--shell-fit", NULL};
    CHECK_OK(cs_cli_parse(6, argv3, &a));
    bool carve_dropped = a.carve_dropped && a.command == CS_CMD_MESH, shell_fit = a.shell_fit;
    cs_cli_free(&a);
    CHECK(carve_dropped && shell_fit, "mesh --carve-dropped --shell-fit: parsed %d %d", carve_dropped, shell_fit);
    char *argv4[] = {"clsplat", "mesh", "-m", "x", NULL};
    CHECK_OK(cs_cli_parse(4, argv4, &a));
    carve_dropped = a.carve_dropped, shell_fit = a.shell_fit;
    cs_cli_free(&a);
    CHECK(!carve_dropped && !shell_fit, "mesh without --carve-dropped or --shell-fit: set %d %d", carve_dropped, shell_fit);
    return 0;
}

/* device.float_atomics and device.fast_math force each path: the CAS loop and fast math run
   anywhere; a path the device lacks is refused with what it has (auto takes the best of ptx >
   ext > cas, so whatever ranks above auto's choice is absent) */
int test_device_paths(void)
{
    char data[600], out[600], log[700];
    snprintf(data, sizeof data, "%s/cli_scene", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(out, sizeof out, "%s/paths", test_tmpdir());
    snprintf(log, sizeof log, "%s/paths.log", test_tmpdir());
    CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 2 " TINY, data, out) == 0, "auto paths: see %s", log);
    static const char *const keys[3] = {"cas", "ext", "ptx"};
    int auto_path = -1;
    for (int p = 0; p < 3; p++) {
        char want[96];
        snprintf(want, sizeof want, "float atomics: %s,", cs_atomic_path_names[p]);
        if (file_contains(log, want)) auto_path = p;
    }
    CHECK(auto_path >= 0, "no float-atomics path in %s", log);
    CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 2 --set device.float_atomics=cas "
                           "--set device.fast_math=on " TINY, data, out) == 0 &&
              file_contains(log, "float atomics: cas-loop, fast math: on"), "forced cas + fast math: see %s", log);
    for (int p = auto_path + 1; p < 3; p++) {
        CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 2 --set device.float_atomics=%s " TINY, data, out,
                      keys[p]) == 1 && file_contains(log, "does not have the"),
              "device.float_atomics=%s on a device whose best path is %s: see %s", keys[p],
              cs_atomic_path_names[auto_path], log);
    }
    printf("  auto path %s; cas + fast math forced; %d faster paths refused as absent\n",
           cs_atomic_path_names[auto_path], 2 - auto_path);
    return 0;
}
