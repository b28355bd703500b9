/* image_store: training-image residency and uploads (see image_store.h). */
#include "image_store.h"

#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "decode_ahead.h"
#include "util.h"

/* a residency mode's backend: how it holds and delivers the training views */
struct cs_residency {
    const char *name;
    size_t (*device_bytes)(const cs_scene *s, const int *train, int n_train);
    int (*open)(cs_image_store *st);
    int (*get)(cs_image_store *st, int vi, cs_buf **buf, unsigned *off);
    int (*release)(cs_image_store *st);
    int (*prefetch)(cs_image_store *st, int vi);
    void (*want)(cs_image_store *st, int vi);
    void (*trim)(cs_image_store *st);
    /* slot backends: the pixels of training view VI (STAGING owns them when no cache does) */
    const unsigned char *(*pixels)(cs_image_store *st, int vi, cs_image *staging);
};

/* bytes of camera C's ground truth on the device */
static size_t cam_bytes(const cs_scene *s, const cs_camera *c)
{
    return (size_t)c->width * c->height * cs_scene_gt_channels(s);
}

/* the training views' bytes, and the largest camera's (evaluation views included) */
static size_t all_bytes(const cs_scene *s, const int *train, int n_train)
{
    size_t all = 0;
    for (int i = 0; i < n_train; i++) all += cam_bytes(s, &s->cams[train[i]]);
    return all;
}
static size_t largest_bytes(const cs_scene *s)
{
    size_t largest = 0;
    for (int i = 0; i < s->n_cams; i++)
        if (cam_bytes(s, &s->cams[i]) > largest) largest = cam_bytes(s, &s->cams[i]);
    return largest;
}

bool cs_images_device_addressable(const cs_scene *scene, const int *train, int n_train)
{
    return all_bytes(scene, train, n_train) <= CS_IMAGES_DEVICE_MAX;
}

static void wait_release(cl_event *e)
{
    if (*e) {
        clWaitForEvents(1, e);
        clReleaseEvent(*e);
        *e = NULL;
    }
}

/* Decodes every training view on the decoding threads, DEPTH views ahead, and hands each to PUT. */
static int load_all(cs_image_store *st, int (*put)(cs_image_store *st, int i, cs_image *img))
{
    int depth = 2 * st->decode_threads;
    cs_decode_ahead *d = cs_decode_ahead_open(st->scene, st->train, st->n_train, st->decode_threads, depth);
    if (!d) return -1;
    for (int i = 0; i < depth && i < st->n_train; i++) cs_decode_ahead_want(d, i);
    int r = 0;
    for (int i = 0; i < st->n_train && !r; i++) {
        if (i + depth < st->n_train) cs_decode_ahead_want(d, i + depth);
        cs_image img;
        r = cs_decode_ahead_take(d, i, &img) || put(st, i, &img);
    }
    cs_decode_ahead_close(d);
    return r;
}

/* ---- device: every view in one buffer, addressed in place ------------------------------- */
static size_t device_bytes(const cs_scene *s, const int *train, int n_train)
{
    return all_bytes(s, train, n_train) + largest_bytes(s); /* + one evaluation view */
}

static int device_put(cs_image_store *st, int i, cs_image *img)
{
    int r = cs_buf_write(st->cl, &st->images, st->img_off[i], cam_bytes(st->scene, &st->scene->cams[st->train[i]]),
                         img->px);
    cs_image_free(img);
    return r;
}

static int device_open(cs_image_store *st)
{
    size_t total = all_bytes(st->scene, st->train, st->n_train);
    if (total > CS_IMAGES_DEVICE_MAX) /* the plan never asks for this */
        return cs_fail("device residency addresses at most %.2f GiB of images with its 32-bit offsets; these take "
                       "%.2f GiB (the memory plan chooses host residency for them)",
                       CS_IMAGES_DEVICE_MAX / 1073741824.0, total / 1073741824.0);
    if (cs_buf_alloc(st->cl, &st->images, CS_MEM_IMAGES, total, "training images")) return -1;
    return load_all(st, device_put);
}

static int device_get(cs_image_store *st, int vi, cs_buf **buf, unsigned *off)
{
    *buf = &st->images;
    *off = (unsigned)st->img_off[vi];
    return 0;
}

static int device_release(cs_image_store *st) { return (void)st, 0; }
static int device_prefetch(cs_image_store *st, int vi) { return (void)st, (void)vi, 0; }
static void no_want(cs_image_store *st, int vi) { (void)st, (void)vi; }
/* the evaluation view's buffer is not needed once evaluation is done */
static void device_trim(cs_image_store *st) { cs_buf_free(st->cl, &st->slot[0]); }

/* ---- host and lazy: each iteration's view uploaded into one of two slots ---------------- */
static size_t slot_bytes(const cs_scene *s, const int *train, int n_train)
{
    return (void)train, (void)n_train, 2 * largest_bytes(s);
}

/* Starts the upload of training view VI into slot S on the upload queue. */
static int upload(cs_image_store *st, int s, int vi)
{
    const cs_camera *c = &st->scene->cams[st->train[vi]];
    size_t b = cam_bytes(st->scene, c);
    if (!st->xq) { /* created at the first upload: evaluation-only use never needs it */
        cl_int err;
        st->xq = clCreateCommandQueue(st->cl->ctx, st->cl->device, 0, &err);
        if (err != CL_SUCCESS) return cs_fail("clCreateCommandQueue (image upload queue) failed: %s", cs_cl_strerror(err));
    }
    wait_release(&st->ready[s]); /* the slot's previous upload (and staging pixels) are done */
    const unsigned char *px = st->be->pixels(st, vi, &st->staging[s]);
    if (!px) return -1;
    if (b > st->slot[s].bytes) {
        /* growing replaces the buffer: nothing may still read the old one */
        wait_release(&st->released[s]);
        if (cs_buf_reserve(st->cl, &st->slot[s], b, 0, "ground-truth upload slot")) return -1;
    }
    cl_event wait = st->released[s];
    cl_int err = clEnqueueWriteBuffer(st->xq, st->slot[s].mem, CL_FALSE, 0, b, px, wait ? 1 : 0, wait ? &wait : NULL,
                                      &st->ready[s]);
    if (err != CL_SUCCESS)
        return cs_fail("clEnqueueWriteBuffer (image %s to the device) failed: %s", c->name, cs_cl_strerror(err));
    err = clFlush(st->xq);
    if (err != CL_SUCCESS) return cs_fail("clFlush (image upload queue) failed: %s", cs_cl_strerror(err));
    st->slot_view[s] = vi;
    return 0;
}

static int slot_get(cs_image_store *st, int vi, cs_buf **buf, unsigned *off)
{
    int s = st->slot_view[0] == vi ? 0 : st->slot_view[1] == vi ? 1 : -1;
    if (s < 0) {
        st->prefetch_misses++;
        s = st->slot_view[st->cur] == -1 ? st->cur : 1 - st->cur; /* not the slot the last iteration read */
        if (upload(st, s, vi)) return -1;
    } else {
        st->prefetch_hits++;
    }
    CS_CHECK(clEnqueueBarrierWithWaitList(st->cl->queue, 1, &st->ready[s], NULL));
    st->cur = s;
    *buf = &st->slot[s];
    *off = 0;
    return 0;
}

static int slot_release(cs_image_store *st)
{
    int s = st->cur;
    if (st->released[s]) clReleaseEvent(st->released[s]);
    st->released[s] = NULL;
    CS_CHECK(clEnqueueMarkerWithWaitList(st->cl->queue, 0, NULL, &st->released[s]));
    return 0;
}

static int slot_prefetch(cs_image_store *st, int vi)
{
    if (st->slot_view[0] == vi || st->slot_view[1] == vi) return 0;
    return upload(st, 1 - st->cur, vi);
}

static void slot_trim(cs_image_store *st) { (void)st; }

/* host: every view decoded into RAM at start */
static int host_put(cs_image_store *st, int i, cs_image *img)
{
    st->host[i] = *img;
    return 0;
}
static int host_open(cs_image_store *st) { return load_all(st, host_put); }
static const unsigned char *host_pixels(cs_image_store *st, int vi, cs_image *staging)
{
    return (void)staging, st->host[vi].px;
}

/* lazy: decoded from disk ahead of use, through the host cache */
static int lazy_open(cs_image_store *st)
{
    st->depth = 2 * st->decode_threads;
    st->ahead = cs_decode_ahead_open(st->scene, st->train, st->n_train, st->decode_threads, st->depth);
    return st->ahead ? 0 : -1;
}

static void lazy_want(cs_image_store *st, int vi)
{
    if (!st->host[vi].px) cs_decode_ahead_want(st->ahead, vi);
}

/* lazy: the decoded pixels of training view VI, from the cache or from disk. If
   they are not kept in the cache, they go to STAGING (owned by the caller's slot). */
static const unsigned char *lazy_pixels(cs_image_store *st, int vi, cs_image *staging)
{
    st->last_use[vi] = ++st->tick;
    if (st->host[vi].px) return st->host[vi].px;
    const cs_camera *c = &st->scene->cams[st->train[vi]];
    cs_image img;
    if (cs_decode_ahead_take(st->ahead, vi, &img)) return NULL;
    size_t b = cam_bytes(st->scene, c);
    if (b > st->cache_limit) {
        cs_image_free(staging);
        *staging = img;
        return staging->px;
    }
    /* make room: least recently used first; pending uploads may read cached pixels */
    while (st->cache_bytes + b > st->cache_limit) {
        int lru = -1;
        for (int i = 0; i < st->n_train; i++)
            if (st->host[i].px && (lru < 0 || st->last_use[i] < st->last_use[lru])) lru = i;
        if (lru < 0) break;
        wait_release(&st->ready[0]);
        wait_release(&st->ready[1]);
        cs_image_free(&st->host[lru]);
        st->cache_bytes -= cam_bytes(st->scene, &st->scene->cams[st->train[lru]]);
    }
    st->host[vi] = img;
    st->cache_bytes += b;
    return img.px;
}

/* ---- the backends, by data.image_residency --------------------------------------------- */

static const cs_residency backends[] = {
    [CS_RES_DEVICE] = {"device", device_bytes, device_open, device_get, device_release, device_prefetch, no_want,
                       device_trim, NULL},
    [CS_RES_HOST] = {"host", slot_bytes, host_open, slot_get, slot_release, slot_prefetch, no_want, slot_trim,
                     host_pixels},
    [CS_RES_LAZY] = {"lazy", slot_bytes, lazy_open, slot_get, slot_release, slot_prefetch, lazy_want, slot_trim,
                     lazy_pixels},
};

const cs_residency *cs_residency_of(int residency)
{
    return residency > CS_RES_AUTO && residency <= CS_RES_LAZY ? &backends[residency] : NULL;
}

const char *cs_residency_name(int residency)
{
    const cs_residency *be = cs_residency_of(residency);
    return be ? be->name : "auto";
}

size_t cs_images_device_bytes(const cs_scene *scene, int residency, const int *train, int n_train)
{
    return cs_residency_of(residency)->device_bytes(scene, train, n_train);
}

int cs_images_init(cs_image_store *st, cs_cl *cl, const cs_scene *scene, int residency, const int *train, int n_train,
                   int host_cache_mb, int decode_threads)
{
    memset(st, 0, sizeof *st);
    st->be = cs_residency_of(residency);
    if (!st->be) return cs_fail("image residency %d is not device, host or lazy (resolve auto first)", residency);
    st->cl = cl, st->scene = scene, st->train = train, st->n_train = n_train;
    st->slot_view[0] = st->slot_view[1] = -1;
    st->slot[0].cat = st->slot[1].cat = CS_MEM_IMAGES;
    st->cache_limit = (size_t)host_cache_mb << 20;
    st->decode_threads = cs_decode_threads(decode_threads);
    st->img_off = calloc(n_train ? n_train : 1, sizeof(size_t));
    st->host = calloc(n_train ? n_train : 1, sizeof(cs_image));
    st->last_use = calloc(n_train ? n_train : 1, sizeof(uint64_t));
    if (!st->img_off || !st->host || !st->last_use) return cs_fail("out of host memory for %d training views", n_train);
    for (int i = 1; i < n_train; i++) st->img_off[i] = st->img_off[i - 1] + cam_bytes(scene, &scene->cams[train[i - 1]]);
    return st->be->open(st);
}

int cs_images_lookahead(const cs_image_store *st) { return st->depth; }
void cs_images_want(cs_image_store *st, int vi) { st->be->want(st, vi); }
int cs_images_get(cs_image_store *st, int vi, cs_buf **buf, unsigned *off) { return st->be->get(st, vi, buf, off); }
int cs_images_release(cs_image_store *st) { return st->be->release(st); }
int cs_images_prefetch(cs_image_store *st, int vi) { return st->be->prefetch(st, vi); }
void cs_images_trim(cs_image_store *st) { st->be->trim(st); }

int cs_images_get_camera(cs_image_store *st, int cam, cs_buf **buf, unsigned *off)
{
    const cs_camera *c = &st->scene->cams[cam];
    CS_CHECK(clFinish(st->cl->queue));
    if (st->xq) CS_CHECK(clFinish(st->xq));
    wait_release(&st->released[0]);
    wait_release(&st->ready[0]);
    st->slot_view[0] = -1;
    if (cs_buf_reserve(st->cl, &st->slot[0], cam_bytes(st->scene, c), 0, "ground-truth image")) return -1;
    cs_image img;
    if (cs_scene_read_image(st->scene, c, &img)) return -1;
    int r = cs_buf_write(st->cl, &st->slot[0], 0, cam_bytes(st->scene, c), img.px);
    cs_image_free(&img);
    if (r) return -1;
    *buf = &st->slot[0];
    *off = 0;
    return 0;
}

void cs_images_free(cs_image_store *st)
{
    if (st->xq) clFinish(st->xq);
    for (int s = 0; s < 2; s++) {
        wait_release(&st->ready[s]);
        wait_release(&st->released[s]);
        cs_buf_free(st->cl, &st->slot[s]);
        cs_image_free(&st->staging[s]);
    }
    if (st->xq) clReleaseCommandQueue(st->xq);
    cs_decode_ahead_close(st->ahead);
    cs_buf_free(st->cl, &st->images);
    for (int i = 0; st->host && i < st->n_train; i++) cs_image_free(&st->host[i]);
    free(st->host), free(st->img_off), free(st->last_use);
    memset(st, 0, sizeof *st);
}
