/* blocks: `clsplat partition` and `clsplat merge` (blocks.h). */
#include "blocks.h"

#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "block_plan.h"
#include "outputs.h"
#include "ply.h"
#include "run_dir.h"
#include "scene.h"
#include "util.h"

/* ---- partition ----------------------------------------------------------------------------- */

/* settings a job gets from the plan itself, never from the partition's command line */
static int plan_key(const char *assign)
{
    static const char *const keys[] = {"data.path=", "data.block_plan=", "data.block="};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        if (!strncmp(assign, keys[k], strlen(keys[k]))) return 1;
    return 0;
}

/* --headroom's default: a block keeps about 70% of its Gaussians in its core when its
   neighbours' pixels leave its loss (data.block_mask; south_building, 4 blocks: 65-70% for three
   blocks, 40-43% for the one with the widest margin; without the mask 26-44%) */
#define CORE_HEADROOM 1.3

/* block B's memory.max_gaussians: TOTAL x the share of the scene's N_POINTS in its core, x the
   HEADROOM for the Gaussians it keeps outside its core (the merge drops those) */
static long block_cap(long total, double headroom, const cs_block_plan *p, int b, int n_points)
{
    double share = n_points > 0 ? (double)p->blocks[b].n_core / n_points : 1.0;
    return (long)ceil(total * fmin(1.0, share * headroom));
}

static int write_jobs(const cs_partition_opts *o, const cs_block_plan *p, int n_points, const char *plan_path,
                      const char *path)
{
    json_t *jobs = json_array(), *top = json_object();
    char cfg_abs[PATH_MAX], a[PATH_MAX + 64];
    if (o->config_file && !realpath(o->config_file, cfg_abs)) return cs_fail("%s: no such config file", o->config_file);
    if (o->config_file) json_object_set_new(top, "config", json_string(cfg_abs));
    for (int b = 0; b < p->n; b++) {
        json_t *set = json_array();
        json_array_append_new(set, json_string("data.block_mask=true")); /* the partition's --set may turn it off */
        for (int i = 0; i < o->n_sets; i++)
            if (!plan_key(o->sets[i])) json_array_append_new(set, json_string(o->sets[i]));
        snprintf(a, sizeof a, "data.block_plan=%s", plan_path);
        json_array_append_new(set, json_string(a));
        snprintf(a, sizeof a, "data.block=%d", b);
        json_array_append_new(set, json_string(a));
        if (o->gaussians > 0) { /* the block's share of the total, by its core's points */
            long cap = block_cap(o->gaussians, o->headroom > 0 ? o->headroom : CORE_HEADROOM, p, b, n_points);
            snprintf(a, sizeof a, "memory.max_gaussians=%ld", cap);
            json_array_append_new(set, json_string(a));
            snprintf(a, sizeof a, "densify.cap_max=%ld", cap); /* MCMC's count, for a job trained with it */
            json_array_append_new(set, json_string(a));
        }
        char name[32];
        snprintf(name, sizeof name, "block_%d", b);
        json_array_append_new(jobs, json_pack("{s:s,s:s,s:o}", "name", name, "data", p->source, "set", set));
    }
    json_object_set_new(top, "jobs", jobs);
    char *text = json_dumps(top, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
    json_decref(top);
    int rc = text ? cs_write_file_atomic(path, text, strlen(text)) : cs_fail("out of host memory");
    free(text);
    return rc;
}

static void print_plan(const cs_block_plan *p, int n_cams, int n_points)
{
    printf("%d blocks over %d cameras and %d points (margin %.2f, a camera trains a block when it sees %.0f%% of "
           "its core or stands in it):\n",
           p->n, n_cams, n_points, p->margin, 100 * p->min_share);
    for (int b = 0; b < p->n; b++) {
        const cs_block *k = &p->blocks[b];
        printf("  block_%d: %d cameras (%d training), %d initial points, core u [%.3g, %.3g) v [%.3g, %.3g)\n", b,
               k->n_cams, k->n_train, k->n_points, k->core[0], k->core[1], k->core[2], k->core[3]);
    }
}

int cs_partition(const cs_partition_opts *o)
{
    const cs_config *cfg = o->cfg;
    char data[PATH_MAX], plan_path[PATH_MAX + 16], jobs_path[PATH_MAX + 16];
    if (!o->plan_dir) return cs_fail("partition needs -o PLAN (the plan's folder)");
    if (o->blocks < 1) return cs_fail("partition needs --blocks N");
    if (!cfg->data.path[0] || !realpath(cfg->data.path, data))
        return cs_fail("partition needs -s DATA, an existing dataset folder (got '%s')", cfg->data.path);
    if (cs_run_dir_check_apart(o->plan_dir, data, "-o") || cs_mkdirs(o->plan_dir)) return -1;
    cs_data_cfg dc = cfg->data;
    dc.block_plan[0] = '\0', dc.block = -1;
    cs_scene s;
    if (cs_scene_load(&dc, &s)) return -1;
    cs_block_plan p;
    int rc = cs_block_partition(&s, data, o->blocks, o->margin >= 0 ? o->margin : 0.2,
                                o->min_share >= 0 ? o->min_share : 0.25, &p);
    if (!rc) {
        char dir[PATH_MAX];
        rc = !realpath(o->plan_dir, dir) ? cs_fail("%s: cannot resolve the folder", o->plan_dir) : 0;
        snprintf(plan_path, sizeof plan_path, "%s/plan.json", dir);
        snprintf(jobs_path, sizeof jobs_path, "%s/jobs.json", dir);
        if (!rc) print_plan(&p, s.n_cams, s.n_points);
        rc = rc || cs_block_plan_write(&p, plan_path) || write_jobs(o, &p, s.n_points, plan_path, jobs_path);
        if (!rc)
            printf("wrote %s and %s\nnext: clsplat batch %s -o ROOT, then clsplat merge %s -m ROOT -o OUT\n", plan_path,
                   jobs_path, jobs_path, o->plan_dir);
        cs_block_plan_free(&p);
    }
    cs_scene_free(&s);
    return rc;
}

/* ---- merge --------------------------------------------------------------------------------- */

/* The rows of SRC whose centre lies in block B's core: appended to DST when it is not NULL
   (room for them), counted in *KEPT either way. */
static int keep_core(const cs_block_plan *p, int b, const cs_splats *src, cs_splats *dst, int *kept)
{
    if (dst && (src->sh_degree != dst->sh_degree || (src->filter_3d != NULL) != (dst->filter_3d != NULL)))
        return cs_fail("block_%d: SH degree %d%s, block_0: %d%s; the blocks must be trained alike", b, src->sh_degree,
                       src->filter_3d ? " with a 3D filter" : "", dst->sh_degree, dst->filter_3d ? " with a 3D filter" : "");
    int K3 = CS_SH_COEFFS(src->sh_degree) * 3;
    *kept = 0;
    for (int i = 0; i < src->n; i++) {
        double x[3] = {src->means[3 * i], src->means[3 * i + 1], src->means[3 * i + 2]}, uv[2];
        cs_block_ground(p, x, uv);
        if (!cs_block_inside(p->blocks[b].core, uv)) continue;
        ++*kept;
        if (!dst) continue;
        int j = dst->n++;
        memcpy(dst->means + 3 * j, src->means + 3 * i, 12);
        memcpy(dst->log_scales + 3 * j, src->log_scales + 3 * i, 12);
        memcpy(dst->quats + 4 * j, src->quats + 4 * i, 16);
        dst->logit_opacity[j] = src->logit_opacity[i];
        memcpy(dst->sh + (size_t)K3 * j, src->sh + (size_t)K3 * i, sizeof(float) * (size_t)K3);
        if (dst->filter_3d) dst->filter_3d[j] = src->filter_3d[i];
    }
    return 0;
}

/* Block B's latest PLY under ROOT into *S; *IT its iteration. */
static int read_block(const char *root, int b, cs_splats *s, int *it)
{
    char dir[PATH_MAX], ply[PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s/block_%d", root, b);
    if (cs_run_dir_latest_ply(dir, ply, sizeof ply, it) || cs_ply_read(ply, s))
        return cs_fail_prefix("block_%d (train it first: clsplat batch PLAN/jobs.json -o %s)", b, root);
    return 0;
}

/* Two passes over the blocks' PLYs, one block in memory at a time beside the merged model:
   the core rows counted (and the largest iteration, the SH degree and 3D filter of block_0
   found), then copied into a model of exactly that size. */
static int merge_rows(const cs_block_plan *p, const char *root, cs_splats *m, int *iteration)
{
    long total = 0;
    *iteration = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int b = 0; b < p->n; b++) {
            cs_splats s;
            int it, kept = 0;
            if (read_block(root, b, &s, &it)) return -1;
            int rc = 0;
            if (pass == 1 && b == 0) { /* the merged model, shaped like block_0 */
                rc = total > INT_MAX ? cs_fail("%ld Gaussians: more than one model holds", total)
                                     : cs_splats_alloc(m, (int)total, s.sh_degree, s.filter_3d != NULL);
                m->n = 0;
            }
            if (!rc) rc = keep_core(p, b, &s, pass ? m : NULL, &kept);
            if (!rc && pass == 0) total += kept, *iteration = it > *iteration ? it : *iteration;
            if (!rc && pass == 1) printf("  block_%d: %d of its %d Gaussians in its core\n", b, kept, s.n);
            cs_splats_free(&s);
            if (rc) return -1;
        }
    return 0;
}

/* OUT/config.json: block_0's settings with the plan and the block's caps taken off (the whole
   scene; an MCMC fine-tune's count is the merged model's N) */
static int write_config(const char *root, const char *out, int n)
{
    char p[PATH_MAX + 64];
    cs_config c;
    cs_config_defaults(&c);
    snprintf(p, sizeof p, "%s/block_0/config.json", root);
    if (cs_config_load_file(&c, p)) return -1;
    c.data.block_plan[0] = '\0', c.data.block = -1, c.data.block_mask = false;
    c.memory.max_gaussians = 0, c.densify.cap_max = n;
    snprintf(c.output.dir, sizeof c.output.dir, "%s", out);
    char *dump = cs_config_dump(&c);
    snprintf(p, sizeof p, "%s/config.json", out);
    int rc = dump ? cs_write_file_atomic(p, dump, strlen(dump)) : cs_fail("out of host memory");
    free(dump);
    return rc;
}

static int merge_into(const cs_block_plan *p, const char *root, const char *out, int *iteration)
{
    cs_splats m = {0};
    int rc = merge_rows(p, root, &m, iteration);
    char dir[PATH_MAX + 64], ply[PATH_MAX + 96];
    snprintf(dir, sizeof dir, "%s/point_cloud/iteration_%d", out, *iteration);
    snprintf(ply, sizeof ply, "%s/point_cloud.ply", dir);
    if (!rc) rc = cs_mkdirs(dir) || cs_ply_write(ply, &m, 0) || write_config(root, out, m.n);
    if (!rc) printf("merged %d Gaussians into %s\n", m.n, ply);
    cs_splats_free(&m);
    return rc;
}

/* PLAN: a plan file, or the folder partition wrote it in */
static int read_plan(const char *plan, cs_block_plan *p)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, cs_dir_exists(plan) ? "%s/plan.json" : "%s", plan);
    return cs_block_plan_read(path, p);
}

int cs_merge(const char *plan, const char *root, const char *out, int *iteration)
{
    if (!plan || !root || !out) return cs_fail("merge needs PLAN, -m ROOT and -o OUT");
    cs_block_plan p;
    if (read_plan(plan, &p)) return -1;
    int rc = 0;
    if (cs_run_dir_holds_run(out)) rc = cs_fail("%s holds a run already: merge into a new folder", out);
    else rc = cs_run_dir_check_apart(out, p.source, "-o") || merge_into(&p, root, out, iteration);
    cs_block_plan_free(&p);
    return rc;
}

/* the blocks that were assigned view NAME */
static int blocks_of(const cs_block_plan *p, const char *name)
{
    int n = 0;
    for (int b = 0; b < p->n; b++)
        for (int c = 0; c < p->blocks[b].n_cams; c++)
            if (!strcmp(p->blocks[b].cams[c], name)) {
                n++;
                break;
            }
    return n;
}

int cs_merge_report(const char *plan, const char *out)
{
    cs_block_plan p;
    if (read_plan(plan, &p)) return -1;
    char path[PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/metrics.json", out);
    json_error_t e;
    json_t *m = json_load_file(path, 0, &e), *views = json_object_get(json_array_get(m, json_array_size(m) - 1), "per_view");
    int rc = 0;
    if (!json_is_array(views)) rc = cs_fail("%s: no per-view record of the merged model's evaluation", path);
    double sum[2] = {0, 0};
    int n[2] = {0, 0};
    for (size_t i = 0; !rc && i < json_array_size(views); i++) {
        json_t *v = json_array_get(views, i);
        const char *name = json_string_value(json_object_get(v, "name"));
        int k = name ? blocks_of(&p, name) : 0, border = k > 1;
        json_object_set_new(v, "blocks", json_integer(k));
        sum[border] += json_number_value(json_object_get(v, "psnr")), n[border]++;
    }
    if (!rc) {
        char a[32] = "-", b[32] = "-";
        if (n[0]) snprintf(a, sizeof a, "%.3f", sum[0] / n[0]);
        if (n[1]) snprintf(b, sizeof b, "%.3f", sum[1] / n[1]);
        printf("merged model's test views: %d assigned to one block, PSNR %s; %d to several (across a border), PSNR %s\n",
               n[0], a, n[1], b);
        json_t *rec = json_array_get(m, json_array_size(m) - 1);
        json_object_set_new(rec, "psnr_one_block", n[0] ? json_real(sum[0] / n[0]) : json_null());
        json_object_set_new(rec, "psnr_border", n[1] ? json_real(sum[1] / n[1]) : json_null());
        json_object_set_new(rec, "views_border", json_integer(n[1]));
        rc = cs_write_json(path, m);
    }
    json_decref(m);
    cs_block_plan_free(&p);
    return rc;
}
