/* decode_ahead: a pool of decoding threads (see decode_ahead.h). */
#include "decode_ahead.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

enum { IDLE, QUEUED, DECODING, READY, FAILED };

struct cs_decode_ahead {
    const cs_scene *scene;
    const int *train;
    int n_train, depth;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    unsigned char *state; /* per view */
    cs_image *img;        /* per view: READY pixels */
    char **err;           /* per view: FAILED message */
    int *queue, q_head, q_len; /* ring of DEPTH queued views, oldest first */
    int held;             /* views QUEUED, DECODING, READY or FAILED */
    int stop, ahead, late;
    pthread_t *threads;
    int n_threads;
};

int cs_decode_threads(int requested)
{
    if (requested > 0) return requested;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cores > 1 ? (int)cores - 1 : 1;
    return n > 8 ? 8 : n;
}

static void *worker(void *arg)
{
    cs_decode_ahead *d = arg;
    pthread_mutex_lock(&d->mu);
    for (;;) {
        while (!d->stop && d->q_len == 0) pthread_cond_wait(&d->work, &d->mu);
        if (d->stop) break;
        int vi = d->queue[d->q_head];
        d->q_head = (d->q_head + 1) % d->depth, d->q_len--;
        d->state[vi] = DECODING;
        pthread_mutex_unlock(&d->mu);
        cs_image img;
        int r = cs_scene_read_image(d->scene, &d->scene->cams[d->train[vi]], &img);
        char *msg = r ? strdup(cs_last_error()) : NULL;
        pthread_mutex_lock(&d->mu);
        if (r) {
            d->state[vi] = FAILED, d->err[vi] = msg;
        } else {
            d->state[vi] = READY, d->img[vi] = img;
        }
        pthread_cond_broadcast(&d->done);
    }
    pthread_mutex_unlock(&d->mu);
    return NULL;
}

cs_decode_ahead *cs_decode_ahead_open(const cs_scene *scene, const int *train, int n_train, int threads, int depth)
{
    cs_decode_ahead *d = calloc(1, sizeof *d);
    if (!d) return cs_fail("out of host memory for the image decoders"), NULL;
    d->scene = scene, d->train = train, d->n_train = n_train, d->depth = depth < 1 ? 1 : depth;
    d->state = calloc(n_train ? n_train : 1, 1);
    d->img = calloc(n_train ? n_train : 1, sizeof *d->img);
    d->err = calloc(n_train ? n_train : 1, sizeof *d->err);
    d->queue = calloc(d->depth, sizeof *d->queue);
    d->threads = calloc(threads > 0 ? threads : 1, sizeof *d->threads);
    if (!d->state || !d->img || !d->err || !d->queue || !d->threads ||
        pthread_mutex_init(&d->mu, NULL) || pthread_cond_init(&d->work, NULL) || pthread_cond_init(&d->done, NULL)) {
        free(d->state), free(d->img), free(d->err), free(d->queue), free(d->threads), free(d);
        return cs_fail("out of host memory for the image decoders"), NULL;
    }
    for (; d->n_threads < threads; d->n_threads++)
        if (pthread_create(&d->threads[d->n_threads], NULL, worker, d)) {
            cs_decode_ahead_close(d);
            return cs_fail("cannot start image decoding thread %d of %d", d->n_threads + 1, threads), NULL;
        }
    return d;
}

int cs_decode_ahead_want(cs_decode_ahead *d, int vi)
{
    pthread_mutex_lock(&d->mu);
    int queued = vi >= 0 && vi < d->n_train && d->state[vi] == IDLE && d->held < d->depth;
    if (queued) {
        d->queue[(d->q_head + d->q_len) % d->depth] = vi;
        d->q_len++, d->held++;
        d->state[vi] = QUEUED;
        pthread_cond_signal(&d->work);
    }
    pthread_mutex_unlock(&d->mu);
    return queued;
}

/* Removes queued view VI from the ring (the caller holds the lock). */
static void unqueue(cs_decode_ahead *d, int vi)
{
    int k = 0;
    while (k < d->q_len && d->queue[(d->q_head + k) % d->depth] != vi) k++;
    for (; k + 1 < d->q_len; k++) d->queue[(d->q_head + k) % d->depth] = d->queue[(d->q_head + k + 1) % d->depth];
    d->q_len--;
}

int cs_decode_ahead_take(cs_decode_ahead *d, int vi, cs_image *out)
{
    pthread_mutex_lock(&d->mu);
    int st = d->state[vi];
    if (st == QUEUED) unqueue(d, vi), d->held--, d->state[vi] = IDLE;
    if (st == IDLE || st == QUEUED) {
        d->late++;
        pthread_mutex_unlock(&d->mu);
        return cs_scene_read_image(d->scene, &d->scene->cams[d->train[vi]], out);
    }
    while (d->state[vi] == DECODING) pthread_cond_wait(&d->done, &d->mu);
    d->ahead++, d->held--;
    int r = 0;
    if (d->state[vi] == READY) {
        *out = d->img[vi];
        memset(&d->img[vi], 0, sizeof d->img[vi]);
    } else {
        r = cs_fail("%s", d->err[vi]);
        free(d->err[vi]), d->err[vi] = NULL;
    }
    d->state[vi] = IDLE;
    pthread_mutex_unlock(&d->mu);
    return r;
}

void cs_decode_ahead_counts(const cs_decode_ahead *d, int *ahead, int *late)
{
    *ahead = d->ahead, *late = d->late;
}

void cs_decode_ahead_close(cs_decode_ahead *d)
{
    if (!d) return;
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_broadcast(&d->work);
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < d->n_threads; i++) pthread_join(d->threads[i], NULL);
    for (int i = 0; i < d->n_train; i++) cs_image_free(&d->img[i]), free(d->err[i]);
    pthread_mutex_destroy(&d->mu);
    pthread_cond_destroy(&d->work);
    pthread_cond_destroy(&d->done);
    free(d->state), free(d->img), free(d->err), free(d->queue), free(d->threads), free(d);
}
