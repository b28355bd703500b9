/* Block training (#37): the partition of a scene into blocks, the plan file, one block's view
 * of a scene, and partition -> batch -> merge from the command line. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_plan.h"
#include "cli_run.h"
#include "masks.h"
#include "ply.h"
#include "test.h"
#include "util.h"

/* A street along x (0..40) of points between the kerbs, cameras every 2 units on one side
   (y = -6, z = 1.5) looking across it (+y), world up +z: each camera sees a stretch of about
   +-5 units, so it should train only the blocks of its stretch. Fresh random points per run. */
static int street_of(uint64_t *rs, cs_scene *s, int n_points)
{
    memset(s, 0, sizeof *s);
    s->n_points = n_points, s->n_cams = 21;
    s->points = malloc(sizeof(float) * 3 * s->n_points);
    s->colors = calloc((size_t)s->n_points * 3, 1);
    s->cams = calloc((size_t)s->n_cams, sizeof *s->cams);
    if (!s->points || !s->colors || !s->cams) return -1;
    for (int i = 0; i < s->n_points; i++) {
        s->points[3 * i] = (float)(40 * test_rand(rs));
        s->points[3 * i + 1] = (float)(2 * test_rand(rs) - 1);
        s->points[3 * i + 2] = (float)(3 * test_rand(rs));
    }
    for (int c = 0; c < s->n_cams; c++) {
        cs_camera *k = &s->cams[c];
        snprintf(k->name, sizeof k->name, "c%02d.png", c);
        k->width = 64, k->height = 48, k->fx = k->fy = 40, k->cx = 32, k->cy = 24;
        k->is_test = c % 8 == 0;
        /* rows: camera x = world +x, camera y (down) = world -z, camera z (forward) = world +y */
        double R[9] = {1, 0, 0, 0, 0, -1, 0, 1, 0}, C[3] = {2.0 * c, -6, 1.5};
        memcpy(k->R, R, sizeof R);
        for (int r = 0; r < 3; r++) k->t[r] = -(R[3 * r] * C[0] + R[3 * r + 1] * C[1] + R[3 * r + 2] * C[2]);
    }
    return 0;
}

static int street(uint64_t *rs, cs_scene *s) { return street_of(rs, s, 3000); }

/* the share of block B's core points camera C sees, computed here from the camera's pinhole */
static double seen_share(const cs_scene *s, const cs_block_plan *p, int b, const cs_camera *c)
{
    int n = 0, seen = 0;
    for (int i = 0; i < s->n_points; i++) {
        double x[3] = {s->points[3 * i], s->points[3 * i + 1], s->points[3 * i + 2]};
        if (cs_block_of(p, x) != b) continue;
        n++;
        double cam[3];
        for (int r = 0; r < 3; r++) cam[r] = c->R[3 * r] * x[0] + c->R[3 * r + 1] * x[1] + c->R[3 * r + 2] * x[2] + c->t[r];
        double u = c->fx * cam[0] / cam[2] + c->cx, v = c->fy * cam[1] / cam[2] + c->cy;
        seen += cam[2] > 0 && u >= 0 && u < c->width && v >= 0 && v < c->height;
    }
    return n ? (double)seen / n : 0;
}

static int assigned(const cs_block *k, const char *name)
{
    for (int c = 0; c < k->n_cams; c++)
        if (!strcmp(k->cams[c], name)) return 1;
    return 0;
}

/* every point (and random points far outside) in exactly one core; the cores balanced; each
   camera assigned exactly where it sees a quarter of the core or stands in the expanded region */
static int check_plan(const cs_scene *s, const cs_block_plan *p, uint64_t *rs)
{
    int count[CS_BLOCKS_MAX] = {0};
    for (int i = 0; i < s->n_points + 1000; i++) {
        double x[3], uv[2];
        for (int k = 0; k < 3; k++)
            x[k] = i < s->n_points ? s->points[3 * i + k] : (test_rand(rs) - 0.5) * 1e4;
        cs_block_ground(p, x, uv);
        int in = 0, which = -1;
        for (int b = 0; b < p->n; b++)
            if (cs_block_inside(p->blocks[b].core, uv)) in++, which = b;
        CHECK(in == 1, "point %d (%g %g %g) lies in %d cores", i, x[0], x[1], x[2], in);
        if (i < s->n_points) count[which]++;
    }
    for (int b = 0; b < p->n; b++)
        CHECK(abs(count[b] - s->n_points / p->n) <= 2, "block %d holds %d of %d points", b, count[b], s->n_points);
    for (int b = 0; b < p->n; b++)
        for (int c = 0; c < s->n_cams; c++) {
            double cc[3], uv[2], share = seen_share(s, p, b, &s->cams[c]);
            cs_camera_center(&s->cams[c], cc);
            cs_block_ground(p, cc, uv);
            int want = share >= p->min_share || cs_block_inside(p->blocks[b].expanded, uv);
            CHECK(assigned(&p->blocks[b], s->cams[c].name) == want, "camera %d sees %.2f of block %d's core: %s", c,
                  share, b, want ? "not assigned" : "assigned");
        }
    return 0;
}

/* the ray O + q D's parameters inside region R's rectangle (slabs), q >= 0, into [*Q0, *Q1];
   empty when *Q0 > *Q1. Only to explain where sampling cannot see the answer. */
static void slab_interval(const cs_ground_region *r, const double o[3], const double d[3], double *q0, double *q1)
{
    *q0 = 0, *q1 = INFINITY;
    for (int k = 0; k < 2; k++) {
        double p = o[k] - r->origin[k], lo = r->rect[2 * k], hi = r->rect[2 * k + 1];
        if (d[k] == 0) {
            if (!(p >= lo && p < hi)) *q1 = -1;
            continue;
        }
        double a = (lo - p) / d[k], b = (hi - p) / d[k];
        *q0 = fmax(*q0, fmin(a, b)), *q1 = fmin(*q1, fmax(a, b));
    }
}

/* cs_ground_ray_hits against rays sampled finely (every 0.005 out to 200): a disagreement must
   be one sampling cannot see, a grazing ray (inside the rectangle for less than 0.02) or one
   that enters it past 200 (a side at infinity, a direction nearly along the other) */
static int check_ray_hits(uint64_t *rs)
{
    cs_ground_region r = {.on = 1, .origin = {0.3, -0.2, 0.1}, .u = {1, 0, 0}, .v = {0, 1, 0}};
    int grazing = 0;
    for (int t = 0; t < 400; t++) {
        for (int k = 0; k < 2; k++) {
            double a = 8 * test_rand(rs) - 4, b = a + 0.2 + 3 * test_rand(rs);
            r.rect[2 * k] = test_rand(rs) < 0.2 ? -INFINITY : a, r.rect[2 * k + 1] = test_rand(rs) < 0.2 ? INFINITY : b;
        }
        double o[3], d[3];
        for (int k = 0; k < 3; k++) o[k] = 10 * test_rand(rs) - 5, d[k] = 2 * test_rand(rs) - 1;
        if (t % 10 == 0) d[t % 20 ? 0 : 1] = 0; /* parallel to a side */
        int hit = cs_ground_ray_hits(&r, o, d), sampled = 0;
        for (int i = 0; i <= 40000 && !sampled; i++) {
            double q = i * 0.005, x[2] = {o[0] + q * d[0] - r.origin[0], o[1] + q * d[1] - r.origin[1]};
            sampled = x[0] >= r.rect[0] && x[0] < r.rect[1] && x[1] >= r.rect[2] && x[1] < r.rect[3];
        }
        if (hit == sampled) continue;
        double q0, q1;
        slab_interval(&r, o, d, &q0, &q1);
        CHECK(q1 - q0 < 0.02 || q0 > 199.99, "ray %d: hits %d, sampled %d, inside the rectangle over [%g, %g]", t, hit,
              sampled, q0, q1);
        grazing++;
    }
    CHECK(grazing <= 40, "%d of 400 rays disagree with sampling", grazing);
    return 0;
}

/* data.block_mask on the street: a pixel whose ray meets the street (y = 0) at x is kept by
   block B exactly when x lies in B's expanded region, away from its edges (a 16 px cell spans
   about 3 units there); pixels above the street keep their ray's verdict */
static int check_block_mask(const cs_scene *s, const cs_block_plan *p)
{
    cs_scene m = *s;
    cs_ground_region *r = &m.block_region;
    r->on = 1, r->points = s->points, r->n_points = s->n_points;
    memcpy(r->origin, p->origin, sizeof r->origin), memcpy(r->u, p->u, sizeof r->u), memcpy(r->v, p->v, sizeof r->v);
    int wrong = 0, judged = 0, partial = 0;
    for (int b = 0; b < p->n; b++) {
        memcpy(r->rect, p->blocks[b].expanded, sizeof r->rect);
        for (int c = 0; c < s->n_cams; c++) {
            const cs_camera *k = &s->cams[c];
            cs_image img = {.width = k->width, .height = k->height, .channels = 4};
            img.px = malloc((size_t)k->width * k->height * 4);
            CHECK(img.px != NULL, "out of memory");
            memset(img.px, 255, (size_t)k->width * k->height * 4);
            double kept;
            CHECK_OK(cs_masks_region(&m, k, &img, &kept));
            partial += kept > 0 && kept < 1;
            double cc[3];
            cs_camera_center(k, cc);
            for (int j = 0; j < k->height; j++)
                for (int i = 0; i < k->width; i++) {
                    double dx = (i + 0.5 - k->cx) / k->fx, dz = -(j + 0.5 - k->cy) / k->fy; /* per unit of +y */
                    double x = cc[0] + dx * 6, z = cc[2] + dz * 6, uv[2], w[3] = {x, 0, z};
                    if (z < 0.3 || z > 2.7) continue;
                    cs_block_ground(p, w, uv);
                    double e = fmin(fabs(uv[0] - p->blocks[b].expanded[0]), fabs(uv[0] - p->blocks[b].expanded[1]));
                    if (e < 3.5) continue;
                    judged++;
                    wrong += (img.px[((size_t)j * k->width + i) * 4 + 3] != 0) != cs_block_inside(p->blocks[b].expanded, uv);
                }
            free(img.px);
        }
    }
    printf("  block mask: %d of %d street pixels away from block edges judged wrongly; %d views partly kept\n", wrong,
           judged, partial);
    CHECK(judged > 10000 && wrong <= judged / 100, "%d of %d pixels masked wrongly", wrong, judged);
    CHECK(partial > 4, "only %d (view, block) pairs are partly masked", partial);
    return 0;
}

int test_block_partition(void)
{
    uint64_t rs = test_seed() ^ 0xb10c;
    cs_scene s;
    CHECK_OK(street(&rs, &s));
    cs_block_plan p, q;
    CHECK_OK(cs_block_partition(&s, "/street", 4, 0.2, 0.25, &p));
    CHECK(fabs(fabs(p.up[2]) - 1) < 1e-9 && p.up[2] > 0, "up (%g %g %g) is not +z", p.up[0], p.up[1], p.up[2]);
    CHECK(fabs(fabs(p.u[0]) - 1) < 1e-3, "u (%g %g %g) is not along the street", p.u[0], p.u[1], p.u[2]);
    if (check_plan(&s, &p, &rs) || check_ray_hits(&rs) || check_block_mask(&s, &p)) return 1;
    int total = 0, min_cams = s.n_cams;
    for (int b = 0; b < p.n; b++) total += p.blocks[b].n_cams, min_cams = p.blocks[b].n_cams < min_cams ? p.blocks[b].n_cams : min_cams;
    printf("  4 blocks, %d camera assignments of %d cameras (fewest in a block: %d)\n", total, s.n_cams, min_cams);
    CHECK(total < 2 * s.n_cams && min_cams > 0, "cameras are not selective: %d assignments", total);
    /* the plan file round trip */
    char path[600];
    snprintf(path, sizeof path, "%s/street_plan.json", test_tmpdir());
    CHECK_OK(cs_block_plan_write(&p, path));
    CHECK_OK(cs_block_plan_read(path, &q));
    CHECK(q.n == p.n && !memcmp(q.u, p.u, sizeof p.u) && !memcmp(q.origin, p.origin, sizeof p.origin), "plan header differs");
    for (int b = 0; b < p.n; b++) {
        CHECK(!memcmp(q.blocks[b].core, p.blocks[b].core, sizeof p.blocks[b].core) &&
                  !memcmp(q.blocks[b].expanded, p.blocks[b].expanded, sizeof p.blocks[b].expanded) &&
                  q.blocks[b].n_cams == p.blocks[b].n_cams,
              "block %d differs after the round trip", b);
        for (int c = 0; c < p.blocks[b].n_cams; c++) CHECK(!strcmp(q.blocks[b].cams[c], p.blocks[b].cams[c]), "camera list");
    }
    cs_block_plan_free(&q);
    cs_block_plan_free(&p);
    cs_scene_free(&s);
    /* 40,000 points: the shares come from a sample of each core (at most 4096 points), so a
       camera may differ from the exact share only where that share is close to min_share */
    CHECK_OK(street_of(&rs, &s, 40000));
    CHECK_OK(cs_block_partition(&s, "/street", 2, 0.2, 0.25, &p));
    int near = 0;
    for (int b = 0; b < p.n; b++)
        for (int c = 0; c < s.n_cams; c++) {
            double cc[3], uv[2], share = seen_share(&s, &p, b, &s.cams[c]);
            cs_camera_center(&s.cams[c], cc);
            cs_block_ground(&p, cc, uv);
            int want = share >= p.min_share || cs_block_inside(p.blocks[b].expanded, uv);
            if (fabs(share - p.min_share) < 0.03) {
                near++;
                continue;
            }
            CHECK(assigned(&p.blocks[b], s.cams[c].name) == want, "40k points: camera %d sees %.3f of block %d", c, share, b);
        }
    printf("  40,000 points: assignments from sampled cores agree (%d within 0.03 of the share not judged)\n", near);
    cs_block_plan_free(&p);
    cs_scene_free(&s);
    /* too few points, bad counts */
    CHECK_OK(street(&rs, &s));
    s.n_points = 5;
    CHECK(cs_block_partition(&s, "/street", 4, 0.2, 0.25, &p) != 0, "5 points made 4 blocks");
    CHECK(cs_block_partition(&s, "/street", 0, 0.2, 0.25, &p) != 0, "0 blocks accepted");
    cs_scene_free(&s);
    return 0;
}

/* the first PSNR record of DIR/metrics.json */
static double run_psnr(const char *dir)
{
    char p[700];
    snprintf(p, sizeof p, "%s/metrics.json", dir);
    json_t *o = json_load_file(p, 0, NULL);
    double v = json_number_value(json_object_get(json_array_get(o, json_array_size(o) - 1), "psnr"));
    json_decref(o);
    return v;
}

/* each block's job caps its count at its share of --gaussians, and its model keeps to it */
static int check_caps(const char *plan, const char *root)
{
    char p[800];
    snprintf(p, sizeof p, "%s/jobs.json", plan);
    json_t *o = json_load_file(p, 0, NULL), *jobs = json_object_get(o, "jobs");
    long sum = 0;
    for (size_t b = 0; b < json_array_size(jobs); b++) {
        json_t *set = json_object_get(json_array_get(jobs, b), "set");
        long cap = 0;
        for (size_t i = 0; i < json_array_size(set); i++) {
            const char *a = json_string_value(json_array_get(set, i));
            if (a && !strncmp(a, "memory.max_gaussians=", 21)) cap = atol(a + 21);
        }
        snprintf(p, sizeof p, "%s/block_%zu/point_cloud/iteration_400/point_cloud.ply", root, b);
        cs_splats s;
        CHECK_OK(cs_ply_read(p, &s));
        printf("  block_%zu: %d Gaussians, capped at %ld\n", b, s.n, cap);
        CHECK(cap > 0 && s.n <= cap && s.n > cap * 3 / 4, "block_%zu: %d Gaussians, its cap %ld (kept to, and reached)", b,
              s.n, cap);
        cs_splats_free(&s);
        sum += cap;
    }
    size_t n = json_array_size(jobs);
    json_decref(o);
    CHECK(n == 2 && sum > 3200 && sum < 6400, "caps add up to %ld for 3200", sum);
    return 0;
}

/* partition -> batch -> merge as a user types it, on a COLMAP demo scene: the merged model
   has every Gaussian in exactly one core and scores within 1 dB of one run over the whole
   scene with the same iterations and Gaussian total (--gaussians, each block capped at its share); a merge into a folder holding a run is refused */
int test_block_train_merge(void)
{
    char d[600], data[700], plan[700], root[700], out[700], one[700], log[700], cmd[1600];
    snprintf(d, sizeof d, "%s/blocks", test_tmpdir());
    snprintf(data, sizeof data, "%s/demo", d), snprintf(plan, sizeof plan, "%s/plan", d);
    snprintf(root, sizeof root, "%s/root", d), snprintf(out, sizeof out, "%s/merged", d);
    snprintf(one, sizeof one, "%s/one", d), snprintf(log, sizeof log, "%s/log.txt", d);
    CHECK_OK(cs_mkdirs(d));
    const char *gen = getenv("CLSPLAT_GEN_DEMO");
    snprintf(cmd, sizeof cmd, "%s %s 48 36 --format colmap >/dev/null", gen ? gen : "./build/gen_demo", data);
    CHECK(system(cmd) == 0, "gen_demo failed");
    const char *it = "--set optim.iterations=400 --set densify.from=150 --set densify.interval=100 "
                     "--set densify.grad_threshold=0.00005";
    CHECK(cli_run("", log, "partition -s %s -o %s --blocks 2 --eval --gaussians 3200", data, plan) == 0,
          "partition failed, see %s", log);
    CHECK(cli_run("", log, "batch %s/jobs.json -o %s %s", plan, root, it) == 0, "batch failed, see %s", log);
    CHECK(cli_run("", log, "merge %s -m %s -o %s --finetune 150", plan, root, out) == 0, "merge failed, see %s", log);
    CHECK(cli_run("", log, "train -s %s -o %s --eval %s --set memory.max_gaussians=3200", data, one, it) == 0,
          "the single run failed, see %s", log);
    if (check_caps(plan, root)) return 1;
    cs_block_plan p;
    cs_splats s;
    char ply[800];
    snprintf(ply, sizeof ply, "%s/plan.json", plan);
    CHECK_OK(cs_block_plan_read(ply, &p));
    snprintf(ply, sizeof ply, "%s/point_cloud/iteration_400/point_cloud.ply", out);
    CHECK_OK(cs_ply_read(ply, &s));
    int outside = 0;
    for (int i = 0; i < s.n; i++) {
        double x[3] = {s.means[3 * i], s.means[3 * i + 1], s.means[3 * i + 2]}, uv[2];
        cs_block_ground(&p, x, uv);
        int in = 0;
        for (int b = 0; b < p.n; b++) in += cs_block_inside(p.blocks[b].core, uv);
        outside += in != 1;
    }
    double pm = run_psnr(out), p1 = run_psnr(one);
    char ft[800];
    snprintf(ft, sizeof ft, "%s/finetune", out);
    double pf = run_psnr(ft);
    printf("  merged: %.2f dB, after --finetune 150: %.2f dB\n", pm, pf);
    CHECK(pf > pm + 0.1, "the fine-tune did not improve the merged model: %.2f -> %.2f dB", pm, pf);
    snprintf(ply, sizeof ply, "%s/metrics.json", out);
    json_t *mj = json_load_file(ply, 0, NULL), *rec = json_array_get(mj, json_array_size(mj) - 1);
    int nb = (int)json_integer_value(json_object_get(rec, "views_border"));
    double pb = json_number_value(json_object_get(rec, "psnr_border"));
    printf("  merged: %d test views across a border, PSNR %.2f\n", nb, pb);
    json_decref(mj);
    CHECK(nb > 0 && pb > 10, "the merge reported %d border views at %.2f dB", nb, pb);
    printf("  merged: %d Gaussians, test PSNR %.2f dB; one run over the scene: %.2f dB\n", s.n, pm, p1);
    cs_splats_free(&s);
    cs_block_plan_free(&p);
    CHECK(outside == 0, "%d merged Gaussians are not in exactly one core", outside);
    CHECK(pm > 10 && pm > p1 - 1.0, "merged %.2f dB against %.2f for one run", pm, p1);
    CHECK(cli_run("", log, "merge %s -m %s -o %s", plan, root, one) != 0, "a merge into a run folder was not refused");
    return 0;
}

/* Block training in MCMC and in configs/fast.json (partition's --gaussians caps MCMC's count as
   well), merged with --finetune (fast.json's resolution schedule must not shrink the
   fine-tune's views), and the merged folder exported to .spz */
int test_block_modes(void)
{
    char d[600], data[700], log[700];
    snprintf(d, sizeof d, "%s/block_modes", test_tmpdir());
    snprintf(data, sizeof data, "%s/demo", d), snprintf(log, sizeof log, "%s/log.txt", d);
    CHECK_OK(cs_mkdirs(d));
    const char *gen = getenv("CLSPLAT_GEN_DEMO");
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "%s %s 48 36 --format colmap >/dev/null", gen ? gen : "./build/gen_demo", data);
    CHECK(system(cmd) == 0, "gen_demo failed");
    const char *it = "--set optim.iterations=300 --set densify.from=100 --set densify.interval=100 --set densify.until=250 "
                     "--set eval.test_iterations=[300] --set output.save_iterations=[300] "
                     "--set optim.position_lr_max_steps=300 --set densify.budget=3000";
    const char *modes[2][2] = {{"mcmc", "--set densify.strategy=mcmc"}, {"fast", "-c configs/fast.json"}};
    for (int k = 0; k < 2; k++) {
        char plan[800], root[800], out[800], ft[800];
        snprintf(plan, sizeof plan, "%s/plan_%s", d, modes[k][0]), snprintf(root, sizeof root, "%s/root_%s", d, modes[k][0]);
        snprintf(out, sizeof out, "%s/merged_%s", d, modes[k][0]), snprintf(ft, sizeof ft, "%s/finetune", out);
        CHECK(cli_run("", log, "partition -s %s -o %s --blocks 2 --eval --gaussians 3000 %s %s", data, plan, modes[k][1], it) == 0,
              "%s: partition failed, see %s", modes[k][0], log);
        CHECK(cli_run("", log, "batch %s/jobs.json -o %s", plan, root) == 0, "%s: batch failed, see %s", modes[k][0], log);
        CHECK(cli_run("", log, "merge %s -m %s -o %s --finetune 60", plan, root, out) == 0, "%s: merge failed, see %s",
              modes[k][0], log);
        double pm = run_psnr(out), pf = run_psnr(ft);
        printf("  %s: merged %.2f dB, fine-tuned %.2f dB\n", modes[k][0], pm, pf);
        CHECK(pm > 15 && pf > pm, "%s: merged %.2f dB, fine-tuned %.2f", modes[k][0], pm, pf);
        CHECK(cli_run("", log, "export -m %s --format spz -o %s/merged.spz", out, d) == 0, "%s: export failed, see %s",
              modes[k][0], log);
    }
    return 0;
}
