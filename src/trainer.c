/* trainer: the training loop (graphdeco train.py on the device), evaluation, outputs. */
#include "trainer.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "densify.h"
#include "driver_mem.h"
#include "image_store.h"
#include "kernels.h"
#include "loss.h"
#include "model.h"
#include "optim.h"
#include "outputs.h"
#include "pass.h"
#include "render.h"
#include "tune.h"
#include "util.h"

typedef struct {
    cs_cl *cl;
    const cs_config *cfg;
    cs_scene scene;
    cs_kernels k;
    cs_model m;
    cs_renderer r;
    cs_loss loss;
    cs_densifier d;
    int *train, n_train, *test, n_test;
    int residency;            /* CS_RES_DEVICE / HOST / LAZY */
    cs_image_store images;
    double extent;
    int iterations, max_gaussians;
    size_t budget, bytes_per_gaussian, fixed_bytes;
    char out[1024];
    json_t *metrics;          /* array of evaluation records */
    char *log;                /* train_log.jsonl content */
    size_t log_len, log_cap;
    int *perm, perm_epoch;
    cs_driver_mem dm;         /* driver-reported usage (NVML), when available */
} trainer;

/* ---- helpers ------------------------------------------------------------------------------ */

static int out_path(const trainer *t, char *buf, size_t n, const char *rel)
{
    return cs_path_join(buf, n, t->out, rel);
}

/* shuffled epoch order from (seed, epoch): no hidden RNG state to checkpoint */
static int view_for_iteration(trainer *t, int iter)
{
    int epoch = (iter - 1) / t->n_train, pos = (iter - 1) % t->n_train;
    if (epoch != t->perm_epoch) {
        for (int i = 0; i < t->n_train; i++) t->perm[i] = i;
        for (int i = t->n_train - 1; i > 0; i--) {
            int j = (int)(cs_rand_uniform(((uint64_t)t->cfg->optim.seed << 32) ^ (uint64_t)epoch, (uint64_t)i) * (i + 1));
            if (j > i) j = i;
            int tmp = t->perm[i];
            t->perm[i] = t->perm[j];
            t->perm[j] = tmp;
        }
        t->perm_epoch = epoch;
    }
    return t->perm[pos];
}

static void log_append(trainer *t, const char *line)
{
    size_t n = strlen(line);
    if (t->log_len + n + 2 > t->log_cap) {
        t->log_cap = (t->log_len + n + 2) * 2;
        t->log = realloc(t->log, t->log_cap);
    }
    memcpy(t->log + t->log_len, line, n);
    t->log_len += n;
    t->log[t->log_len++] = '\n';
}

/* ---- set-up --------------------------------------------------------------------------------- */

static int plan_memory(trainer *t)
{
    const cs_config *cfg = t->cfg;
    cs_cl *cl = t->cl;
    t->budget = cfg->memory.vram_budget_mb > 0 ? (size_t)(cfg->memory.vram_budget_mb * 1048576.0)
                                               : (size_t)(cl->global_mem * 0.97);
    size_t rb[4];
    cs_kernel_opts layout;
    cs_kernel_opts_of(cfg, &layout);
    cs_model_row_bytes(&layout, rb);
    /* per-Gaussian scratch of a view: projection (56 B), 2D grads (36 B) and ~12 pairs of 24 B
       (keys, values, sort buffers). Measured on the H100, south_building grown to 6M
       Gaussians: 2.28 GB of scratch, 380 B per Gaussian; the plan was 4% optimistic at 8 pairs. */
    size_t scratch_per_g = 56 + 36 + 12 * 24;
    t->bytes_per_gaussian = rb[0] + rb[1] + rb[2] + rb[3];
    size_t images = cs_images_device_bytes(&t->scene, CS_RES_DEVICE, t->train, t->n_train), maxpx = 0;
    for (int i = 0; i < t->scene.n_cams; i++)
        if ((size_t)t->scene.cams[i].width * t->scene.cams[i].height > maxpx)
            maxpx = (size_t)t->scene.cams[i].width * t->scene.cams[i].height;
    size_t per_view = maxpx * (12 + 4 + 4 + 12 + 60 + 36 + 3);
    t->residency = cfg->data.image_residency;
    if (t->residency == CS_RES_AUTO) t->residency = images <= t->budget / 3 ? CS_RES_DEVICE : CS_RES_HOST;
    t->fixed_bytes = per_view + cs_images_device_bytes(&t->scene, t->residency, t->train, t->n_train);
    long fit = t->budget > t->fixed_bytes
                   ? (long)((t->budget - t->fixed_bytes) / (t->bytes_per_gaussian * 3 / 2 + scratch_per_g))
                   : 0;
    t->max_gaussians = fit > 2000000000L ? 2000000000 : (int)fit;
    if (cfg->memory.max_gaussians > 0 && cfg->memory.max_gaussians < t->max_gaussians)
        t->max_gaussians = cfg->memory.max_gaussians;
    cl->mem.budget = t->budget;
    const char *res_names[] = {"auto", "device", "host", "lazy"};
    printf("memory plan: budget %.0f MiB; %zu B per Gaussian (params %zu, grads %zu, optimizer %zu, densify %zu) + "
           "~%zu B scratch; fixed %.1f MiB (images: %s, %.1f MiB); at most %d Gaussians\n",
           t->budget / 1048576.0, t->bytes_per_gaussian, rb[0], rb[1], rb[2], rb[3], scratch_per_g,
           t->fixed_bytes / 1048576.0, res_names[t->residency], images / 1048576.0, t->max_gaussians);
    return 0;
}

static json_t *plan_json(const trainer *t)
{
    json_t *p = json_object();
    json_object_set_new(p, "bytes_per_gaussian", json_integer((json_int_t)t->bytes_per_gaussian));
    json_object_set_new(p, "fixed_bytes", json_integer((json_int_t)t->fixed_bytes));
    json_object_set_new(p, "max_gaussians", json_integer(t->max_gaussians));
    json_object_set_new(p, "budget_bytes", json_integer((json_int_t)t->budget));
    return p;
}

/* ---- evaluation ------------------------------------------------------------------------------ */

/* Evaluates views IDX of a split; appends a record to t->metrics. */
static int evaluate_split(trainer *t, const char *split, const int *idx, int n, int iteration, int active_degree,
                          int save_renders)
{
    if (n == 0) return 0;
    double t0 = cs_now();
    cs_renderer_trim(&t->r);
    cs_loss_trim(&t->loss);
    cs_densifier_trim(t->cl, &t->d);
    size_t train_peak = t->cl->mem.peak_total;
    cs_mem_window_start(t->cl);
    json_t *views = json_array();
    double sl1 = 0, spsnr = 0, sssim = 0;
    char dir[1400];
    if (save_renders) {
        snprintf(dir, sizeof dir, "%s/renders/%s_%d", t->out, split, iteration);
        if (cs_mkdirs(dir)) return -1;
    }
    for (int i = 0; i < n; i++) {
        const cs_camera *c = &t->scene.cams[idx[i]];
        cs_view v;
        cs_view_from_camera(c, &v);
        cs_buf *gt;
        unsigned off;
        cs_metrics mt;
        if (cs_images_get_camera(&t->images, idx[i], &gt, &off) ||
            cs_render_forward_sync(&t->r, &t->m, &v, active_degree, t->scene.background) ||
            cs_loss_metrics(&t->loss, &t->r, gt, off, c->width, c->height, 1) ||
            cs_loss_read(&t->loss, 1, c->width, c->height, 0.f, &mt, NULL)) {
            json_decref(views);
            return cs_fail_prefix("evaluating %s view %s", split, c->name);
        }
        if (save_renders) {
            char p[1800], stem[256];
            cs_camera_stem(c, stem, sizeof stem);
            snprintf(p, sizeof p, "%s/%s.png", dir, stem);
            if (cs_render_save_png(&t->r, c->width, c->height, p)) {
                json_decref(views);
                return -1;
            }
        }
        sl1 += mt.l1, spsnr += mt.psnr, sssim += mt.ssim;
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(c->name));
        json_object_set_new(o, "l1", json_real(mt.l1));
        json_object_set_new(o, "psnr", json_real(mt.psnr));
        json_object_set_new(o, "ssim", json_real(mt.ssim));
        json_array_append_new(views, o);
    }
    cs_renderer_trim(&t->r);
    cs_loss_trim(&t->loss);
    cs_images_trim(&t->images);
    json_t *rec = json_object();
    json_object_set_new(rec, "iteration", json_integer(iteration));
    json_object_set_new(rec, "split", json_string(split));
    json_object_set_new(rec, "views", json_integer(n));
    json_object_set_new(rec, "l1", json_real(sl1 / n));
    json_object_set_new(rec, "psnr", json_real(spsnr / n));
    json_object_set_new(rec, "ssim", json_real(sssim / n));
    json_object_set_new(rec, "gaussians", json_integer(t->m.n));
    json_object_set_new(rec, "seconds", json_real(cs_now() - t0));
    /* the evaluation's own peak (after the pool trim) and the run's peak before it */
    json_object_set_new(rec, "peak_device_mb", json_real(t->cl->mem.window_peak / 1048576.0));
    json_object_set_new(rec, "peak_before_mb", json_real(train_peak / 1048576.0));
    if (t->dm.lib) json_object_set_new(rec, "driver_mb", json_real(cs_driver_mem_sample(&t->dm) / 1048576.0));
    json_object_set_new(rec, "per_view", views);
    json_array_append_new(t->metrics, rec);
    printf("\n[eval %d] %s: %d views, L1 %.5f, PSNR %.3f, SSIM %.4f, %d Gaussians, %.1f s, peak %.1f MiB (run's peak "
           "before: %.1f MiB)\n", iteration, split, n, sl1 / n, spsnr / n, sssim / n, t->m.n, cs_now() - t0,
           t->cl->mem.window_peak / 1048576.0, train_peak / 1048576.0);
    char p[1200];
    if (out_path(t, p, sizeof p, "metrics.json")) return -1;
    return cs_write_json(p, t->metrics);
}

static int evaluate(trainer *t, int iteration, int active_degree)
{
    if (evaluate_split(t, "test", t->test, t->n_test, iteration, active_degree, t->cfg->eval.save_renders)) return -1;
    int ntr = t->cfg->eval.train_views < t->n_train ? t->cfg->eval.train_views : t->n_train;
    if (ntr > 0) {
        int *idx = malloc(sizeof(int) * ntr);
        for (int i = 0; i < ntr; i++) idx[i] = t->train[(size_t)i * t->n_train / ntr];
        int r = evaluate_split(t, "train", idx, ntr, iteration, active_degree, t->cfg->eval.save_renders);
        free(idx);
        return r;
    }
    return 0;
}

/* ---- saving ------------------------------------------------------------------------------------ */

static int save_ply(trainer *t, int iteration)
{
    char dir[1200], p[1300];
    snprintf(dir, sizeof dir, "%s/point_cloud/iteration_%d", t->out, iteration);
    if (cs_mkdirs(dir)) return -1;
    snprintf(p, sizeof p, "%s/point_cloud.ply", dir);
    cs_splats s;
    if (cs_model_download(t->cl, &t->m, &s)) return -1;
    int r = cs_ply_write(p, &s, 0);
    cs_splats_free(&s);
    return r;
}

static int save_checkpoint(trainer *t, int iteration, char *path_out, size_t n)
{
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/checkpoints", t->out);
    if (cs_mkdirs(dir)) return -1;
    snprintf(path_out, n, "%s/chkpnt_%d.bin", dir, iteration);
    return cs_checkpoint_save(t->cl, &t->m, iteration, path_out);
}

static int write_memory_json(trainer *t)
{
    char p[1200];
    json_t *o = cs_mem_json(t->cl);
    json_object_set_new(o, "plan", plan_json(t));
    json_object_set_new(o, "pool_bytes", json_integer((json_int_t)cs_renderer_pool_bytes(&t->r)));
    if (t->dm.lib) {
        cs_driver_mem_sample(&t->dm);
        json_object_set_new(o, "driver_peak_bytes", json_integer((json_int_t)t->dm.peak));
    }
    int r = out_path(t, p, sizeof p, "memory.json") || cs_write_json(p, o);
    json_decref(o);
    return r;
}

/* ---- the loop ---------------------------------------------------------------------------------- */

static void trainer_free(trainer *t)
{
    cs_renderer_free(&t->r);
    cs_loss_free(&t->loss);
    cs_densifier_free(t->cl, &t->d);
    cs_model_free(t->cl, &t->m);
    cs_images_free(&t->images);
    cs_kernels_release(&t->k);
    cs_driver_mem_close(&t->dm);
    cs_scene_free(&t->scene);
    free(t->train), free(t->test), free(t->perm), free(t->log);
    if (t->metrics) json_decref(t->metrics);
}

static void progress(const trainer *t, int iter, double loss, double psnr, double its, int tty)
{
    double eta = its > 0 ? (t->iterations - iter) / its : 0;
    double used = t->cl->mem.cur_total / 1048576.0;
    if (tty)
        fprintf(stderr, "\r[%6d/%d] loss %.5f  psnr %6.2f  %8d gauss  %6.1f it/s  ETA %5.0fs  mem %7.1f MiB (%4.1f%%)  ",
                iter, t->iterations, loss, psnr, t->m.n, its, eta, used, 100.0 * t->cl->mem.cur_total / t->budget);
    else
        printf("iter %d/%d loss %.5f psnr %.2f gaussians %d it/s %.1f eta %.0fs mem %.1f MiB\n", iter, t->iterations,
               loss, psnr, t->m.n, its, eta, used);
}

int cs_train(cs_cl *cl, const cs_config *cfg, const cs_train_opts *opt)
{
    trainer T;
    memset(&T, 0, sizeof T);
    trainer *t = &T;
    t->cl = cl;
    t->cfg = cfg;
    t->perm_epoch = -1;
    int rc = -1;
    snprintf(t->out, sizeof t->out, "%s", cfg->output.dir);
    if (cs_mkdirs(t->out)) return -1;
    t->iterations = cl->is_cpu && cfg->optim.iterations_on_cpu > 0 ? cfg->optim.iterations_on_cpu : cfg->optim.iterations;
    if (cs_scene_load(cfg, &t->scene)) return -1;
    t->train = malloc(sizeof(int) * t->scene.n_cams);
    t->test = malloc(sizeof(int) * t->scene.n_cams);
    t->perm = malloc(sizeof(int) * t->scene.n_cams);
    for (int i = 0; i < t->scene.n_cams; i++) {
        if (t->scene.cams[i].is_test) t->test[t->n_test++] = i;
        else t->train[t->n_train++] = i;
    }
    t->extent = cs_scene_extent(&t->scene);
    printf("dataset %s: %d training and %d test views at %dx%d, scene extent %.3f\n", cfg->data.path, t->n_train, t->n_test,
           t->scene.cams[0].width, t->scene.cams[0].height, t->extent);
    t->metrics = json_array();
    char p[1200];
    char *dump = cs_config_dump(cfg);
    int w = out_path(t, p, sizeof p, "config.json") || cs_write_file_atomic(p, dump, strlen(dump));
    free(dump);
    if (w || out_path(t, p, sizeof p, "cameras.json") || cs_write_cameras_json(p, &t->scene)) goto done;
    cs_kernel_opts ko;
    cs_kernel_opts_of(cfg, &ko);
    double tb = cs_now();
    cs_tuning tun;
    if (cs_kernels_build_tuned(cl, &ko, cfg->device.tune, &t->k, &tun)) goto done;
    printf("kernels: %s in %.1f s (float atomics: %s, fast math: %s)\n",
           cl->last_build_cached ? "loaded from cache" : "built", cs_now() - tb, cs_atomic_path_names[cl->atomics],
           cl->fast_math ? "on" : "off");
    cs_tuning_summary(&tun, stdout);
    if (cs_driver_mem_open(&t->dm, cl) == 0) printf("driver memory: NVML, %.1f MiB in use now\n", cs_driver_mem_sample(&t->dm) / 1048576.0);
    else printf("driver memory: not reported (%s)\n", t->dm.why);
    if (plan_memory(t) ||
        cs_images_init(&t->images, cl, &t->scene, t->residency, t->train, t->n_train, cfg->data.host_cache_mb))
        goto done;
    cs_renderer_init(&t->r, cl, &t->k, (float)cfg->model.kernel_size);
    cs_loss_init(&t->loss, cl, &t->k);
    if (cfg->model.filter_3d && cs_filter3d_setup(cl, &t->d, &t->scene)) goto done;
    int start = 0;
    if (opt && opt->resume) {
        if (cs_checkpoint_load(cl, &t->m, &start, opt->resume, &ko)) goto done;
        printf("resumed from %s at iteration %d with %d Gaussians\n", opt->resume, start, t->m.n);
        /* keep earlier evaluation records */
        json_t *old = json_load_file((snprintf(p, sizeof p, "%s/metrics.json", t->out), p), 0, NULL);
        if (json_is_array(old)) {
            json_decref(t->metrics);
            t->metrics = old;
        } else if (old) {
            json_decref(old);
        }
        char *lg = (snprintf(p, sizeof p, "%s/train_log.jsonl", t->out), cs_read_file(p, NULL));
        if (lg) {
            /* keep only lines up to the checkpoint's iteration */
            char *line = lg, *nl;
            while ((nl = strchr(line, '\n'))) {
                *nl = '\0';
                int it = 0;
                if (sscanf(line, "{\"iteration\": %d", &it) == 1 && it <= start) log_append(t, line);
                line = nl + 1;
            }
            free(lg);
        }
    } else {
        cs_splats init;
        if (cs_init_splats(cfg, &t->scene, &init)) goto done;
        printf("initialised %d Gaussians from %s\n", init.n, t->scene.n_points ? "the dataset's points" : "random points");
        int r = out_path(t, p, sizeof p, "input.ply") || cs_ply_write(p, &init, 0) ||
                cs_model_create(cl, &t->m, &init, &ko, init.n);
        cs_splats_free(&init);
        if (r) goto done;
        if (cfg->model.filter_3d && cs_filter3d_compute(cl, &t->k, &t->d, &t->m)) goto done;
    }
    t->m.max_rows = t->max_gaussians; /* spare capacity never past the plan */
    int tty = isatty(2);
    double t_start = cs_now(), t_last = t_start;
    int it_last = start;
    float lambda = (float)cfg->optim.lambda_dssim;
    int flush = cfg->memory.flush_interval;
    char last_ckpt[1400] = "";
    int iter;
    for (iter = start + 1; iter <= t->iterations; iter++) {
        if (opt && opt->stop && *opt->stop) {
            char cp[1400];
            if (save_checkpoint(t, iter - 1, cp, sizeof cp)) goto done;
            fprintf(stderr, "\ninterrupted: checkpoint saved to %s (resume with --resume %s)\n", cp, cp);
            rc = 2;
            goto done;
        }
        int active = (iter - 1) / cfg->optim.sh_increase_interval;
        if (active > cfg->model.sh_degree) active = cfg->model.sh_degree;
        double lr_mean = cs_lr_expon(cfg->optim.position_lr_init * t->extent, cfg->optim.position_lr_final * t->extent,
                                     cfg->optim.position_lr_delay_mult, 0, cfg->optim.position_lr_max_steps, iter);
        int vi = view_for_iteration(t, iter);
        const cs_camera *c = &t->scene.cams[t->train[vi]];
        cs_view v;
        cs_view_from_camera(c, &v);
        cs_buf *gt;
        unsigned goff;
        if (cs_images_get(&t->images, vi, &gt, &goff) ||
            cs_train_pass(&t->r, &t->loss, &t->m, &v, active, t->scene.background, gt, goff, lambda) ||
            cs_images_release(&t->images) ||
            (iter < t->iterations && cs_images_prefetch(&t->images, view_for_iteration(t, iter + 1)))) {
            cs_fail_prefix("iteration %d (view %s)", iter, c->name);
            goto done;
        }
        /* gsplat steps Adam on every iteration, then densifies the stepped parameters; graphdeco
           replaces its tensors before the step, so it takes no step on densification iterations
           (optim.step_on_densify false). H100, south_building 7k: 22.11 dB over 35 seeds with the
           step, 22.01 over 45 without. */
        int step_first = cfg->optim.step_on_densify, densified = 0, reset = 0;
        if (step_first && cs_adam_step(cl, &t->k, &t->m, cfg, lr_mean)) goto done;
        if (iter < cfg->densify.until) {
            if (cs_densify_stats(cl, &t->k, &t->m, &t->r, c->width, c->height)) goto done;
            if (iter > cfg->densify.from && iter % cfg->densify.interval == 0) {
                int check = iter > cfg->densify.opacity_reset_interval;
                if (cs_densify_step(cl, &t->k, &t->d, &t->m, cfg, t->extent, check, t->max_gaussians,
                                    cs_hash_u32((uint32_t)cfg->optim.seed * 2654435761u ^ (uint32_t)iter)))
                    goto done;
                densified = 1;
                if (cfg->model.filter_3d && cs_filter3d_compute(cl, &t->k, &t->d, &t->m)) goto done;
            }
            reset = iter % cfg->densify.opacity_reset_interval == 0 ||
                    (cfg->data.white_background && iter == cfg->densify.from);
        } else if (cfg->model.filter_3d && iter % 100 == 0 && iter < t->iterations - 100) {
            if (cs_filter3d_compute(cl, &t->k, &t->d, &t->m)) goto done;
        }
        if (!step_first && !densified && cs_adam_step(cl, &t->k, &t->m, cfg, lr_mean)) goto done;
        /* graphdeco resets opacity before the step and skips the step for the new opacity
           tensor; resetting after the step gives the same min(o, 0.01) and zero moments */
        if (reset && cs_densify_reset_opacity(cl, &t->k, &t->m)) goto done;
        if (densified || iter % flush == 0) {
            cs_renderer_trim(&t->r);
            cs_loss_trim(&t->loss);
            cs_densifier_trim(cl, &t->d);
        }
        if (iter % cfg->log.interval == 0 || iter == t->iterations) {
            cs_metrics mt;
            double loss;
            if (cs_loss_read(&t->loss, 0, c->width, c->height, lambda, &mt, &loss)) goto done;
            double now = cs_now(), its = (iter - it_last) / fmax(now - t_last, 1e-9);
            if (!isfinite(loss)) {
                cs_fail("loss is %s at iteration %d; stopping. Last good checkpoint: %s", isnan(loss) ? "NaN" : "Inf",
                        iter, last_ckpt[0] ? last_ckpt : "(none: set output.checkpoint_iterations)");
                goto done;
            }
            t_last = now;
            it_last = iter;
            progress(t, iter, loss, mt.psnr, its, tty);
            char line[640], drv[64] = "";
            if (t->dm.lib) snprintf(drv, sizeof drv, ", \"driver_mb\": %.2f", cs_driver_mem_sample(&t->dm) / 1048576.0);
            snprintf(line, sizeof line,
                     "{\"iteration\": %d, \"loss\": %.6f, \"psnr\": %.4f, \"gaussians\": %d, \"its\": %.2f, "
                     "\"device_mb\": %.2f, \"peak_device_mb\": %.2f, \"pool_mb\": %.2f%s, \"seconds\": %.2f}",
                     iter, loss, mt.psnr, t->m.n, its, cl->mem.cur_total / 1048576.0, cl->mem.peak_total / 1048576.0,
                     cs_renderer_pool_bytes(&t->r) / 1048576.0, drv, now - t_start);
            log_append(t, line);
            if (out_path(t, p, sizeof p, "train_log.jsonl") || cs_write_file_atomic(p, t->log, t->log_len)) goto done;
        }
        int is_last = iter == t->iterations;
        if (cs_config_has_mark(cfg->output.checkpoint_iterations, cfg->output.n_checkpoint_iterations, iter) &&
            save_checkpoint(t, iter, last_ckpt, sizeof last_ckpt))
            goto done;
        if ((is_last || cs_config_has_mark(cfg->eval.test_iterations, cfg->eval.n_test_iterations, iter)) &&
            evaluate(t, iter, active))
            goto done;
        if ((is_last || cs_config_has_mark(cfg->output.save_iterations, cfg->output.n_save_iterations, iter)) &&
            save_ply(t, iter))
            goto done;
    }
    if (start >= t->iterations && save_ply(t, t->iterations)) goto done;
    CS_CHECK(clFinish(cl->queue));
    printf("\ntraining done: %d iterations in %.1f s, %d Gaussians, peak device memory %.1f MiB (accounted)",
           t->iterations - start, cs_now() - t_start, t->m.n, cl->mem.peak_total / 1048576.0);
    if (t->dm.lib) cs_driver_mem_sample(&t->dm), printf(", %.1f MiB (driver, sampled)", t->dm.peak / 1048576.0);
    if (t->r.redone) printf("; %d passes redone after their pairs overflowed the buffers", t->r.redone);
    if (t->residency != CS_RES_DEVICE)
        printf("; image uploads: %d prefetched, %d on demand", t->images.prefetch_hits, t->images.prefetch_misses);
    printf("\n");
    if (write_memory_json(t)) goto done;
    printf("outputs in %s: point_cloud/iteration_%d/point_cloud.ply, metrics.json, train_log.jsonl%s\n", t->out,
           t->iterations, cfg->eval.save_renders ? ", renders/" : "");
    rc = 0;
done:
    trainer_free(t);
    return rc;
}

/* ---- evaluation of a saved model --------------------------------------------------------------- */

int cs_evaluate_splats(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const char *out_dir,
                       int iteration)
{
    trainer T;
    memset(&T, 0, sizeof T);
    trainer *t = &T;
    t->cl = cl;
    t->cfg = cfg;
    t->scene = *scene; /* borrowed */
    snprintf(t->out, sizeof t->out, "%s", out_dir);
    t->test = malloc(sizeof(int) * (scene->n_cams + 1));
    t->train = malloc(sizeof(int) * (scene->n_cams + 1));
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) t->test[t->n_test++] = i;
        else t->train[t->n_train++] = i;
    }
    t->residency = CS_RES_LAZY;
    t->metrics = json_array();
    t->budget = (size_t)-1;
    cs_kernel_opts ko;
    cs_kernel_opts_of(cfg, &ko);
    ko.sh_degree = s->sh_degree;
    ko.filter_3d = s->filter_3d != NULL;
    int rc = -1;
    if (cs_images_init(&t->images, cl, &t->scene, CS_RES_LAZY, t->train, t->n_train, 0) ||
        cs_kernels_build_tuned(cl, &ko, cs_tune_readonly(cfg->device.tune), &t->k, NULL) ||
        cs_model_create(cl, &t->m, s, &ko, s->n))
        goto done;
    cs_renderer_init(&t->r, cl, &t->k, (float)cfg->model.kernel_size);
    cs_loss_init(&t->loss, cl, &t->k);
    if (!t->n_test) {
        cs_fail("the dataset has no test views (set data.eval to true)");
        goto done;
    }
    rc = evaluate(t, iteration, s->sh_degree);
done:
    memset(&t->scene, 0, sizeof t->scene);
    trainer_free(t);
    return rc;
}
