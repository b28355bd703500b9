/* mesh_eval: PSNR of a mesh's drawings against the photos. */
#include "mesh_eval.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mesh_raster.h"
#include "scene.h"
#include "util.h"

typedef struct {
    const cs_mesh *m;
    const cs_scene *scene;
    const cs_mesh_exposure *exposure;
    int samples; /* a side of each pixel (mesh_raster.h) */
    const char *renders;
    const int *views;
    int n, next, failed;
    double *psnr, *covered;
    long *px; /* per view: object pixels, those undrawn, other pixels, those drawn */
    char err[4096];
    pthread_mutex_t mu;
} job;

/* PSNR of drawing D against photo G (RGB, or RGB and a weight) */
static double psnr_of(const cs_image *d, const cs_image *g)
{
    double se = 0, w = 0;
    size_t n = (size_t)d->width * d->height;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *a = d->px + 3 * i, *b = g->px + (size_t)g->channels * i;
        double wi = g->channels == 4 ? b[3] / 255.0 : 1.0;
        for (int ch = 0; ch < 3; ch++) se += wi * ((double)a[ch] - b[ch]) * ((double)a[ch] - b[ch]);
        w += 3 * wi;
    }
    double mse = w > 0 ? se / w / (255.0 * 255.0) : 0;
    return cs_psnr(mse);
}

/* the drawn pixels DRAWN of camera C against its photo's alpha, when it has one: PX += object
   pixels, those undrawn, the other pixels, those drawn */
static int alpha_counts(const cs_camera *c, const uint8_t *drawn, long px[4])
{
    uint8_t *a;
    if (cs_scene_read_alpha(c, &a)) return -1;
    size_t n = (size_t)c->width * c->height;
    for (size_t p = 0; a && p < n; p++) {
        int obj = a[p] >= 128;
        px[obj ? 0 : 2]++, px[obj ? 1 : 3] += obj ? !drawn[p] : drawn[p];
    }
    free(a);
    return 0;
}

/* view I of J: drawn, compared with its photo, written */
static int one_view(job *j, int i)
{
    const cs_camera *c = &j->scene->cams[j->views[i]];
    cs_image d = {0}, g = {0};
    uint8_t *drawn = malloc((size_t)c->width * c->height);
    int rc = !drawn || cs_mesh_rasterize(j->m, c, j->scene->background, j->samples, &d, &j->covered[i], drawn) ||
                     cs_scene_read_image(j->scene, c, &g)
                 ? -1
                 : 0;
    if (!rc && (g.width != d.width || g.height != d.height))
        rc = cs_fail("the photo is %dx%d, the view %dx%d", g.width, g.height, d.width, d.height);
    if (!rc) rc = alpha_counts(c, drawn, j->px + 4 * i);
    free(drawn);
    if (!rc && j->exposure) cs_mesh_exposure_apply(j->exposure, j->scene, j->views[i], &d);
    if (!rc) j->psnr[i] = psnr_of(&d, &g);
    if (!rc && j->renders) {
        char stem[256], p[1400];
        cs_camera_stem(c, stem, sizeof stem);
        snprintf(p, sizeof p, "%s/%s.png", j->renders, stem);
        rc = cs_image_save_png(p, &d);
    }
    cs_image_free(&d);
    cs_image_free(&g);
    return rc ? cs_fail_prefix("view %s", c->name) : 0;
}

static void *worker(void *arg)
{
    job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->mu);
        int i = j->failed ? j->n : j->next++;
        pthread_mutex_unlock(&j->mu);
        if (i >= j->n) return NULL;
        if (one_view(j, i)) {
            pthread_mutex_lock(&j->mu);
            if (!j->failed) snprintf(j->err, sizeof j->err, "%s", cs_last_error());
            j->failed = 1;
            pthread_mutex_unlock(&j->mu);
        }
    }
}

/* the views to compare: the test views, or every 8th training view */
static int pick_views(const cs_scene *scene, int *views, const char **split)
{
    int n = 0, train = 0;
    for (int i = 0; i < scene->n_cams; i++)
        if (scene->cams[i].is_test) views[n++] = i;
    *split = "test";
    if (n) return n;
    *split = "train";
    for (int i = 0; i < scene->n_cams; i++)
        if (!scene->cams[i].is_test && train++ % 8 == 0) views[n++] = i;
    return n;
}

/* runs J on up to one thread a core */
static int run_threads(job *j)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nt = cores < 1 ? 1 : cores > 64 ? 64 : (int)cores;
    if (nt > j->n) nt = j->n;
    pthread_t th[64];
    int started = 0;
    for (; started < nt; started++)
        if (pthread_create(&th[started], NULL, worker, j)) break;
    if (started == 0) worker(j);
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    return j->failed ? cs_fail("%s", j->err) : 0;
}

/* R's figures from J's views */
static void summarise(const job *j, const cs_scene *scene, cs_mesh_eval_result *r)
{
    r->views = j->n, r->psnr_min = INFINITY;
    for (int i = 0; i < j->n; i++) {
        if (j->renders) /* beside the drawings, each view's figures */
            printf("mesh: %s: PSNR %.2f dB, %.1f%% covered\n", scene->cams[j->views[i]].name, j->psnr[i],
                   100 * j->covered[i]);
        r->psnr += j->psnr[i] / j->n, r->coverage += j->covered[i] / j->n;
        if (j->psnr[i] < r->psnr_min) {
            r->psnr_min = j->psnr[i];
            snprintf(r->worst, sizeof r->worst, "%s", scene->cams[j->views[i]].name);
        }
    }
    long t[4] = {0, 0, 0, 0};
    for (int i = 0; i < j->n; i++)
        for (int k = 0; k < 4; k++) t[k] += j->px[4 * i + k];
    int alpha = t[0] > 0 && t[2] > 0; /* photos without alpha are all object */
    r->object_missed = alpha ? (double)t[1] / t[0] : -1, r->background_drawn = alpha ? (double)t[3] / t[2] : -1;
    r->object_share = alpha ? (double)t[0] / (t[0] + t[2]) : -1;
}

/* M judged at the N cameras VIEWS, drawings into RENDERS (NULL: none) */
static int eval_list(const cs_mesh *m, const cs_scene *scene, const cs_mesh_exposure *exposure, int samples,
                     const char *renders, const int *views, int n, cs_mesh_eval_result *r)
{
    double t0 = cs_now();
    if (renders && cs_mkdirs(renders)) return -1;
    job j = {.m = m, .scene = scene, .exposure = exposure, .samples = samples > 1 ? samples : 1, .renders = renders,
             .views = views, .n = n};
    j.psnr = calloc(n ? n : 1, sizeof(double));
    j.covered = calloc(n ? n : 1, sizeof(double));
    j.px = calloc(4 * (size_t)(n ? n : 1), sizeof(long));
    int rc = !j.psnr || !j.covered || !j.px ? cs_fail("out of host memory") : 0;
    pthread_mutex_init(&j.mu, NULL);
    if (!rc) rc = j.n ? run_threads(&j) : cs_fail("the dataset has no views to compare the mesh with");
    pthread_mutex_destroy(&j.mu);
    if (!rc) summarise(&j, scene, r);
    free(j.psnr), free(j.covered), free(j.px);
    r->secs = cs_now() - t0;
    return rc;
}

int cs_mesh_eval_views(const cs_mesh *m, const cs_scene *scene, const cs_mesh_exposure *exposure, int samples,
                       const int *views, int n, const char *split, cs_mesh_eval_result *r)
{
    memset(r, 0, sizeof *r);
    r->split = split;
    return eval_list(m, scene, exposure, samples, NULL, views, n, r);
}

int cs_mesh_eval(const cs_mesh *m, const cs_scene *scene, const cs_mesh_exposure *exposure, int samples,
                 const char *renders, cs_mesh_eval_result *r)
{
    memset(r, 0, sizeof *r);
    int *views = malloc(sizeof(int) * (scene->n_cams ? scene->n_cams : 1));
    if (!views) return cs_fail("out of host memory");
    int n = pick_views(scene, views, &r->split);
    int rc = eval_list(m, scene, exposure, samples, renders, views, n, r);
    free(views);
    return rc;
}
