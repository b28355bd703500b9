/* test_faults: what a killed or interrupted run leaves, through the clsplat binary
 * (CLSPLAT_BIN) and its fault points (CLSPLAT_FAULT, util.h): a kill -9 between the data and
 * the rename of each kind of output (config and metrics JSON, the log, PLY, checkpoint, PNG)
 * leaves only complete files under their final names, which clsplat's own readers accept, and
 * render -m / eval -m / --resume work afterwards; SIGTERM and SIGINT in each phase give 143 /
 * 130, a checkpoint once something was trained and none before. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "cli_run.h"
#include "dataset.h"
#include "fixtures.h"
#include "image.h"
#include "outputs.h"
#include "ply.h"
#include "test.h"
#include "util.h"

/* clsplat ARGS with CLSPLAT_FAULT=FAULT, output to LOG (cli_run) */
static int run_with_fault(const char *fault, const char *log, const char *args)
{
    char env[256];
    snprintf(env, sizeof env, "CLSPLAT_FAULT='%s'", fault);
    return cli_run(env, log, "%s", args);
}

#define RUN_FLAGS                                                                                                      \
    "--eval --iterations 12 --test_iterations 6 12 --save_iterations 6 12 --checkpoint_iterations 4 8 "               \
    "--set eval.save_renders=true --set device.tune=off --set optim.random_init_points=600 --set log.interval=2"

/* every file under a final name in DIR (and its folders) is whole, by clsplat's own readers;
   returns how many were checked, -1 on a bad one */
static int check_tree(const char *dir)
{
    char cmd[1200], list[1400];
    snprintf(list, sizeof list, "%s.files", dir);
    snprintf(cmd, sizeof cmd, "find %s -type f > %s", dir, list);
    if (system(cmd) != 0) return cs_fail("find failed");
    char *names = cs_read_file(list, NULL);
    int checked = 0;
    cs_model_layout lay = {3, 0, 0, 0};
    for (char *p = names ? strtok(names, "\n") : NULL; p; p = strtok(NULL, "\n")) {
        int r = 0;
        size_t len = strlen(p);
        if (strstr(p, ".tmp.")) continue; /* a temporary name: the final one is what counts */
        if (len > 4 && !strcmp(p + len - 4, ".ply")) {
            cs_splats s;
            if (!(r = cs_ply_read(p, &s))) cs_splats_free(&s);
        } else if (len > 4 && !strcmp(p + len - 4, ".png")) {
            cs_image img;
            if (!(r = cs_image_load(p, &img))) cs_image_free(&img);
        } else if (len > 5 && !strcmp(p + len - 5, ".json")) {
            json_t *j = json_load_file(p, 0, NULL);
            r = j ? 0 : cs_fail("%s: not JSON", p);
            json_decref(j);
        } else if (len > 6 && !strcmp(p + len - 6, ".jsonl")) {
            char *d = cs_read_file(p, NULL);
            for (char *line = d ? d : NULL, *nl; line && *line && !r; line = nl + 1) {
                nl = strchr(line, '\n');
                if (!nl) { r = cs_fail("%s: last line unterminated", p); break; }
                *nl = '\0';
                json_t *j = json_loads(line, 0, NULL);
                r = json_is_object(j) ? 0 : cs_fail("%s: a line is not a JSON object", p);
                json_decref(j);
            }
            free(d);
        } else if (len > 4 && !strcmp(p + len - 4, ".bin") && strstr(p, "chkpnt_")) {
            size_t n;
            char *d = cs_read_file(p, &n);
            cs_ckpt_header h;
            r = d ? cs_checkpoint_check(d, n, p, &lay, &h) : -1;
            free(d);
        } else {
            continue;
        }
        if (r) {
            free(names);
            return -1;
        }
        checked++;
    }
    free(names);
    return checked;
}

/* the latest chkpnt_N.bin in OUT/checkpoints (into PATH), or 0 */
static int latest_checkpoint(const char *out, char *path, size_t n)
{
    int best = 0;
    for (int it = 12; it >= 1 && !best; it--) {
        snprintf(path, n, "%s/checkpoints/chkpnt_%d.bin", out, it);
        if (cs_file_exists(path)) best = it;
    }
    return best;
}

int test_kill_during_writes(void)
{
    char data[600], out[700], log[700], ckpt[900];
    snprintf(data, sizeof data, "%s/cli_scene", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(log, sizeof log, "%s/fault.log", test_tmpdir());
    /* the first write whose path names it dies between its data and its rename */
    const char *where[] = {"config.json", "metrics.json", "train_log.jsonl", "iteration_12/point_cloud.ply",
                           "chkpnt_8.bin", "ours_12/renders/r_0.png", "memory.json"};
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        snprintf(out, sizeof out, "%s/fault_kill_%zu", test_tmpdir(), i);
        char fault[200];
        snprintf(fault, sizeof fault, "kill:%s", where[i]);
        char args[1500];
        snprintf(args, sizeof args, "train -s %s -o %s " RUN_FLAGS, data, out);
        int st = run_with_fault(fault, log, args);
        CHECK(st == 128 + 9, "kill in %s: exit %d", where[i], st);
        int n = check_tree(out);
        CHECK(n >= 0, "after a kill in %s: %s", where[i], cs_last_error());
        /* what a user does next works: look at the last complete model, resume, or start over */
        char ply[900];
        snprintf(ply, sizeof ply, "%s/point_cloud/iteration_6/point_cloud.ply", out);
        if (cs_file_exists(ply)) {
            CHECK(cli_run("", log, "render -m %s", out) == 0, "render -m after a kill in %s", where[i]);
            CHECK(cli_run("", log, "eval -m %s", out) == 0, "eval -m after a kill in %s", where[i]);
        }
        if (latest_checkpoint(out, ckpt, sizeof ckpt))
            CHECK(cli_run("", log, "train --resume %s", ckpt) == 0 && check_tree(out) > 0, "--resume after a kill in %s",
                  where[i]);
        else
            CHECK(cli_run("", log, "train -s %s -o %s --force " RUN_FLAGS, data, out) == 0, "a new run after %s", where[i]);
        /* the temporary file of the killed writer was removed by the next run */
        char cmd[1200];
        snprintf(cmd, sizeof cmd, "find %s -name '*.tmp.*' | grep -q .", out);
        CHECK(system(cmd) != 0, "a killed run's temporary file is still in %s", out);
    }
    return 0;
}

int test_signals_by_phase(void)
{
    char data[600], out[700], log[700], p[900];
    snprintf(data, sizeof data, "%s/cli_scene", test_tmpdir());
    CHECK_OK(cli_demo_scene(data, 40, 30));
    snprintf(log, sizeof log, "%s/signal.log", test_tmpdir());
    struct { const char *fault; int status, checkpoint; } cases[] = {
        {"term:phase:scene", 143, 0},           {"int:phase:scene", 130, 0},
        {"term:phase:kernels", 143, 0},         {"term:phase:iteration 1;", 143, 0},
        {"term:phase:iteration 5;", 143, 4},    {"int:phase:iteration 9;", 130, 8},
        {"term:phase:evaluate", 143, 6},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(out, sizeof out, "%s/fault_sig_%zu", test_tmpdir(), i);
        char args[1500];
        snprintf(args, sizeof args, "train -s %s -o %s " RUN_FLAGS, data, out);
        int st = run_with_fault(cases[i].fault, log, args);
        CHECK(st == cases[i].status, "%s: exit %d, want %d", cases[i].fault, st, cases[i].status);
        snprintf(p, sizeof p, "%s/checkpoints/chkpnt_0.bin", out);
        CHECK(!cs_file_exists(p), "%s wrote a checkpoint of iteration 0", cases[i].fault);
        if (cases[i].checkpoint) {
            snprintf(p, sizeof p, "%s/checkpoints/chkpnt_%d.bin", out, cases[i].checkpoint);
            CHECK(cs_file_exists(p), "%s: no %s", cases[i].fault, p);
            CHECK(cli_run("", log, "train --resume %s", p) == 0, "%s: resume failed", cases[i].fault);
        }
    }
    /* an inherited "ignore SIGINT" (nohup, background jobs) stays: the run goes on to the end */
    snprintf(out, sizeof out, "%s/fault_sig_ignored", test_tmpdir());
    char cmd[2400];
    snprintf(cmd, sizeof cmd, "trap '' INT; XDG_CACHE_HOME=%s/cli_cache CLSPLAT_FAULT='int:phase:iteration 3;' %s train "
             "-s %s -o %s " RUN_FLAGS " > %s 2>&1", test_tmpdir(), cli_bin(), data, out, log);
    CHECK(system(cmd) == 0, "an ignored SIGINT stopped the run");
    /* `clsplat train | head -1`: no death by SIGPIPE; the run finishes and says stdout failed */
    snprintf(out, sizeof out, "%s/fault_pipe", test_tmpdir());
    snprintf(cmd, sizeof cmd, "XDG_CACHE_HOME=%s/cli_cache %s train -s %s -o %s " RUN_FLAGS " 2>%s | head -1 "
             ">/dev/null; test -f %s/point_cloud/iteration_12/point_cloud.ply", test_tmpdir(), cli_bin(), data, out, log, out);
    CHECK(system(cmd) == 0, "a closed stdout stopped the run");
    return 0;
}
