/* evaluator: forward-only evaluation, metrics.json, renders of a saved model. */
#include "evaluator.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "kernels.h"
#include "orbit.h"
#include "outputs.h"
#include "scene.h"
#include "util.h"
#include "viewer.h"

/* ---- the evaluator ----------------------------------------------------------------------- */

int cs_evaluator_open(cs_evaluator *ev, cs_cl *cl, const cs_scene *scene, cs_renderer *r, cs_loss *loss,
                      cs_image_store *images, cs_driver_mem *dm, const char *out_dir, int keep)
{
    memset(ev, 0, sizeof *ev);
    ev->cl = cl, ev->scene = scene, ev->r = r, ev->loss = loss, ev->images = images;
    ev->dm = dm && dm->lib ? dm : NULL;
    ev->source = "train";
    ev->resolution = -1;
    ev->train_seconds = -1;
    if (snprintf(ev->out, sizeof ev->out, "%s", out_dir) >= (int)sizeof ev->out)
        return cs_fail("output folder name too long (%zu characters)", strlen(out_dir));
    char p[1200];
    if (keep && cs_path_join(p, sizeof p, ev->out, "metrics.json") == 0 && cs_file_exists(p)) {
        json_error_t err;
        ev->records = json_load_file(p, 0, &err);
        if (!json_is_array(ev->records)) {
            json_decref(ev->records);
            ev->records = NULL;
            return cs_fail("%s: not a metrics file (%s)", p, err.text);
        }
    }
    if (!ev->records) ev->records = json_array();
    return 0;
}

int cs_evaluator_use_lpips(cs_evaluator *ev, const cs_kernels *k, const char *path)
{
    char def[1024];
    const char *p = cs_lpips_weights_path(path, def, sizeof def);
    if (!p) {
        printf("LPIPS: off (no weights at %s; tools/get-lpips-weights.sh makes them, or set eval.lpips_weights)\n", def);
        return 0;
    }
    if (cs_lpips_load(&ev->lpips, ev->cl, k, p)) return cs_fail_prefix("eval.lpips_weights");
    ev->lpips.gt_channels = cs_scene_gt_channels(ev->scene);
    ev->lpips_on = true;
    return 0;
}

void cs_evaluator_close(cs_evaluator *ev)
{
    cs_lpips_free(&ev->lpips);
    ev->lpips_on = false;
    if (ev->records) json_decref(ev->records);
    ev->records = NULL;
}

static void trim(cs_evaluator *ev)
{
    cs_renderer_trim(ev->r);
    cs_loss_trim(ev->loss);
}

/* Decodes camera C's image at the training resolution and writes it as DIR/<stem>.png. */
static int save_gt(const cs_scene *scene, const cs_camera *c, const char *dir)
{
    char p[1800], stem[256];
    cs_camera_stem(c, stem, sizeof stem);
    snprintf(p, sizeof p, "%s/%s.png", dir, stem);
    cs_image img;
    if (cs_scene_read_image(scene, c, &img)) return -1;
    int r = cs_image_save_png(p, &img);
    cs_image_free(&img);
    return r;
}

/* Longest edge of each panel of a preview: larger views are shrunk by a whole factor (box
 * average) so that encoding them costs little next to training; TensorBoard and the report show
 * them smaller than this anyway. */
#define PREVIEW_MAX_SIDE 800

/* The render of C (in ev->r) | its ground truth (8-bit RGB at GT_OFF of GT on the device) |
 * their error (the mean absolute difference of the channels, times 4, white on black), each
 * shrunk to PREVIEW_MAX_SIDE, into OUT (RGB). */
static int view_preview(cs_evaluator *ev, const cs_camera *c, const cs_buf *gt, unsigned gt_off, cs_image *out)
{
    cs_image r = {0}, g = {0};
    int rc = cs_render_read_image(ev->r, c->width, c->height, &r), ch = cs_scene_gt_channels(ev->scene);
    if (!rc) {
        g = (cs_image){c->width, c->height, ch, malloc((size_t)ch * c->width * c->height)};
        rc = !g.px ? cs_fail("out of host memory (preview image)")
                   : cs_buf_read(ev->cl, gt, gt_off, (size_t)ch * c->width * c->height, g.px);
    }
    if (!rc && ch == 4) rc = cs_image_dim_by_alpha(&g); /* masked pixels shown dark */
    rc = rc || cs_image_shrink_to(&r, PREVIEW_MAX_SIDE, PREVIEW_MAX_SIDE) ||
         cs_image_shrink_to(&g, PREVIEW_MAX_SIDE, PREVIEW_MAX_SIDE);
    int W = r.width, H = r.height;
    *out = (cs_image){3 * W, H, 3, NULL};
    if (!rc && !(out->px = malloc((size_t)9 * W * H))) rc = cs_fail("out of host memory (preview image)");
    for (int y = 0; !rc && y < H; y++) {
        uint8_t *row = out->px + (size_t)y * 9 * W;
        const uint8_t *rr = r.px + (size_t)y * 3 * W, *gg = g.px + (size_t)y * 3 * W;
        memcpy(row, rr, (size_t)3 * W);
        memcpy(row + 3 * W, gg, (size_t)3 * W);
        for (int x = 0; x < 3 * W; x += 3) {
            int e = (abs(rr[x] - gg[x]) + abs(rr[x + 1] - gg[x + 1]) + abs(rr[x + 2] - gg[x + 2])) * 4 / 3;
            row[6 * W + x] = row[6 * W + x + 1] = row[6 * W + x + 2] = (uint8_t)(e > 255 ? 255 : e);
        }
    }
    cs_image_free(&r), cs_image_free(&g);
    if (rc) cs_image_free(out);
    return rc;
}

/* Where a view's preview goes: TensorBoard (TB, as images/SPLIT/<stem>) and a folder (DIR, as
 * DIR/<stem>.png, for the run's report); either may be NULL. */
typedef struct {
    cs_tb_summary *tb;
    const char *split, *dir;
} preview_to;

/* View C's preview, PNG-encoded (fast zlib level), to TO. */
static int save_preview(cs_evaluator *ev, const cs_camera *c, const cs_buf *gt, unsigned gt_off, const preview_to *to)
{
    cs_image both = {0};
    uint8_t *png = NULL;
    size_t n = 0;
    char stem[256];
    cs_camera_stem(c, stem, sizeof stem);
    int rc = view_preview(ev, c, gt, gt_off, &both) || cs_image_encode_png(&both, 1, &png, &n);
    if (!rc && to->tb) {
        char tag[320];
        snprintf(tag, sizeof tag, "images/%s/%s", to->split, stem);
        cs_tb_add_image(to->tb, tag, png, n, both.width, both.height, 3);
    }
    if (!rc && to->dir) {
        char p[1800];
        snprintf(p, sizeof p, "%s/%s.png", to->dir, stem);
        rc = cs_write_file_atomic(p, png, n);
    }
    free(png);
    cs_image_free(&both);
    return rc;
}

/* Renders and measures camera CAM; with DIR, writes the render to DIR/renders and the
 * ground truth to DIR/gt; with TO, its preview (render | ground truth | error) there. */
static int eval_view(cs_evaluator *ev, const cs_model *m, int cam, int active_degree, const char *dir,
                     const preview_to *to, cs_metrics *mt, double *lpips)
{
    /* LPIPS when LPIPS is non-NULL */
    const cs_camera *c = &ev->scene->cams[cam];
    cs_view v;
    cs_view_from_camera(c, &v);
    cs_buf *gt;
    unsigned off;
    if (cs_images_get_camera(ev->images, cam, &gt, &off) ||
        cs_render_forward_sync(ev->r, m, &v, active_degree, ev->scene->background) ||
        (ev->exposure && (cs_exposure_select_camera(ev->exposure, cam) ||
                          cs_exposure_apply(ev->exposure, &ev->r->img, c->width, c->height))) ||
        cs_loss_metrics(ev->loss, &ev->r->img, gt, off, c->width, c->height, 1) ||
        cs_loss_read(ev->loss, 1, 0.f, mt, NULL) ||
        (lpips && cs_lpips_render(&ev->lpips, &ev->r->img, gt, off, c->width, c->height, lpips)))
        return -1;
    if (to && save_preview(ev, c, gt, off, to)) return -1;
    if (!dir) return 0;
    char p[1800], stem[256];
    cs_camera_stem(c, stem, sizeof stem);
    snprintf(p, sizeof p, "%s/renders/%s.png", dir, stem);
    if (cs_render_save_png(ev->r, c->width, c->height, p)) return -1;
    snprintf(p, sizeof p, "%s/gt", dir);
    return save_gt(ev->scene, c, p);
}

/* OUT/<split>/ours_<iteration>/{renders,gt} */
static int make_render_dirs(const char *out, const char *split, int iteration, char *dir, size_t n)
{
    char p[1500];
    snprintf(dir, n, "%s/%s/ours_%d", out, split, iteration);
    snprintf(p, sizeof p, "%s/renders", dir);
    if (cs_mkdirs(p)) return -1;
    snprintf(p, sizeof p, "%s/gt", dir);
    return cs_mkdirs(p);
}

/* eval/<split>/<key> for the record's means and memory, written with the images in S */
static int tb_eval_scalars(cs_tb_writer *tb, const json_t *rec, const char *split, int iteration, cs_tb_summary *s)
{
    static const char *const keys[] = {"l1", "psnr", "ssim", "lpips", "seconds", "peak_device_mb", "driver_mb"};
    char tag[96];
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        json_t *v = json_object_get(rec, keys[i]);
        if (!json_is_number(v)) continue;
        snprintf(tag, sizeof tag, "eval/%s/%s", split, keys[i]);
        cs_tb_add_scalar(s, tag, (float)json_number_value(v));
    }
    return cs_tb_write(tb, iteration, s, 1);
}

static json_t *view_record(const cs_camera *c, const cs_metrics *mt, bool with_lpips, double lpips)
{
    json_t *v = json_pack("{s:s,s:f,s:f,s:f}", "name", c->name, "l1", mt->l1, "psnr", mt->psnr, "ssim", mt->ssim);
    if (with_lpips) json_object_set_new(v, "lpips", json_real(lpips));
    return v;
}

/* LPIPS scratch for the largest of the N views IDX (once per evaluation); *ON: whether this
 * evaluation has LPIPS (weights loaded and every view large enough for the network) */
static int lpips_begin(cs_evaluator *ev, const int *idx, int n, bool *on)
{
    int w = 0, h = 0, minw = 1 << 30, minh = 1 << 30;
    for (int i = 0; i < n; i++) {
        const cs_camera *c = &ev->scene->cams[idx[i]];
        w = c->width > w ? c->width : w, h = c->height > h ? c->height : h;
        minw = c->width < minw ? c->width : minw, minh = c->height < minh ? c->height : minh;
    }
    *on = ev->lpips_on && cs_lpips_fits(minw, minh);
    if (ev->lpips_on && !*on && !ev->lpips_small_noted) {
        printf("LPIPS: not computed: views of %dx%d are smaller than the %dx%d the network takes\n", minw, minh,
               CS_LPIPS_MIN_SIDE, CS_LPIPS_MIN_SIDE);
        ev->lpips_small_noted = true;
    }
    return *on ? cs_lpips_begin(&ev->lpips, w, h) : 0;
}

int cs_evaluate_views(cs_evaluator *ev, const cs_model *m, const char *split, const int *idx, int n, int iteration,
                      int active_degree, int save_renders)
{
    if (n == 0) return 0;
    double t0 = cs_now();
    trim(ev);
    size_t train_peak = ev->cl->mem.peak_total;
    cs_mem_window_start(ev->cl);
    char dir[1400];
    if (save_renders && make_render_dirs(ev->out, split, iteration, dir, sizeof dir)) return -1;
    bool lp_on;
    if (lpips_begin(ev, idx, n, &lp_on)) return -1;
    json_t *views = json_array();
    double sl1 = 0, spsnr = 0, sssim = 0, slp = 0;
    cs_tb_summary tbs;
    cs_tb_summary_init(&tbs);
    int test = !strcmp(split, "test"), tb_images = ev->tb && test ? ev->tb_views : 0;
    int previews = !test ? 0 : ev->preview_views < n ? ev->preview_views : n;
    char pdir[1200];
    if (previews > 0) {
        snprintf(pdir, sizeof pdir, "%s/previews/ours_%d", ev->out, iteration);
        if (cs_mkdirs(pdir)) return -1;
    }
    for (int i = 0; i < n; i++) {
        cs_metrics mt;
        double lp = 0;
        preview_to to = {i < tb_images ? &tbs : NULL, split, i < previews ? pdir : NULL};
        if (eval_view(ev, m, idx[i], active_degree, save_renders ? dir : NULL, to.tb || to.dir ? &to : NULL, &mt,
                      lp_on ? &lp : NULL)) {
            cs_lpips_end(&ev->lpips);
            cs_tb_summary_free(&tbs);
            json_decref(views);
            return cs_fail_prefix("evaluating %s view %s", split, ev->scene->cams[idx[i]].name);
        }
        sl1 += mt.l1, spsnr += mt.psnr, sssim += mt.ssim, slp += lp;
        json_array_append_new(views, view_record(&ev->scene->cams[idx[i]], &mt, lp_on, lp));
    }
    cs_lpips_end(&ev->lpips);
    trim(ev);
    cs_images_trim(ev->images);
    double secs = cs_now() - t0, peak = ev->cl->mem.window_peak / 1048576.0, before = train_peak / 1048576.0;
    json_t *rec = json_pack("{s:i,s:s,s:s,s:i,s:i,s:f,s:f,s:f,s:i,s:f,s:f,s:f}", "iteration", iteration, "split",
                            split, "source", ev->source, "resolution", ev->resolution, "views", n, "l1", sl1 / n,
                            "psnr", spsnr / n, "ssim", sssim / n, "gaussians", m->n, "seconds", secs,
                            "peak_device_mb", peak, "peak_before_mb", before);
    if (ev->train_seconds >= 0) json_object_set_new(rec, "train_seconds", json_real(ev->train_seconds));
    if (ev->dm) json_object_set_new(rec, "driver_mb", json_real(cs_driver_mem_sample(ev->dm) / 1048576.0));
    if (lp_on) json_object_set_new(rec, "lpips", json_real(slp / n));
    /* drawn under the views' exposures: held-out views take their nearest training views' */
    if (ev->exposure) json_object_set_new(rec, "exposure_nearest", json_integer(CS_EXPOSURE_NEAREST));
    json_object_set_new(rec, "per_view", views);
    if (ev->tb && tb_eval_scalars(ev->tb, rec, split, iteration, &tbs)) {
        json_decref(rec);
        return -1;
    }
    cs_tb_summary_free(&tbs);
    json_array_append_new(ev->records, rec);
    char lps[32] = "";
    if (lp_on) snprintf(lps, sizeof lps, ", LPIPS %.4f", slp / n);
    char when[48] = "";
    if (ev->train_seconds >= 0) snprintf(when, sizeof when, " after %.1f s of training", ev->train_seconds);
    printf("\n[eval %d%s] %s: %d views, L1 %.5f, PSNR %.3f, SSIM %.4f%s, %d Gaussians, %.1f s, peak %.1f MiB (run's "
           "peak before: %.1f MiB)%s\n", iteration, when, split, n, sl1 / n, spsnr / n, sssim / n, lps, m->n, secs, peak,
           before, ev->exposure ? ", under the views' exposures" : "");
    char p[1200];
    if (cs_path_join(p, sizeof p, ev->out, "metrics.json")) return -1;
    return cs_write_json(p, ev->records);
}

int cs_evaluate_splits(cs_evaluator *ev, const cs_model *m, const cs_eval_cfg *cfg, const cs_split *sp, int iteration,
                       int active_degree)
{
    if (cs_evaluate_views(ev, m, "test", sp->test, sp->n_test, iteration, active_degree, cfg->save_renders)) return -1;
    int ntr = cfg->train_views < sp->n_train ? cfg->train_views : sp->n_train;
    if (ntr <= 0) return 0;
    int *idx = malloc(sizeof(int) * ntr);
    if (!idx) return cs_fail("out of host memory");
    for (int i = 0; i < ntr; i++) idx[i] = sp->train[(size_t)i * sp->n_train / ntr];
    int r = cs_evaluate_views(ev, m, "train", idx, ntr, iteration, active_degree, cfg->save_renders);
    free(idx);
    return r;
}

/* optim.exposure: the views' transforms saved beside the model, so that `clsplat eval` draws the
   views as the training's evaluation did; without the file, the identity (said) */
static int open_exposure(cs_evaluator *ev, cs_exposure *ex, const cs_kernels *k, const cs_split *sp, int iteration)
{
    char p[1400];
    snprintf(p, sizeof p, "%s/point_cloud/iteration_%d/exposure.json", ev->out, iteration);
    if (!cs_file_exists(p)) {
        printf("note: the run trained with optim.exposure but %s is missing: the views are drawn at the identity\n", p);
        return 0;
    }
    int found;
    if (cs_exposure_open(ex, ev->cl, k, ev->scene, sp->train, sp->n_train) || cs_exposure_load(ex, p, &found)) return -1;
    printf("exposure: %d of the %d training views' transforms from %s; a held-out view takes the blend of its %d "
           "nearest\n", found, sp->n_train, p, CS_EXPOSURE_NEAREST);
    ev->exposure = ex;
    return 0;
}

int cs_evaluate_model(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const char *out_dir,
                      int iteration)
{
    cs_split sp;
    if (cs_split_of(scene, &sp)) return -1;
    if (!sp.n_test) {
        cs_split_free(&sp);
        return cs_fail("the dataset has no test views (set data.eval to true)");
    }
    cs_viewer w;
    cs_image_store images;
    memset(&images, 0, sizeof images);
    cs_evaluator ev;
    memset(&ev, 0, sizeof ev);
    cs_exposure ex;
    memset(&ex, 0, sizeof ex);
    int rc = -1;
    if (cs_images_init(&images, cl, scene, CS_RES_LAZY, sp.train, sp.n_train, 0, 1) == 0 &&
        cs_viewer_open(&w, cl, cfg, s, scene, CS_PROGS_EVAL) == 0) {
        if (cs_evaluator_open(&ev, cl, scene, &w.r, &w.loss, &images, NULL, out_dir, 1) == 0 &&
            cs_evaluator_use_lpips(&ev, &w.k, cfg->eval.lpips_weights) == 0 &&
            (!cfg->optim.exposure || open_exposure(&ev, &ex, &w.k, &sp, iteration) == 0)) {
            ev.source = "eval";
            ev.resolution = cfg->data.resolution;
            rc = cs_evaluate_views(&ev, &w.m, "test", sp.test, sp.n_test, iteration, s->sh_degree,
                                   cfg->eval.save_renders);
        }
        cs_evaluator_close(&ev);
        cs_exposure_free(&ex);
        cs_viewer_close(&w, cl);
    }
    cs_images_free(&images);
    cs_split_free(&sp);
    return rc;
}

/* ---- clsplat render ------------------------------------------------------------------------ */

/* name of the folder holding PATH ("images" when there is none) */
static void parent_folder(const char *path, char *out, size_t n)
{
    snprintf(out, n, "images");
    const char *end = strrchr(path, '/');
    if (!end) return;
    const char *start = end;
    while (start > path && start[-1] != '/') start--;
    if (end > start) snprintf(out, n, "%.*s", (int)(end - start), start);
}

static int in_split(const cs_camera *c, const char *split)
{
    return !strcmp(split, "all") || (!strcmp(split, "test")) == (c->is_test != 0);
}

/* views from different folders may share names (Blender train/r_0.png and test/r_0.png):
   then the outputs mirror each image's folder */
static int needs_mirror(const cs_scene *scene, const char *split)
{
    char first[256] = "", folder[256];
    for (int i = 0; i < scene->n_cams; i++) {
        if (!in_split(&scene->cams[i], split)) continue;
        parent_folder(scene->cams[i].path, folder, sizeof folder);
        if (!first[0]) snprintf(first, sizeof first, "%s", folder);
        else if (strcmp(first, folder)) return 1;
    }
    return 0;
}

/* P (ending in ".png") with its ".png" replaced by "_depth_mean.png" and "_depth_median.png":
   the render's depths as 16-bit counts of SCALE (0: no surface; clamped at 65535) */
static int save_depths(cs_renderer *r, int W, int H, const char *p, double scale)
{
    size_t n = (size_t)W * H;
    float *d = malloc(sizeof(float) * 2 * n);
    uint16_t *q = malloc(sizeof(uint16_t) * (n ? n : 1));
    int rc = !d || !q ? cs_fail("out of host memory (%dx%d depths)", W, H) : cs_render_read_depth(r, W, H, d);
    static const char *const names[2] = {"mean", "median"};
    for (int k = 0; k < 2 && !rc; k++) {
        for (size_t i = 0; i < n; i++) {
            double c = floor(d[k * n + i] / scale + 0.5);
            q[i] = (uint16_t)(c > 65535 ? 65535 : c > 0 ? c : 0);
        }
        char dp[1500];
        snprintf(dp, sizeof dp, "%.*s_depth_%s.png", (int)strlen(p) - 4, p, names[k]);
        rc = cs_image_save_png16(dp, W, H, q);
    }
    free(d), free(q);
    return rc;
}

/* camera CAM's render, drawn under its exposure when EX is set (render_one) */
static int render_view(cs_viewer *w, const cs_scene *scene, int cam, int degree, cs_exposure *ex)
{
    const cs_camera *c = &scene->cams[cam];
    cs_view v;
    cs_view_from_camera(c, &v);
    return cs_render_forward_sync(&w->r, &w->m, &v, degree, scene->background) ||
                   (ex && (cs_exposure_select_camera(ex, cam) || cs_exposure_apply(ex, &w->r.img, c->width, c->height)))
               ? -1
               : 0;
}

static int render_one(cs_viewer *w, const cs_scene *scene, int cam, int degree, cs_exposure *ex, const char *out_dir,
                      const char *gt_dir, int mirror, double depth_scale)
{
    const cs_camera *c = &scene->cams[cam];
    char stem[256], p[1400];
    cs_camera_stem(c, stem, sizeof stem);
    if (mirror) {
        char folder[256];
        parent_folder(c->path, folder, sizeof folder);
        snprintf(p, sizeof p, "%s/%s", out_dir, folder);
        if (cs_mkdirs(p)) return -1;
        snprintf(p, sizeof p, "%s/%s/%s.png", out_dir, folder, stem);
    } else {
        snprintf(p, sizeof p, "%s/%s.png", out_dir, stem);
    }
    if (render_view(w, scene, cam, degree, ex) || cs_render_save_png(&w->r, c->width, c->height, p) ||
        (depth_scale > 0 && save_depths(&w->r, c->width, c->height, p, depth_scale)))
        return -1;
    return gt_dir ? save_gt(scene, c, gt_dir) : 0;
}

/* the model's exposure.json at PATH (NULL: none) on W's device for SCENE's training views into EX
   (said); *ON 1 when it is open */
static int render_exposure(cs_viewer *w, cs_cl *cl, const cs_scene *scene, const char *path, cs_split *sp,
                           cs_exposure *ex, int *on)
{
    *on = 0;
    if (!path) return 0;
    if (cs_split_of(scene, sp)) return -1;
    if (!sp->n_train) {
        printf("note: %s is not used: the dataset has no training views to take the transforms from\n", path);
        return 0;
    }
    int found;
    if (cs_exposure_open(ex, cl, &w->k, scene, sp->train, sp->n_train) || cs_exposure_load(ex, path, &found)) return -1;
    *on = 1;
    printf("render: each view under the model's per-view exposure (%d of %d training views' transforms from %s; a "
           "held-out view under the blend of its %d nearest; --no-exposure: at the identity)\n",
           found, sp->n_train, path, CS_EXPOSURE_NEAREST);
    return 0;
}

int cs_render_model_views(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const char *split,
                          const char *out_dir, const char *gt_dir, int depth_maps, const char *exposure, int *count)
{
    *count = 0;
    if (strcmp(split, "train") && strcmp(split, "test") && strcmp(split, "all"))
        return cs_fail("unknown split '%s' (train, test or all)", split);
    int n = 0;
    for (int i = 0; i < scene->n_cams; i++) n += in_split(&scene->cams[i], split);
    if (!n)
        return cs_fail("the dataset has no %s views%s", split,
                       !strcmp(split, "test") ? " (train with data.eval, or render --split train)" : "");
    cs_viewer w;
    if (cs_mkdirs(out_dir) || (gt_dir && cs_mkdirs(gt_dir)) || cs_viewer_open(&w, cl, cfg, s, scene, CS_PROGS_EVAL)) return -1;
    w.r.want_depth = depth_maps;
    cs_split sp = {0};
    cs_exposure ex = {0};
    int mirror = needs_mirror(scene, split), exposed = 0, rc = render_exposure(&w, cl, scene, exposure, &sp, &ex, &exposed);
    /* depth maps: 65535 counts span cs_scene_far_depth (a scale for every view alike) */
    double far = cs_scene_far_depth(scene), scale = depth_maps ? (far > 0 ? far : 1.0) / 65535.0 : 0;
    for (int i = 0; i < scene->n_cams && !rc; i++) {
        if (!in_split(&scene->cams[i], split)) continue;
        rc = render_one(&w, scene, i, s->sh_degree, exposed ? &ex : NULL, out_dir, mirror ? NULL : gt_dir, mirror, scale);
        if (!rc) (*count)++;
    }
    cs_exposure_free(&ex);
    cs_split_free(&sp);
    cs_viewer_close(&w, cl);
    if (!rc && depth_maps) {
        char p[1200];
        json_t *j = json_pack("{s:f, s:s}", "scale", scale, "meaning",
                              "depth = count * scale (camera z, scene units); 0: no surface; *_depth_mean.png: expected "
                              "depth, *_depth_median.png: where transmittance falls below 0.5");
        rc = !j || cs_path_join(p, sizeof p, out_dir, "depth_scale.json") || cs_write_json(p, j) ? -1 : 0;
        json_decref(j);
    }
    return rc;
}

/* orbit contact sheet: this many frames, 4 a row, each shrunk to at most this wide */
#define ORBIT_SHEET_FRAMES 8
#define ORBIT_SHEET_WIDTH 320

int cs_render_orbit(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, int n,
                    const char *out_dir)
{
    cs_camera *cams = calloc((size_t)n, sizeof *cams);
    if (!cams) return cs_fail("out of host memory (%d orbit cameras)", n);
    cs_viewer w;
    if (cs_orbit_cameras(scene, n, cams) || cs_mkdirs(out_dir) || cs_viewer_open(&w, cl, cfg, s, scene, CS_PROGS_EVAL)) {
        free(cams);
        return -1;
    }
    int k = n < ORBIT_SHEET_FRAMES ? n : ORBIT_SHEET_FRAMES, got = 0, rc = 0;
    cs_image frames[ORBIT_SHEET_FRAMES], sheet = {0};
    char p[1400], stem[256];
    for (int i = 0; i < n && !rc; i++) { /* each frame saved, and the sheet's frames kept shrunk */
        cs_view v;
        cs_image img = {0};
        cs_view_from_camera(&cams[i], &v);
        cs_camera_stem(&cams[i], stem, sizeof stem);
        snprintf(p, sizeof p, "%s/%s.png", out_dir, stem);
        rc = cs_render_forward_sync(&w.r, &w.m, &v, s->sh_degree, scene->background) ||
             cs_render_read_image(&w.r, cams[i].width, cams[i].height, &img) || cs_image_save_png(p, &img);
        if (!rc && got < k && i == (long)got * n / k) {
            rc = cs_image_shrink_to(&img, ORBIT_SHEET_WIDTH, INT_MAX);
            frames[got++] = img, img.px = NULL;
        }
        cs_image_free(&img);
    }
    cs_viewer_close(&w, cl);
    snprintf(p, sizeof p, "%s/contact_sheet.png", out_dir);
    if (!rc) rc = cs_image_tile(frames, got, 4, &sheet) || cs_image_save_png(p, &sheet) ? -1 : 0;
    for (int i = 0; i < got; i++) cs_image_free(&frames[i]);
    cs_image_free(&sheet);
    free(cams);
    return rc;
}
