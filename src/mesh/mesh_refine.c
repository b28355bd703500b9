/* mesh_refine: vertex colours fitted to the photos (mesh_refine.h). */
#include "mesh_refine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_device.h"
#include "mesh_raster.h"
#include "mesh_texture.h"
#include "mesh_texture_dev.h"
#include "scene.h"
#include "util.h"

double cs_mesh_refine_lr(double lr, int it, int n)
{
    return n > 0 ? lr * pow(CS_MESH_LR_DECAY, (double)it / n) : lr;
}

/* the weight of pixel I of PHOTO in the loss: 0 where no triangle is drawn or the photo's
   weight channel leaves it out */
static double pixel_weight(const cs_image *photo, const int32_t *tri, size_t i)
{
    if (tri[i] < 0) return 0;
    return photo->channels == 4 ? photo->px[4 * i + 3] / 255.0 : 1.0;
}

double cs_mesh_color_loss(const cs_mesh *m, const float *col, const cs_image *photo, const int32_t *tri, const float *w,
                          float *grad, double *count)
{
    size_t n = (size_t)photo->width * photo->height;
    double sum = 0, cnt = 0;
    for (size_t i = 0; i < n; i++) cnt += pixel_weight(photo, tri, i); /* first: the mean's count */
    if (count) *count = cnt;
    if (cnt <= 0) return 0;
    for (size_t i = 0; i < n; i++) {
        double wt = pixel_weight(photo, tri, i);
        if (wt <= 0) continue;
        const uint8_t *g = photo->px + (size_t)photo->channels * i;
        const uint32_t *v = m->tri + 3 * (size_t)tri[i];
        for (int ch = 0; ch < 3; ch++) {
            float c = w[3 * i] * col[3 * v[0] + ch] + w[3 * i + 1] * col[3 * v[1] + ch] + w[3 * i + 2] * col[3 * v[2] + ch];
            double r = c - g[ch] / 255.0;
            sum += wt * fabs(r);
            if (!grad) continue;
            double d = wt * (r > 0 ? 1.0 : r < 0 ? -1.0 : 0.0) / (3 * cnt);
            for (int k = 0; k < 3; k++) grad[3 * v[k] + ch] += (float)(d * w[3 * i + k]);
        }
    }
    return sum / (3 * cnt);
}

typedef struct {
    float *col, *grad, *m1, *m2; /* nv x 3 each */
    int32_t *tri;
    float *w;
    cs_image *photos; /* decoded on first use, kept */
    int *views, n_views; /* scene cameras, or -1 - k for pseudo-view k */
    const cs_mesh_pseudo *pseudo;
    size_t max_px; /* the largest training view */
} refine_state;

static void state_free(refine_state *r)
{
    free(r->col), free(r->grad), free(r->m1), free(r->m2), free(r->tri), free(r->w);
    for (int i = 0; r->photos && i < r->n_views; i++) cs_image_free(&r->photos[i]);
    free(r->photos), free(r->views);
}

/* the training views (less those HELD_OUT marks; NULL: none) and PSEUDO's (NULL: none) in a
   shuffled order (SEED), the colours as floats, the scratch */
static int state_open(refine_state *r, const cs_mesh *m, const cs_scene *scene, const cs_mesh_pseudo *pseudo,
                      const uint8_t *held_out, unsigned seed)
{
    memset(r, 0, sizeof *r);
    int maxpx = 0, np = pseudo ? pseudo->n : 0;
    r->pseudo = pseudo;
    r->views = malloc(sizeof(int) * (size_t)(scene->n_cams + np + 1));
    if (!r->views) return cs_fail("out of host memory");
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test || (held_out && held_out[i])) continue;
        r->views[r->n_views++] = i;
        int px = scene->cams[i].width * scene->cams[i].height;
        maxpx = px > maxpx ? px : maxpx;
    }
    if (!r->n_views) return cs_fail("the refinement needs training views%s", held_out ? " besides those held out" : "");
    for (int k = 0; k < np; k++) {
        r->views[r->n_views++] = -1 - k;
        int px = pseudo->cams[k].width * pseudo->cams[k].height;
        maxpx = px > maxpx ? px : maxpx;
    }
    r->max_px = (size_t)maxpx;
    for (int i = r->n_views - 1; i > 0; i--) { /* Fisher-Yates from a hash of the seed */
        int j = (int)(cs_hash_u32(seed * 2654435761u + (unsigned)i) % (unsigned)(i + 1)), t = r->views[i];
        r->views[i] = r->views[j], r->views[j] = t;
    }
    size_t n3 = 3 * (m->nv ? m->nv : 1);
    r->col = malloc(sizeof(float) * n3), r->grad = calloc(n3, sizeof(float));
    r->m1 = calloc(n3, sizeof(float)), r->m2 = calloc(n3, sizeof(float));
    r->tri = malloc(sizeof(int32_t) * (size_t)maxpx), r->w = malloc(sizeof(float) * 3 * (size_t)maxpx);
    r->photos = calloc((size_t)r->n_views, sizeof(cs_image));
    if (!r->col || !r->grad || !r->m1 || !r->m2 || !r->tri || !r->w || !r->photos)
        return cs_fail("out of host memory (refining %zu vertices)", m->nv);
    for (size_t i = 0; i < 3 * m->nv; i++) r->col[i] = m->rgb[i] / 255.f;
    return 0;
}

/* Adam on the colours (graphdeco's betas), kept in [0, 1]; the gradient is cleared */
static void adam_step(refine_state *r, size_t n, double lr, int step)
{
    const double b1 = 0.9, b2 = 0.999, eps = 1e-15;
    double c1 = 1 - pow(b1, step), c2 = 1 - pow(b2, step);
    for (size_t i = 0; i < n; i++) {
        float g = r->grad[i];
        r->m1[i] = (float)(b1 * r->m1[i] + (1 - b1) * g);
        r->m2[i] = (float)(b2 * r->m2[i] + (1 - b2) * g * g);
        double x = r->col[i] - lr * (r->m1[i] / c1) / (sqrt(r->m2[i] / c2) + eps);
        r->col[i] = (float)(x < 0 ? 0 : x > 1 ? 1 : x);
        r->grad[i] = 0;
    }
}

/* one iteration on the host: the view's buffer, the loss and its gradient, the step */
static int host_step(refine_state *r, const cs_mesh *m, const cs_camera *c, const cs_image *photo, double lr, int step,
                     double *loss)
{
    if (cs_mesh_visibility(m, c, 0, r->tri, r->w)) return -1;
    *loss = cs_mesh_color_loss(m, r->col, photo, r->tri, r->w, r->grad, NULL);
    adam_step(r, 3 * m->nv, lr, step);
    return 0;
}

/* on the device, with the training loss ((1 - DSSIM) L1 + DSSIM D-SSIM over the drawn image) */
static int device_step(cs_mesh_dev *d, const cs_camera *c, const cs_image *photo, const cs_mesh_refine_opts *o, double lr,
                       int step, double *loss)
{
    return cs_mesh_dev_visibility(d, c) || cs_mesh_dev_color_grad(d, photo, (float)o->dssim, loss, NULL) ||
                   cs_mesh_dev_color_adam(d, 1.0, lr, step)
               ? -1
               : 0;
}

/* every launch of the refinement timed from here (a profiling queue, clsplat mesh --profile) */
static int profile_open(cs_cl *cl, cs_prof_saved *saved)
{
    if (cs_cl_profile_begin(cl, saved)) return -1;
    cl->prof.n_kernels = 0;
    return 0;
}

/* ... and at its end each kernel's time a view over the VIEWS drawn, the slowest first */
static int profile_close(cs_cl *cl, cs_prof_saved *saved, int views, int rc)
{
    if (!rc) rc = cs_prof_collect(cl);
    if (!rc && views > 0 &&
        cs_prof_print_kernels(cl, views, "mesh: the refinement's kernels (ms and launches a view, slowest first):") <
            1e-3) /* under a microsecond a view: no real times */
        printf("mesh: (the device's profiling events report no kernel times, as Mesa 22.3's rusticl)\n");
    return cs_cl_profile_end(cl, saved) || rc ? -1 : 0;
}

/* a progress line after iteration IT + 1 of TOTAL, the colour stage's first COLOURS */
static void progress_line(int it, int total, int colours, double loss, double t0)
{
    printf("mesh: refined over %d of %d views (%s), loss %.5f, %.1f s\n", it + 1, total,
           it < colours ? "colours" : "colours and positions", loss, cs_now() - t0);
    fflush(stdout);
}

/* view IT of the refinement (in its shuffled order), its photo decoded on first use */
static int view_photo(refine_state *r, const cs_scene *scene, int it, const cs_camera **c, const cs_image **photo)
{
    int k = it % r->n_views;
    if (r->views[k] < 0) { /* drawn by the splat model beforehand */
        *c = &r->pseudo->cams[-1 - r->views[k]];
        *photo = &r->pseudo->imgs[-1 - r->views[k]];
        return 0;
    }
    *c = &scene->cams[r->views[k]];
    if (!r->photos[k].px && cs_scene_read_image(scene, *c, &r->photos[k]))
        return cs_fail_prefix("refinement, view %s", (*c)->name);
    *photo = &r->photos[k];
    return 0;
}

/* the views' exposures in the refinement: the model's (O->exposure), learned from them or from
   the identity with O->exposure_lr */
typedef struct {
    cs_exposure ex;
    cs_split own; /* the training views, when no file gave them */
    int on;       /* the loss takes each training view's exposure */
    double lr;    /* > 0: they are learned too */
} refine_exposure;

static int rexp_open(refine_exposure *q, cs_mesh_dev *d, const cs_scene *scene, const cs_mesh_refine_opts *o)
{
    memset(q, 0, sizeof *q);
    q->lr = o->exposure_lr;
    if (!o->exposure && !(q->lr > 0)) return 0;
    const cs_split *sp = o->exposure ? &o->exposure->split : &q->own;
    if ((!o->exposure && cs_split_of(scene, &q->own)) ||
        cs_exposure_open(&q->ex, d->cl, &d->k, scene, sp->train, sp->n_train) ||
        (o->exposure && cs_exposure_write(&q->ex, o->exposure->rows)))
        return -1;
    q->on = 1;
    return 0;
}

/* the loss of view IT (in the shuffled order) under its exposure: a training view's transform, a
   pseudo-view (the model's drawing) at the identity */
static int view_exposure(const refine_state *r, cs_mesh_dev *d, refine_exposure *q, int it)
{
    int cam = r->views[it % r->n_views];
    d->loss.exposure = q->on && cam >= 0 ? &q->ex : NULL;
    return d->loss.exposure ? cs_exposure_select_camera(&q->ex, cam) : 0;
}

/* after view IT's backward, of TOTAL: its exposure's Adam step when they are learned (the step
   falling to a tenth over the views) */
static int rexp_step(refine_exposure *q, const refine_state *r, int it, int total)
{
    if (!q->on || !(q->lr > 0) || r->views[it % r->n_views] < 0) return 0;
    return cs_exposure_step(&q->ex, cs_mesh_refine_lr(q->lr, it, total));
}

/* the rows learned into OUT (the caller frees it) */
static int rexp_out(refine_exposure *q, const cs_scene *scene, cs_mesh_exposure *out)
{
    memset(out, 0, sizeof *out);
    if (cs_split_of(scene, &out->split)) return -1;
    out->found = out->split.n_train;
    out->rows = malloc(sizeof(float) * CS_EXPOSURE_W * (size_t)(out->found > 0 ? out->found : 1));
    int rc = !out->rows ? cs_fail("out of host memory (exposure rows)") : cs_exposure_read(&q->ex, out->rows) ? -1 : 0;
    if (rc) cs_mesh_exposure_free(out);
    return rc;
}

static void rexp_close(refine_exposure *q, cs_mesh_dev *d)
{
    d->loss.exposure = NULL;
    cs_exposure_free(&q->ex);
    cs_split_free(&q->own);
}

/* the texture stage: M's texture made from its refined vertex colours and fitted over
   O->texture_views views from view FROM on (the geometry as the device holds it); DRAWN counts
   the profiled views */
static int texture_stage(cs_mesh_dev *d, cs_mesh *m, const cs_scene *scene, refine_state *r, refine_exposure *ex,
                         const cs_mesh_refine_opts *o, int from, int progress, cs_mesh_refine_stats *st, int *drawn)
{
    double t0 = cs_now(), first = 0, last = 0;
    int n = o->texture_views, tenth = n / 10 > 0 ? n / 10 : 1, nf = 0, nl = 0;
    if (cs_mesh_tex_from_vertices(m, o->texture) || cs_mesh_dev_tex_open(d, m)) return -1;
    if (progress)
        printf("mesh: fitting the texture (%d colours a triangle) over %d views...\n", CS_TEX_NODES(o->texture), n),
            fflush(stdout);
    for (int it = 0; it < n; it++) {
        const cs_camera *c;
        const cs_image *photo;
        double loss = 0;
        if (view_photo(r, scene, from + it, &c, &photo) || view_exposure(r, d, ex, from + it) ||
            cs_mesh_dev_visibility(d, c) ||
            cs_mesh_dev_tex_grad(d, photo, (float)o->dssim, &loss) ||
            cs_mesh_dev_tex_adam(d, cs_mesh_refine_lr(o->lr, it, n), it + 1) ||
            (o->profile && cs_prof_collect(d->cl)))
            return -1;
        *drawn += o->profile != 0;
        if (it < tenth) first += loss, nf++;
        if (it >= n - tenth) last += loss, nl++;
        if (progress && (it + 1) % tenth == 0)
            printf("mesh: texture over %d of %d views, loss %.5f, %.1f s\n", it + 1, n, loss, cs_now() - t0), fflush(stdout);
    }
    size_t nf3 = 3 * (size_t)CS_TEX_NODES(o->texture) * m->nt;
    float *f = malloc(sizeof(float) * (nf3 ? nf3 : 1));
    if (!f) return cs_fail("out of host memory (a texture of %zu values)", nf3);
    int rc = cs_mesh_dev_tex_read(d, f, NULL);
    for (size_t i = 0; !rc && i < nf3; i++) m->tex[i] = (uint8_t)(f[i] * 255.f + 0.5f);
    free(f);
    st->tex_first = nf ? first / nf : 0, st->tex_last = nl ? last / nl : 0, st->tex_seconds = cs_now() - t0;
    return rc;
}

int cs_mesh_refine_colors(cs_mesh *m, const cs_scene *scene, cs_cl *cl, const cs_mesh_refine_opts *o, int progress,
                          cs_mesh_refine_stats *st)
{
    memset(st, 0, sizeof *st);
    if ((o->geometry > 0 || o->texture > 0 || o->exposure || o->exposure_lr > 0 || o->samples > 1) && !cl)
        return cs_fail("the geometry and texture stages, the exposures and the samples of the refinement run on a "
                       "device only");
    double t0 = cs_now(), first = 0, last = 0;
    int total = o->iterations + (o->geometry > 0 ? o->geometry : 0);
    int tenth = total / 10 > 0 ? total / 10 : 1, nf = 0, nl = 0;
    refine_state r;
    cs_mesh_dev d;
    refine_exposure ex = {0};
    int rc = state_open(&r, m, scene, o->pseudo, o->held_out, o->seed), on_device = 0;
    if (!rc && cl) rc = cs_mesh_dev_open(&d, cl, m, r.max_px, o->samples > 1 ? o->samples : 1,
                                                  scene->background), on_device = !rc;
    if (!rc && on_device) rc = rexp_open(&ex, &d, scene, o);
    if (!rc && on_device && o->geometry > 0) rc = cs_mesh_dev_geom_open(&d, m, o->nmove);
    cs_prof_saved saved = {NULL, 0};
    int profiling = 0, drawn = 0;
    if (!rc && on_device && o->profile) rc = profile_open(cl, &saved), profiling = !rc;
    for (int it = 0; !rc && it < total; it++) {
        const cs_camera *c;
        const cs_image *photo;
        if ((rc = view_photo(&r, scene, it, &c, &photo)) != 0 || (on_device && (rc = view_exposure(&r, &d, &ex, it))))
            break;
        double loss = 0, clr = cs_mesh_refine_lr(o->lr, it, total);
        if (it < o->iterations)
            rc = on_device ? device_step(&d, c, photo, o, clr, it + 1, &loss)
                           : host_step(&r, m, c, photo, clr, it + 1, &loss);
        else { /* positions and colours; the positions' step decays to a tenth */
            cs_mesh_geom_opts g = o->geom;
            int gs = it - o->iterations;
            g.lr = cs_mesh_refine_lr(g.lr, gs, o->geometry);
            rc = cs_mesh_dev_visibility(&d, c) ||
                         cs_mesh_dev_geom_step(&d, c, photo, (float)o->dssim, &g, gs + 1, &loss) ||
                         cs_mesh_dev_color_adam(&d, 1.0, clr, it + 1)
                     ? -1
                     : 0;
        }
        if (!rc && on_device) rc = rexp_step(&ex, &r, it, total);
        if (!rc && profiling && (rc = cs_prof_collect(cl)) == 0) drawn++; /* each view: under 4096 events */
        if (it < tenth) first += loss, nf++;
        if (it >= total - tenth) last += loss, nl++;
        if (!rc && progress && (it + 1) % tenth == 0) progress_line(it, total, o->iterations, loss, t0);
    }
    if (!rc && on_device) rc = cs_mesh_dev_read_colors(&d, r.col, NULL);
    if (!rc && on_device && o->geometry > 0) rc = cs_mesh_dev_read_positions(&d, m->pos);
    if (!rc)
        for (size_t i = 0; i < 3 * m->nv; i++) m->rgb[i] = (uint8_t)(r.col[i] * 255.f + 0.5f);
    if (!rc && on_device && o->texture > 0) rc = texture_stage(&d, m, scene, &r, &ex, o, total, progress, st, &drawn);
    if (!rc && on_device && o->exposure_lr > 0 && o->learned) rc = rexp_out(&ex, scene, o->learned);
    if (profiling) rc = profile_close(cl, &saved, drawn, rc);
    if (on_device) rexp_close(&ex, &d), cs_mesh_dev_close(&d);
    st->l1_first = nf ? first / nf : 0, st->l1_last = nl ? last / nl : 0;
    st->views = r.n_views, st->seconds = cs_now() - t0;
    state_free(&r);
    return rc;
}
