/* image_store: where the training images live (data.image_residency) and how a view's
 * ground truth reaches the device.
 *   device: every training image uploaded once, 8-bit RGB (RGB and a weight when the scene has
 *           masks: cs_scene_gt_channels), in one buffer.
 *   host:   decoded images kept in RAM; each iteration's view is uploaded into one of two
 *           device slots on a second queue while the previous iteration computes.
 *   lazy:   decoded from disk through a host cache bounded by data.host_cache_mb (least
 *           recently used out first), then as host. The trainer names the views it will
 *           need (want), and data.decode_threads workers decode them ahead (decode_ahead.h),
 *           at most two views a thread held decoded beyond the cache.
 * Device and host residency decode every view at start on the same workers.
 * Each mode is one backend (a table in image_store.c: its device bytes, how it opens, gets,
 * releases and prefetches a view); the memory plan chooses the mode once (memplan.c) and asks
 * the chosen backend for its bytes (cs_images_device_bytes).
 * The trainer calls get() for the iteration's view, release() once the last kernel reading
 * it is enqueued, and prefetch() with the next iteration's view. Evaluation views come from
 * disk through slot 0 (or, under device residency, one temporary image buffer). */
#ifndef CS_IMAGE_STORE_H
#define CS_IMAGE_STORE_H

#include <stdint.h>

#include "cl_mem.h"
#include "cl_runtime.h"
#include "decode_ahead.h"
#include "image.h"
#include "scene.h"

typedef struct cs_residency cs_residency; /* a backend (image_store.c) */

typedef struct {
    cs_cl *cl;
    const cs_scene *scene;
    const cs_residency *be;    /* the backend of data.image_residency */
    const int *train;          /* camera index of each training view */
    int n_train;
    cs_buf images;             /* device residency */
    size_t *img_off;
    cs_image *host;            /* host residency: all; lazy: the cache (px NULL when absent) */
    uint64_t *last_use, tick;
    size_t cache_bytes, cache_limit;
    cl_command_queue xq;       /* upload queue (host / lazy), created at the first upload */
    cs_buf slot[2];
    int slot_view[2];          /* training view held or being uploaded; -1 none */
    cl_event ready[2];         /* upload done */
    cl_event released[2];      /* last kernel reading the slot done */
    cs_image staging[2];       /* lazy views not kept in the cache, until their upload is done */
    int cur;                   /* slot of the current iteration */
    int prefetch_hits, prefetch_misses;
    int decode_threads, depth;  /* lazy: views decoded ahead at most (0 otherwise) */
    cs_decode_ahead *ahead;    /* lazy */
} cs_image_store;

/* Loads (device, host) or indexes (lazy) the training views, decoding on DECODE_THREADS
 * threads (0: cs_decode_threads' choice). -1 with a message. */
int cs_images_init(cs_image_store *st, cs_cl *cl, const cs_scene *scene, int residency, const int *train, int n_train,
                   int host_cache_mb, int decode_threads);
/* How many iterations ahead the trainer names its views (0: it need not). */
int cs_images_lookahead(const cs_image_store *st);
/* Training view VI will be needed soon: decoded ahead unless cached (lazy; no-op otherwise). */
void cs_images_want(cs_image_store *st, int vi);
/* The backend of RESIDENCY (CS_RES_DEVICE / HOST / LAZY); NULL for anything else. */
const cs_residency *cs_residency_of(int residency);
/* "device", "host", "lazy" (the backend's name), or "auto" for anything else. */
const char *cs_residency_name(int residency);
/* Device bytes the backend of RESIDENCY holds for these views (for the memory plan). */
size_t cs_images_device_bytes(const cs_scene *scene, int residency, const int *train, int n_train);
/* Device residency addresses the training images with 32-bit offsets: true when the N_TRAIN
 * views of TRAIN take at most CS_IMAGES_DEVICE_MAX bytes. The memory plan asks this before it
 * chooses device residency; cs_images_init refuses device residency past it. */
#define CS_IMAGES_DEVICE_MAX 0xffffffffull
bool cs_images_device_addressable(const cs_scene *scene, const int *train, int n_train);
/* Makes training view VI available to kernels enqueued next on the main queue. */
int cs_images_get(cs_image_store *st, int vi, cs_buf **buf, unsigned *off);
/* Marks the end of the current view's use (enqueue after its last reader). */
int cs_images_release(cs_image_store *st);
/* Starts uploading training view VI for the next iteration (host / lazy; no-op otherwise). */
int cs_images_prefetch(cs_image_store *st, int vi);
/* Ground truth of any camera (evaluation), read from disk. */
int cs_images_get_camera(cs_image_store *st, int cam, cs_buf **buf, unsigned *off);
/* Frees the evaluation-only buffer (device residency). */
void cs_images_trim(cs_image_store *st);
/* Frees everything (waits for uploads in flight). */
void cs_images_free(cs_image_store *st);

#endif
