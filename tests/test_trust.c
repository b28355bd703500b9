/* test_trust: a new user's first runs are right (#33), through the clsplat binary on a tiny
 * generated scene: no command removes a file clsplat did not write, whatever its flags (an
 * output folder that is, holds or lies in a dataset is refused; --force removes only what the
 * earlier run listed); a live run's lock refuses a second run with its pid; a relative -s is
 * stored absolute; an opacity reset never reaches a saved or evaluated model; render --ply
 * draws a model exactly as render -m does, huge close Gaussians included; command-line marks
 * are literal and a short run says what it skips; the dataset layouts users have load. */
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_run.h"
#include "config.h"
#include "fixtures.h"
#include "image_store.h"
#include "kernels.h"
#include "memplan.h"
#include "scene.h"
#include "ply.h"
#include "splats.h"
#include "test.h"
#include "util.h"

#define TINY "--set device.tune=off --set optim.random_init_points=600 --set log.interval=5"


/* the files (not folders) under DIR, at any depth */
static int count_files(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    int n = 0;
    struct dirent *e;
    char p[1400];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        n += cs_dir_exists(p) ? count_files(p) : 1;
    }
    closedir(d);
    return n;
}

static int put(const char *dir, const char *rel, const char *text)
{
    char p[1200], folder[1200];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    snprintf(folder, sizeof folder, "%s", p);
    *strrchr(folder, '/') = '\0';
    return cs_mkdirs(folder) || cs_write_file_atomic(p, text, strlen(text));
}

static const char *scene_dir(void)
{
    static char data[700];
    snprintf(data, sizeof data, "%s/trust_scene", test_tmpdir());
    return cli_demo_scene(data, 40, 30) ? NULL : data;
}

/* user files the way a dataset or a user's folder holds them, where a run writes its own */
static const char *const USER_FILES[] = {"train/r_0.png", "test/r_0.png", "renders/mine.png", "point_cloud/mine.ply",
                                         "events.out.tfevents.1.host.1", "notes.txt", "checkpoints/keep.bin",
                                         /* shaped like a dead writer's temporary file, but not clsplat's */
                                         "notes.txt.tmp.999999999"};
#define N_USER (int)(sizeof USER_FILES / sizeof USER_FILES[0])

static int user_files_intact(const char *dir)
{
    char p[1200];
    for (int i = 0; i < N_USER; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, USER_FILES[i]);
        if (!file_contains(p, "user data")) return cs_fail("%s is gone or changed", p);
    }
    return 0;
}

/* #33 item 0: --force, batch and -o next to, in or around a dataset never remove its files */
int test_force_keeps_inputs(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], mixed[700], p[1200], parent[700];
    snprintf(log, sizeof log, "%s/trust_force.log", test_tmpdir());
    int photos = count_files(data);
    CHECK(photos >= 60, "the scene has %d files", photos);
    /* the dataset itself, a folder inside it, its parent: refused with or without --force */
    snprintf(parent, sizeof parent, "%s", data);
    *strrchr(parent, '/') = '\0';
    const char *outs[] = {data, "%s/train", parent};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, outs[i], data);
        CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 2 " TINY, data, p) == 1 &&
                  file_contains(log, "dataset"),
              "-o %s was not refused, see %s", p, log);
    }
    CHECK(cli_run("", log, "batch -o %s %s --set optim.iterations=2", parent, data) == 1 && file_contains(log, "dataset"),
          "batch -o the dataset's parent was not refused, see %s", log);
    CHECK(count_files(data) == photos, "the dataset lost files: %d of %d left", count_files(data), photos);
    /* a run, then a user's files named like a run's beside its own, then --force */
    snprintf(mixed, sizeof mixed, "%s/trust_mixed", test_tmpdir());
    CHECK(cli_run("", log, "train -s %s -o %s --iterations 6 --eval " TINY, data, mixed) == 0, "first run, see %s", log);
    for (int i = 0; i < N_USER; i++) CHECK_OK(put(mixed, USER_FILES[i], "user data"));
    snprintf(p, sizeof p, "%s/point_cloud/iteration_6/point_cloud.ply", mixed);
    CHECK(cs_file_exists(p), "no %s", p);
    /* a temporary file a killed clsplat writer left (listed when it was opened) is swept by
       render -m; the user's file of the same shape is not */
    char stale[1300], line[] = "point_cloud/stale.ply.tmp.999999999\n";
    snprintf(p, sizeof p, "%s/%s", mixed, CS_MANIFEST_NAME);
    FILE *mf = fopen(p, "a");
    CHECK(mf && fputs(line, mf) >= 0 && fclose(mf) == 0, "cannot append to %s", p);
    CHECK_OK(put(mixed, "point_cloud/stale.ply.tmp.999999999", "partial"));
    CHECK(cli_run("", log, "render -m %s", mixed) == 0, "render -m, see %s", log);
    snprintf(stale, sizeof stale, "%s/point_cloud/stale.ply.tmp.999999999", mixed);
    CHECK(!cs_file_exists(stale), "a dead writer's listed temporary file was kept");
    CHECK_OK(user_files_intact(mixed));
    /* a hostile list: entries leaving the folder are skipped */
    snprintf(p, sizeof p, "%s/%s", mixed, CS_MANIFEST_NAME);
    char *list = cs_read_file(p, NULL);
    CHECK(list && strstr(list, "point_cloud/iteration_6/point_cloud.ply\n") && !strstr(list, "notes.txt"),
          "the run's list of outputs: %s", list ? list : cs_last_error());
    char extra[1600];
    snprintf(extra, sizeof extra, "%s../trust_scene/train/r_1.png\n%s/train/r_2.png\n", list, data);
    free(list);
    CHECK_OK(cs_write_file_atomic(p, extra, strlen(extra)));
    CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 4 " TINY, data, mixed) == 0 &&
              file_contains(log, "and nothing else"),
          "--force run, see %s", log);
    snprintf(p, sizeof p, "%s/point_cloud/iteration_6", mixed);
    CHECK(!cs_dir_exists(p), "--force kept the earlier run's %s", p);
    CHECK_OK(user_files_intact(mixed));
    CHECK(count_files(data) == photos, "the dataset lost files: %d of %d left", count_files(data), photos);
    /* a folder that holds a run without a list (an older clsplat): --force removes nothing */
    snprintf(p, sizeof p, "%s/%s", mixed, CS_MANIFEST_NAME);
    CHECK(unlink(p) == 0, "no %s", p);
    CHECK(cli_run("", log, "train -s %s -o %s --force --iterations 2 " TINY, data, mixed) == 1 &&
              file_contains(log, "nothing there is removed"),
          "--force over a run with no list, see %s", log);
    snprintf(p, sizeof p, "%s/point_cloud/iteration_4/point_cloud.ply", mixed);
    CHECK(cs_file_exists(p), "--force without a list removed %s", p);
    CHECK_OK(user_files_intact(mixed));
    printf("  -o at, in and around the dataset refused; --force removed only the run's own files (%d user files "
           "kept, %d photos kept)\n", N_USER, photos);
    return 0;
}

/* #33 item 2: a second run into the folder of a live one is refused with its pid, --force too */
int test_live_run_lock(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], log2[700], out[700], p[1200];
    snprintf(log, sizeof log, "%s/trust_live.log", test_tmpdir());
    snprintf(log2, sizeof log2, "%s/trust_live2.log", test_tmpdir());
    snprintf(out, sizeof out, "%s/trust_live", test_tmpdir());
    pid_t pid = cli_start(log, "train", "-s", data, "-o", out, "--iterations", "100000", "--set", "device.tune=off",
                          "--set", "optim.random_init_points=300", NULL);
    CHECK(pid > 0, "cannot start a run");
    snprintf(p, sizeof p, "%s/train_log.jsonl", out);
    for (int i = 0; i < 600 && !cs_file_exists(p); i++) usleep(100000); /* its first log line */
    int st = cli_run("", log2, "train -s %s -o %s --force --iterations 2 " TINY, data, out);
    char pid_text[32];
    snprintf(pid_text, sizeof pid_text, "pid %ld", (long)pid);
    int live = kill(pid, 0) == 0;
    kill(pid, SIGTERM);
    cli_wait(pid);
    CHECK(live, "the first run ended early, see %s", log);
    CHECK(st == 1 && file_contains(log2, "in use by a run still training") && file_contains(log2, pid_text),
          "a second --force run into a live run's folder was not refused with its pid, see %s", log2);
    CHECK(cs_file_exists(p), "the live run's log was removed");
    /* once it has stopped, the folder is free again */
    CHECK(cli_run("", log2, "train -s %s -o %s --force --iterations 2 " TINY, data, out) == 0,
          "a run after the first stopped, see %s", log2);
    return 0;
}

/* #33 item 3: a relative -s is stored absolute: render -m from another folder works */
int test_relative_source(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], out[700], cwd[PATH_MAX], rel[PATH_MAX + 800], cmd[4000], bin[PATH_MAX];
    snprintf(log, sizeof log, "%s/trust_rel.log", test_tmpdir());
    snprintf(out, sizeof out, "%s/trust_rel", test_tmpdir());
    CHECK(getcwd(cwd, sizeof cwd) != NULL, "getcwd");
    /* the scene's path relative to the working folder the tests run in */
    rel[0] = '\0';
    for (const char *c = cwd; *c; c++)
        if (*c == '/') strcat(rel, "../");
    strcat(rel, data + 1);
    CHECK(cli_run("", log, "train -s %s -o %s --iterations 2 --eval " TINY, rel, out) == 0, "training, see %s", log);
    char p[1200];
    snprintf(p, sizeof p, "%s/config.json", out);
    CHECK(file_contains(p, data) && !file_contains(p, "\"../"), "config.json keeps the relative path");
    CHECK(realpath(cli_bin(), bin) != NULL, "no %s", cli_bin());
    snprintf(cmd, sizeof cmd, "cd / && XDG_CACHE_HOME=%s/cli_cache %s render -m %s -o %s/trust_rel_renders > %s 2>&1",
             test_tmpdir(), bin, out, test_tmpdir(), log);
    CHECK(system(cmd) == 0, "render -m from / failed, see %s", log);
    return 0;
}

/* the largest opacity of a PLY, -1 when it cannot be read */
static double max_opacity(const char *path)
{
    cs_splats s;
    if (cs_ply_read(path, &s)) return -1;
    double m = 0;
    for (int i = 0; i < s.n; i++) m = fmax(m, 1.0 / (1.0 + exp(-s.logit_opacity[i])));
    cs_splats_free(&s);
    return m;
}

/* #33 item 1: evaluation and saving see the model before an opacity reset of the same
 * iteration (a mark of each kind: test and save marks, and the last iteration) */
int test_reset_before_marks(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], out[700], p[1200];
    snprintf(log, sizeof log, "%s/trust_reset.log", test_tmpdir());
    snprintf(out, sizeof out, "%s/trust_reset", test_tmpdir());
    /* resets at 10 (-w: at densify.from), 20 and 30 (every 10), which are also marks */
    CHECK(cli_run("", log, "train -s %s -o %s -w --eval --iterations 30 --test_iterations 10 20 --save_iterations 10 20 "
                  "--set densify.from=10 --set densify.interval=5 --set densify.opacity_reset_interval=10 "
                  "--set optim.init_opacity=0.5 " TINY, data, out) == 0,
          "training, see %s", log);
    int marks[] = {10, 20, 30};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/point_cloud/iteration_%d/point_cloud.ply", out, marks[i]);
        double m = max_opacity(p);
        /* a reset leaves every opacity <= 0.01; the iterations since the last one raise some */
        CHECK(m > 0.0101, "the PLY at the reset mark %d is reset (largest opacity %.5f): the reset came first",
              marks[i], m);
        printf("  iteration %d: largest saved opacity %.4f\n", marks[i], m);
    }
    return 0;
}

/* #33 item 4: render --ply of a model draws what render -m of it draws, huge close Gaussians
 * included (they used to be culled past four image sides on the --ply path) */
int test_render_ply_same(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], out[700], p[1200], ply[1200];
    snprintf(log, sizeof log, "%s/trust_ply.log", test_tmpdir());
    snprintf(out, sizeof out, "%s/trust_ply", test_tmpdir());
    CHECK(cli_run("", log, "train -s %s -o %s --eval --iterations 4 " TINY, data, out) == 0, "training, see %s", log);
    /* five faint Gaussians a few units wide around the scene's centre: hundreds of pixels
       wide in a 40x30 view */
    snprintf(ply, sizeof ply, "%s/point_cloud/iteration_4/point_cloud.ply", out);
    cs_splats s;
    CHECK_OK(cs_ply_read(ply, &s));
    uint64_t rs = test_seed() ^ 0x71;
    for (int i = 0; i < 5; i++) {
        for (int k = 0; k < 3; k++) s.means[i * 3 + k] = (float)(0.3 * test_randn(&rs)), s.log_scales[i * 3 + k] = 1.5f;
        s.logit_opacity[i] = -3.f;
    }
    CHECK_OK(cs_ply_write(ply, &s, 0));
    cs_splats_free(&s);
    CHECK(cli_run("", log, "render -m %s --split test -o %s/by_model", out, out) == 0, "render -m, see %s", log);
    CHECK(cli_run("", log, "render --ply %s -s %s --split test -o %s/by_ply", ply, data, out) == 0,
          "render --ply, see %s", log);
    int same = 0, views = 0;
    for (int v = 0; v < 100; v++) {
        char a[1300], b[1300];
        snprintf(a, sizeof a, "%s/by_model/r_%d.png", out, v);
        snprintf(b, sizeof b, "%s/by_ply/r_%d.png", out, v);
        if (!cs_file_exists(a)) continue;
        size_t na, nb;
        char *da = cs_read_file(a, &na), *db = cs_read_file(b, &nb);
        views++;
        same += da && db && na == nb && !memcmp(da, db, na);
        free(da), free(db);
    }
    (void)p;
    CHECK(views > 0, "no renders in %s/by_model", out);
    CHECK(same == views, "render --ply and render -m differ in %d of %d views", views - same, views);
    printf("  %d test views drawn the same by render --ply and render -m, with 5 huge Gaussians\n", views);
    return 0;
}

/* #33 item 5: marks given on the command line are literal whatever optim.steps_scale, and a run
 * that ends before densification starts says so */
int test_short_schedules(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], out[700], p[1200];
    snprintf(log, sizeof log, "%s/trust_short.log", test_tmpdir());
    snprintf(out, sizeof out, "%s/trust_short", test_tmpdir());
    CHECK(cli_run("", log, "train -s %s -o %s --eval -r 2 --iterations 12 --test_iterations 4 8 --save_iterations 8 "
                  "--set optim.steps_scale=0.5 --set device.tune=off --set optim.random_init_points=300 --no-kernel-cache",
                  data, out) == 0,
          "training, see %s", log);
    /* #33 item 7: a build from source says so before it starts, and its time is said once */
    CHECK(file_contains(log, "kernels: compiling for") && file_contains(log, "kernels: built in"), "the kernel build, see %s", log);
    CHECK(file_contains(log, "before densification starts (densify.from 250)"), "no note that the run never densifies, see %s",
          log);
    snprintf(p, sizeof p, "%s/metrics.json", out);
    CHECK(file_contains(p, "\"iteration\": 4,") && file_contains(p, "\"iteration\": 8,") && file_contains(p, "\"iteration\": 12,") &&
              !file_contains(p, "\"iteration\": 2,"),
          "the marks 4 8 were scaled, see %s", p);
    CHECK(file_contains(p, "\"resolution\": 2,"), "the records do not say -r 2, see %s", p);
    snprintf(p, sizeof p, "%s/point_cloud/iteration_8/point_cloud.ply", out);
    CHECK(cs_file_exists(p), "--save_iterations 8 was scaled: no %s", p);
    /* the stored config repeats the run: a resume-free rerun from it trains the same marks */
    snprintf(p, sizeof p, "%s/config.json", out);
    CHECK(file_contains(p, "\"steps_scale\": 0.5") && file_contains(p, "\"iterations\": 24,"), "config.json: %s", p);
    return 0;
}

/* loads DATA (resolution 1, --eval); 0 or -1 with the loader's message */
static int load_scene(const char *data, int *n_cams)
{
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", data);
    c.data.eval = true, c.data.resolution = 1;
    cs_scene s;
    if (cs_scene_load(&c.data, &s)) return -1;
    *n_cams = s.n_cams;
    cs_scene_free(&s);
    return 0;
}

static int move(const char *root, const char *from, const char *to)
{
    char a[1200], b[1200];
    snprintf(a, sizeof a, "%s/%s", root, from);
    snprintf(b, sizeof b, "%s/%s", root, to);
    return rename(a, b) ? cs_fail("rename %s %s", a, b) : 0;
}

/* #33 item 9: the layouts users have: COLMAP's sparse/ without 0/, photos converted to another
 * format after the reconstruction, Blender frames in JPEG; missing photos counted and named */
int test_datasets_users_have(void)
{
    char root[700], p[1200];
    int n = 0;
    snprintf(root, sizeof root, "%s/trust_colmap", test_tmpdir());
    write_colmap(root, 1, 1, 0, 0);
    /* sparse/ holding the model itself */
    const char *files[] = {"cameras.bin", "images.bin", "points3D.bin"};
    for (int i = 0; i < 3; i++) {
        char a[64], b[64];
        snprintf(a, sizeof a, "sparse/0/%s", files[i]);
        snprintf(b, sizeof b, "sparse/%s", files[i]);
        CHECK_OK(move(root, a, b));
    }
    snprintf(p, sizeof p, "%s/sparse/0", root);
    CHECK(rmdir(p) == 0, "rmdir %s", p);
    CHECK(load_scene(root, &n) == 0 && n == 10, "sparse/ without 0/: %s", cs_last_error());
    /* photos converted: img_03.png listed, img_03.jpg on disk (decoded by content) */
    CHECK_OK(move(root, "images/img_03.png", "images/img_03.jpg"));
    CHECK(load_scene(root, &n) == 0 && n == 10, "a converted photo: %s", cs_last_error());
    /* two gone: counted, the first named */
    CHECK_OK(move(root, "images/img_05.png", "img_05.bak"));
    CHECK_OK(move(root, "images/img_06.png", "img_06.bak"));
    CHECK(load_scene(root, &n) == -1 && strstr(cs_last_error(), "2 of the 10 images listed in images.bin are missing") &&
              (strstr(cs_last_error(), "first: ") && strstr(strstr(cs_last_error(), "first: "), "img_0")),
          "missing photos: %s", cs_last_error());
    /* Blender frames stored as .jpg and .jpeg (file_path without an extension, as Blender writes) */
    snprintf(root, sizeof root, "%s/trust_blender", test_tmpdir());
    const char *m = "[[1,0,0,0],[0,0,-1,-4],[0,1,0,0],[0,1,0,0]]";
    const char *split[] = {"train", "test"}, *ext[] = {"jpg", "jpeg"};
    cs_image img = {20, 10, 3, calloc(20 * 10 * 3, 1)};
    for (int i = 0; i < 2; i++) {
        char js[512];
        snprintf(p, sizeof p, "%s/%s", root, split[i]);
        CHECK_OK(cs_mkdirs(p));
        snprintf(p, sizeof p, "%s/%s/r_0.%s", root, split[i], ext[i]);
        CHECK_OK(write_jpeg(p, &img));
        snprintf(js, sizeof js, "{\"camera_angle_x\": 0.8, \"frames\": [{\"file_path\": \"./%s/r_0\", \"transform_matrix\": %s}]}",
                 split[i], m);
        snprintf(p, sizeof p, "%s/transforms_%s.json", root, split[i]);
        CHECK_OK(write_text(p, js));
    }
    cs_image_free(&img);
    CHECK(load_scene(root, &n) == 0 && n == 2, "Blender frames in JPEG: %s", cs_last_error());
    return 0;
}

/* #33 item 8: a run stopped before its first save is named as such by the -m commands, and its
 * checkpoint exports to a PLY */
int test_stopped_run_exports(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], out[700], p[1200];
    snprintf(log, sizeof log, "%s/trust_stopped.log", test_tmpdir());
    snprintf(out, sizeof out, "%s/trust_stopped", test_tmpdir());
    int st = cli_run("CLSPLAT_FAULT='term:phase:iteration 6;'", log, "train -s %s -o %s --iterations 50 " TINY, data, out);
    CHECK(st == 143, "the stopped run exited %d, see %s", st, log);
    snprintf(p, sizeof p, "%s/checkpoints/chkpnt_5.bin", out);
    CHECK(cs_file_exists(p), "no %s", p);
    CHECK(cli_run("", log, "render -m %s", out) == 1 && file_contains(log, "holds no saved PLY yet, only checkpoints") &&
              file_contains(log, "chkpnt_5.bin"),
          "render -m of a stopped run, see %s", log);
    CHECK(cli_run("", log, "export --ply %s --format ply -o %s/from_ckpt.ply", p, out) == 0 &&
              file_contains(log, "iteration 5"),
          "export of a checkpoint, see %s", log);
    snprintf(p, sizeof p, "%s/from_ckpt.ply", out);
    cs_splats s;
    CHECK(cs_ply_read(p, &s) == 0 && s.n == 600 && s.sh_degree == 3, "the exported PLY: %s", cs_last_error());
    cs_splats_free(&s);
    return 0;
}

/* #33 items 8 and 12: render -m and eval -m agree on a model trained without --eval (it has no
 * test views: render takes the training views, eval says so), and a run whose memory plan
 * holds no Gaussians stops instead of training */
int test_no_test_views_and_empty_plan(void)
{
    const char *data = scene_dir();
    CHECK(data, "%s", cs_last_error());
    char log[700], out[700], p[1200];
    snprintf(log, sizeof log, "%s/trust_views.log", test_tmpdir());
    snprintf(out, sizeof out, "%s/trust_views", test_tmpdir());
    CHECK(cli_run("", log, "train -s %s -o %s --iterations 3 " TINY, data, out) == 0, "training, see %s", log);
    CHECK(cli_run("", log, "render -m %s", out) == 0 && file_contains(log, "rendering its training views") &&
              file_contains(log, "rendered 60 train views"),
          "render -m of a model without test views, see %s", log);
    CHECK(cli_run("", log, "eval -m %s", out) == 1 && file_contains(log, "no test views"), "eval -m, see %s", log);
    snprintf(p, sizeof p, "%s/trust_plan0", test_tmpdir());
    CHECK(cli_run("", log, "train -s %s -o %s --iterations 3 --set memory.vram_budget_mb=0.3 "
                  "--set data.image_residency=device " TINY, data, p) == 1 &&
              file_contains(log, "the memory plan leaves room for no Gaussians"),
          "a plan with room for no Gaussians, see %s", log);
    return 0;
}

/* #33 item 10: a passing test's own output stays out of make test's (test_datasets_users_have
 * prints a note), and shows with CLSPLAT_TEST_VERBOSE=1 */
int test_runner_quiet(void)
{
    char log[700], cmd[1600];
    snprintf(log, sizeof log, "%s/trust_runner.log", test_tmpdir());
    for (int verbose = 0; verbose < 2; verbose++) {
        snprintf(cmd, sizeof cmd, "CLSPLAT_TEST_VERBOSE=%d /proc/%ld/exe test_datasets_users_have > %s 2>&1", verbose,
                 (long)getpid(), log);
        CHECK(system(cmd) == 0, "the runner failed, see %s", log);
        int noted = file_contains(log, "note: 1 of the 10 images");
        CHECK(file_contains(log, "ok   test_datasets_users_have") && noted == verbose,
              "%s: the test's note %s, see %s", verbose ? "verbose" : "quiet", noted ? "shown" : "not shown", log);
    }
    return 0;
}

/* #34's "no silent downgrade after planning": images past what device residency addresses
 * (4 GiB, 32-bit offsets) are planned as host residency, with the reason, whether asked for
 * device or chosen by auto; the store no longer turns device into host behind the plan */
int test_plan_images_past_4gib(void)
{
    cs_scene sc;
    memset(&sc, 0, sizeof sc);
    cs_camera cams[3];
    memset(cams, 0, sizeof cams);
    for (int i = 0; i < 3; i++) cams[i].width = 32768, cams[i].height = 16384; /* 1.5-2 GiB each */
    sc.cams = cams, sc.n_cams = 3;
    int train[3] = {0, 1, 2};
    cs_split sp = {train, 3, NULL, 0};
    CHECK(!cs_images_device_addressable(&sc, train, 3) && cs_images_device_addressable(&sc, train, 1),
          "the addressable limit");
    for (int res = 0; res < 2; res++) {
        cs_config c;
        cs_config_defaults(&c);
        c.data.image_residency = res ? CS_RES_DEVICE : CS_RES_AUTO;
        c.memory.vram_budget_mb = 200000;
        cs_kernel_opts ko;
        cs_kernel_opts_of(&c, &ko);
        cs_mem_plan p;
        cs_mem_plan_make(&c, &ko, (size_t)256 << 30, &sc, &sp, &p);
        CHECK(p.residency != CS_RES_DEVICE, "%s: planned device residency for %.1f GiB: %s", res ? "device" : "auto",
              p.image_bytes / 1073741824.0, p.residency_why);
        if (res) CHECK(strstr(p.residency_why, "device residency addresses"), "the reason: %s", p.residency_why);
    }
    return 0;
}
