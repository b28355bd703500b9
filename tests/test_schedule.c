/* test_schedule: the per-iteration plan, checked against graphdeco's train.py rules on the
 * CPU without training, and the view order. */
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "schedule.h"
#include "test.h"
#include "util.h"

/* the plan at ITER of a 30k run with graphdeco's defaults and the given changes */
static cs_step_plan at(const cs_config *c, int iter) { return cs_schedule_at(c, iter, 30000, 2.0); }

int test_schedule(void)
{
    cs_config c;
    cs_config_defaults(&c);
    /* densification: every 100 iterations strictly after 500 and before 15000 */
    CHECK(!at(&c, 500).densify && at(&c, 600).densify && !at(&c, 601).densify, "densify window start");
    CHECK(at(&c, 14900).densify && !at(&c, 15000).densify && !at(&c, 15000).densify_stats, "densify window end");
    CHECK(at(&c, 1).densify_stats && at(&c, 14999).densify_stats, "stats inside the window");
    CHECK(!at(&c, 3000).densify_check_size && at(&c, 3100).densify_check_size, "size prune after the first reset");
    /* opacity reset every 3000 until 15000; on white backgrounds also at densify.from */
    CHECK(at(&c, 3000).reset_opacity && at(&c, 12000).reset_opacity && !at(&c, 15000).reset_opacity &&
              !at(&c, 500).reset_opacity, "opacity resets");
    c.data.white_background = true;
    CHECK(at(&c, 500).reset_opacity, "white background reset at densify.from");
    c.data.white_background = false;
    /* SH degree rises every 1000 iterations up to the allocated degree */
    CHECK(at(&c, 1).active_sh == 0 && at(&c, 1001).active_sh == 1 && at(&c, 29999).active_sh == 3, "SH degree");
    c.model.sh_degree = 1;
    CHECK(at(&c, 5000).active_sh == 1, "SH degree capped: %d", at(&c, 5000).active_sh);
    c.model.sh_degree = 3;
    /* position lr: init x extent at the start, final x extent at max_steps */
    double lr0 = at(&c, 0).position_lr, lr1 = at(&c, 30000).position_lr;
    CHECK(fabs(lr0 - 1.6e-4 * 2.0) < 1e-12 && fabs(lr1 - 1.6e-6 * 2.0) < 1e-12, "lr %g %g", lr0, lr1);
    /* Adam order: gsplat steps before densifying; graphdeco skips the step when it densifies */
    cs_step_plan p = at(&c, 600);
    CHECK(p.step_before && !p.step_after, "gsplat order");
    c.optim.step_on_densify = false;
    p = at(&c, 600);
    CHECK(!p.step_before && !p.step_after, "graphdeco: no step on a densification iteration");
    p = at(&c, 601);
    CHECK(!p.step_before && p.step_after, "graphdeco: a step otherwise");
    c.optim.step_on_densify = true;
    /* the 3D filter: after each densification, then every 100 until 100 before the end */
    c.model.filter_3d = true;
    CHECK(at(&c, 600).filter3d && !at(&c, 650).filter3d && at(&c, 15100).filter3d && at(&c, 29800).filter3d &&
              !at(&c, 29900).filter3d, "3D filter");
    c.model.filter_3d = false;
    CHECK(!at(&c, 600).filter3d && !at(&c, 15100).filter3d, "no 3D filter");
    /* pool trims: after densification and every flush interval */
    CHECK(at(&c, 600).trim_pool && at(&c, 650).trim_pool && !at(&c, 651).trim_pool, "pool trims");
    /* marks: log interval, listed points, and always the last iteration */
    c.output.checkpoint_iterations[0] = 1234, c.output.n_checkpoint_iterations = 1;
    CHECK(at(&c, 100).log && !at(&c, 150).log && at(&c, 30000).log, "log marks");
    CHECK(at(&c, 7000).evaluate && at(&c, 7000).save && !at(&c, 7001).evaluate && at(&c, 30000).evaluate, "eval/save");
    CHECK(at(&c, 1234).checkpoint && !at(&c, 1235).checkpoint, "checkpoint marks");
    CHECK(at(&c, 1000).histograms && !at(&c, 1100).histograms && at(&c, 30000).histograms, "histogram marks");
    c.log.histogram_interval = 0;
    CHECK(!at(&c, 1000).histograms, "histograms off");
    /* densify.budget: no limit by default; a linear curve from densify.from to densify.until */
    CHECK(at(&c, 5000).row_budget == 0, "a row budget by default");
    c.densify.budget = 1000000;
    CHECK(at(&c, 600).row_budget == 6897 && at(&c, 7750).row_budget == 500000 && at(&c, 14999).row_budget == 999932,
          "budget curve: %d %d %d", at(&c, 600).row_budget, at(&c, 7750).row_budget, at(&c, 14999).row_budget);
    CHECK(at(&c, 600).budget_line > 0.0068 && at(&c, 600).budget_line < 0.0069 && at(&c, 15001).budget_line == 0 &&
          at(&c, 14999).budget_line > 0.9999, "budget line %g %g", at(&c, 600).budget_line, at(&c, 14999).budget_line);
    c.densify.budget = 0;
    /* the resolution schedule: off by default; from 1/4 it falls by steps to 1 by half the run */
    CHECK(at(&c, 1).res_factor == 1, "the resolution schedule is on by default");
    c.optim.res_schedule_start = 4, c.optim.res_schedule_until = 0.5;
    int prev = 4, fseen[5] = {0};
    for (int it = 1; it <= 30000; it++) {
        int f = at(&c, it).res_factor;
        CHECK(f <= prev && f >= 1 && (it < 15000 || f == 1), "iteration %d: factor %d after %d", it, f, prev);
        prev = f, fseen[f]++;
    }
    CHECK(at(&c, 1).res_factor == 4 && fseen[4] && fseen[3] && fseen[2] && fseen[1] == 15001,
          "factors 4, 3, 2, 1 for %d, %d, %d, %d iterations", fseen[4], fseen[3], fseen[2], fseen[1]);
    c.log.histogram_interval = 1000;
    CHECK(!at(&c, 2000).checkpoint_periodic, "periodic checkpoints are off by default");
    c.output.checkpoint_interval = 2000;
    CHECK(at(&c, 2000).checkpoint_periodic && !at(&c, 2001).checkpoint_periodic && at(&c, 28000).checkpoint_periodic &&
              !at(&c, 30000).checkpoint_periodic, "periodic checkpoints, none at the end (the outputs are there)");
    c.output.checkpoint_interval = 617;
    CHECK(!at(&c, 1234).checkpoint_periodic && at(&c, 1234).checkpoint, "a kept mark is not a periodic one");
    c.output.checkpoint_interval = 0;
    p = cs_schedule_at(&c, 777, 777, 1.0);
    CHECK(p.log && p.evaluate && p.save && !p.checkpoint, "the last iteration of a short run");
    /* densify.prune_fraction: one prune, at densify.until or densify.prune_at, never on the last
       iteration nor with MCMC */
    int prunes = 0, where = 0;
    for (int it = 1; it <= 30000; it++) prunes += at(&c, it).prune_importance;
    c.densify.prune_fraction = 0.4;
    for (int it = 1; it <= 30000; it++)
        if (at(&c, it).prune_importance) prunes++, where = it;
    CHECK(prunes == 1 && where == 15000 && cs_prune_iteration(&c, 30000) == 15000 && !cs_prune_iteration(&c, 15000),
          "%d prunes, the last at %d (want one at 15000)", prunes, where);
    c.densify.prune_at = 9000;
    CHECK(at(&c, 9000).prune_importance && at(&c, 9000).densify && !at(&c, 15000).prune_importance, "prune_at 9000");
    c.densify.prune_at = 30000;
    CHECK(!at(&c, 30000).prune_importance, "a prune on the last iteration");
    c.densify.prune_at = 9000, c.densify.strategy = CS_STRATEGY_MCMC;
    CHECK(!at(&c, 9000).prune_importance && !cs_prune_iteration(&c, 30000), "an importance prune under MCMC");
    c.densify.strategy = CS_STRATEGY_DEFAULT, c.densify.prune_at = 0, c.densify.prune_fraction = 0;
    c.optim.iterations_on_cpu = 500;
    CHECK(cs_schedule_iterations(&c, 1) == 500 && cs_schedule_iterations(&c, 0) == 30000, "iterations on a CPU");

    /* view order: each epoch a permutation, the same for the same seed, another for another */
    cs_view_order a, b;
    CHECK_OK(cs_view_order_init(&a, 7, 3));
    CHECK_OK(cs_view_order_init(&b, 7, 4));
    int seen[7] = {0}, same = 1;
    for (int it = 1; it <= 7; it++) seen[cs_view_for_iteration(&a, it)]++;
    for (int i = 0; i < 7; i++) CHECK(seen[i] == 1, "epoch 0 visits view %d %d times", i, seen[i]);
    for (int it = 8; it <= 14; it++) same &= cs_view_for_iteration(&a, it) == cs_view_for_iteration(&b, it);
    int again = cs_view_for_iteration(&a, 3);
    cs_view_order_free(&a);
    CHECK_OK(cs_view_order_init(&a, 7, 3));
    CHECK(cs_view_for_iteration(&a, 3) == again, "same seed, same order after a restart");
    CHECK(!same, "different seeds give different orders");
    cs_view_order_free(&a);
    cs_view_order_free(&b);
    CHECK(cs_view_order_init(&a, 0, 1) == -1, "no views");
    return 0;
}

/* tools/check_structure.sh: clean on this tree; on a made-up tree it names an upward include,
 * an include circle, a source without a header, sources outside the feature folders and a
 * long function. */
int test_structure_check(void)
{
    if (system("sh tools/check_structure.sh . >/dev/null 2>&1") != 0) {
        CHECK(system("sh tools/check_structure.sh . >&2") == 0, "this tree breaks the structure rules");
    }
    char dir[600], cmd[2400];
    snprintf(dir, sizeof dir, "%s/structure", test_tmpdir());
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/src/data %s/src/train %s/src/misc && cd %s && "
             "printf '#include \"trainer.h\"\\n' > src/data/camera.h && printf '#include \"camera.h\"\\n' > src/data/camera.c && "
             "printf '#include \"scene.h\"\\n' > src/data/dataset.h && printf '#include \"dataset.h\"\\n' > src/data/scene.h && "
             "printf '' > src/train/trainer.h && printf '' > src/train/trainer.c && printf '' > src/data/orphan.c && "
             "printf 'int scene_f(void)\\n{\\n' > src/data/scene.c && for i in $(seq 120); do echo '    ;' >> src/data/scene.c; done && "
             "echo '}' >> src/data/scene.c && printf '' > src/data/dataset.c && printf '' > src/misc/stray.c && "
             "printf '' > src/loose.c",
             dir, dir, dir, dir);
    CHECK(system(cmd) == 0, "making the tree");
    snprintf(cmd, sizeof cmd, "sh tools/check_structure.sh %s > %s/out.txt 2>&1", dir, dir);
    CHECK(system(cmd) != 0, "a broken tree passes");
    snprintf(cmd, sizeof cmd, "%s/out.txt", dir);
    char *out = cs_read_file(cmd, NULL);
    CHECK(out, "no output");
    int ok = strstr(out, "includes trainer: trainer (train) is above camera (data)") &&
             strstr(out, "includes circle: ") && strstr(out, "src/data/orphan.c has no header") &&
             strstr(out, "function of 122 lines") && strstr(out, "src/misc/stray.c is not in a feature folder") &&
             strstr(out, "src/loose.c is not in a feature folder");
    if (!ok) fprintf(stderr, "%s", out);
    free(out);
    CHECK(ok, "the checker's report misses a rule");
    return 0;
}

/* optim.steps_scale: every iteration-valued setting scaled as gsplat's steps_scaler does */
int test_steps_scale(void)
{
    cs_config c;
    cs_config_defaults(&c);
    c.optim.iterations_on_cpu = 1000;
    c.output.checkpoint_iterations[0] = 10000, c.output.n_checkpoint_iterations = 1;
    c.output.checkpoint_interval = 2000;
    cs_config one = c;
    cs_config_scale_steps(&one);
    CHECK(!memcmp(&one, &c, sizeof c), "scale 1 changes nothing");
    c.optim.steps_scale = 0.25;
    cs_config_scale_steps(&c);
    CHECK(c.optim.iterations == 7500 && c.optim.position_lr_max_steps == 7500 && c.optim.sh_increase_interval == 250,
          "optim: %d %d %d", c.optim.iterations, c.optim.position_lr_max_steps, c.optim.sh_increase_interval);
    CHECK(c.densify.from == 125 && c.densify.until == 3750 && c.densify.interval == 25 &&
              c.densify.opacity_reset_interval == 750, "densify: %d %d %d %d", c.densify.from, c.densify.until,
          c.densify.interval, c.densify.opacity_reset_interval);
    CHECK(c.eval.test_iterations[0] == 1750 && c.eval.test_iterations[1] == 7500 && c.output.save_iterations[1] == 7500 &&
              c.output.checkpoint_iterations[0] == 2500 && c.output.checkpoint_interval == 500, "marks");
    CHECK(c.optim.iterations_on_cpu == 1000 && c.optim.steps_scale == 1.0, "CPU count kept, scale applied once");
    c.densify.prune_at = 10000, c.optim.steps_scale = 0.5;
    cs_config_scale_steps(&c);
    CHECK(c.densify.prune_at == 5000, "densify.prune_at scaled to %d", c.densify.prune_at);
    /* the plan follows: a 500-iteration run of the default schedule now densifies */
    cs_config_defaults(&c);
    c.optim.iterations = 30000;
    c.optim.steps_scale = 500.0 / 30000.0;
    cs_config_scale_steps(&c);
    int densified = 0;
    for (int it = 1; it <= c.optim.iterations; it++) densified += cs_schedule_at(&c, it, c.optim.iterations, 1.0).densify;
    CHECK(c.optim.iterations == 500 && densified > 100, "500 iterations: %d densifications", densified);
    c.optim.steps_scale = 1e-6;
    cs_config_scale_steps(&c);
    CHECK(c.densify.interval >= 1 && c.optim.sh_increase_interval >= 1 && c.optim.iterations >= 1, "intervals >= 1");
    return 0;
}

/* densify.budget_momentum's target (train/budget.h) over a run of refinements with fresh random
   asks, against the rule written out here in doubles: start at the initial count times
   (1 + momentum), then max(T, floor(0.98 T + min(asked, T))), capped by densify.budget and the
   memory plan; the line's rows are ceil(T x fraction). */
int test_budget_momentum(void)
{
    uint64_t rs = test_seed();
    cs_densify_cfg d = {0};
    CHECK(cs_budget_start(&d, 1000, 0) == 0 && cs_budget_update(&d, 0, 500, 0) == 0 && cs_budget_rows(0, 0.5) == 0,
          "momentum off: no target, no limit");
    for (int trial = 0; trial < 50; trial++) {
        d.strategy = CS_STRATEGY_DEFAULT;
        d.budget_momentum = test_rand(&rs) * 6;
        d.budget = test_rand(&rs) < 0.3 ? 50000 + (int)(test_rand(&rs) * 2e6) : 0;
        int initial = 1 + (int)(test_rand(&rs) * 2e5), max_rows = 100000 + (int)(test_rand(&rs) * 4e6);
        double want = floor(initial * (1.0 + d.budget_momentum));
        double cap = d.budget > 0 && d.budget < max_rows ? d.budget : max_rows;
        want = want > cap ? cap : want;
        int t = cs_budget_start(&d, initial, max_rows);
        CHECK(t == (int)want && (want < 1 || t > 0), "start: %d, want %.0f (initial %d, momentum %g, caps %d %d)", t,
              want, initial, d.budget_momentum, d.budget, max_rows);
        for (int r = 0; r < 80; r++) {
            long asked = test_rand(&rs) < 0.1 ? 0 : (long)(test_rand(&rs) * test_rand(&rs) * 3e5);
            double w = asked > t ? t : (double)asked, next = floor(0.98 * t + w);
            next = next > t ? next : t;
            next = next > cap ? cap : next;
            int got = cs_budget_update(&d, t, asked, max_rows);
            CHECK(got == (int)next && got >= t && got <= 2 * t, "refinement %d: %d -> %d after %ld asked, want %.0f", r,
                  t, got, asked, next);
            t = got;
            double f = test_rand(&rs);
            int rows = cs_budget_rows(t, f);
            CHECK(rows == (int)ceil(t * f) && rows <= t, "rows at %g of %d: %d", f, t, rows);
        }
    }
    /* a steady ask W settles the target near W / (1 - 0.98) = 50 W */
    d.budget = 0, d.budget_momentum = 1;
    int t = cs_budget_start(&d, 10000, 0);
    for (int r = 0; r < 2000; r++) t = cs_budget_update(&d, t, 10000, 0);
    CHECK(t > 490000 && t <= 500000, "a steady ask of 10000 settles at %d, want about 500000", t);
    /* no cap but the checkpoint's limit: a huge multiple stays an int a header can hold */
    d.budget_momentum = 1000;
    t = cs_budget_start(&d, 100000000, 0);
    CHECK(t == 1000000000 && cs_budget_update(&d, t, 2000000000L, 0) == t, "uncapped start %d", t);
    /* MCMC keeps its own budget (densify.cap_max) */
    d.strategy = CS_STRATEGY_MCMC;
    CHECK(cs_budget_start(&d, 10000, 0) == 0, "a target under MCMC");
    return 0;
}
