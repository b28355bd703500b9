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
    const char *renders;
    const int *views;
    int n, next, failed;
    double *psnr, *covered;
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

/* view I of J: drawn, compared with its photo, written */
static int one_view(job *j, int i)
{
    const cs_camera *c = &j->scene->cams[j->views[i]];
    cs_image d = {0}, g = {0};
    int rc = cs_mesh_rasterize(j->m, c, j->scene->background, &d, &j->covered[i]) || cs_scene_read_image(j->scene, c, &g)
                 ? -1
                 : 0;
    if (!rc && (g.width != d.width || g.height != d.height))
        rc = cs_fail("the photo is %dx%d, the view %dx%d", g.width, g.height, d.width, d.height);
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

int cs_mesh_eval(const cs_mesh *m, const cs_scene *scene, const char *renders, cs_mesh_eval_result *r)
{
    memset(r, 0, sizeof *r);
    double t0 = cs_now();
    if (renders && cs_mkdirs(renders)) return -1;
    job j = {.m = m, .scene = scene, .renders = renders};
    int *views = malloc(sizeof(int) * (scene->n_cams ? scene->n_cams : 1));
    j.psnr = calloc(scene->n_cams ? scene->n_cams : 1, sizeof(double));
    j.covered = calloc(scene->n_cams ? scene->n_cams : 1, sizeof(double));
    if (!views || !j.psnr || !j.covered) {
        free(views), free(j.psnr), free(j.covered);
        return cs_fail("out of host memory");
    }
    j.views = views;
    j.n = pick_views(scene, views, &r->split);
    pthread_mutex_init(&j.mu, NULL);
    int rc = j.n ? run_threads(&j) : cs_fail("the dataset has no views to compare the mesh with");
    pthread_mutex_destroy(&j.mu);
    if (!rc) {
        r->views = j.n, r->psnr_min = INFINITY;
        for (int i = 0; i < j.n; i++)
            r->psnr += j.psnr[i] / j.n, r->coverage += j.covered[i] / j.n, r->psnr_min = fmin(r->psnr_min, j.psnr[i]);
    }
    free(views), free(j.psnr), free(j.covered);
    r->secs = cs_now() - t0;
    return rc;
}
