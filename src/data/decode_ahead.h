/* decode_ahead: training images decoded on worker threads ahead of their use.
 * The caller names the views it will need (want, in the order of need) and takes each one
 * when it needs it: a view already decoded is handed over at once, one being decoded is
 * waited for, and one never asked for (or still queued) is decoded on the caller's thread.
 * At most DEPTH views are queued, being decoded or waiting to be taken, so the pool holds at
 * most DEPTH decoded images. Decoding is cs_scene_read_image's (bit-identical on any thread);
 * a worker's failure is reported, with its message, by the take of that view. */
#ifndef CS_DECODE_AHEAD_H
#define CS_DECODE_AHEAD_H

#include "image.h"
#include "scene.h"

typedef struct cs_decode_ahead cs_decode_ahead;

/* Worker threads for REQUESTED (0: the online cores but one, 1 to 8). */
int cs_decode_threads(int requested);
/* Starts THREADS workers decoding views of TRAIN (camera indices) of SCENE, DEPTH views ahead
 * at most. NULL with a message (out of memory, threads not started). */
cs_decode_ahead *cs_decode_ahead_open(const cs_scene *scene, const int *train, int n_train, int threads, int depth);
/* Queues training view VI unless it is already queued, decoding or decoded, or DEPTH views
 * are; returns whether it was queued. */
int cs_decode_ahead_want(cs_decode_ahead *d, int vi);
/* View VI's pixels into OUT (the caller owns them). -1 with a message. */
int cs_decode_ahead_take(cs_decode_ahead *d, int vi, cs_image *out);
/* Views taken ready or being decoded (ahead) and decoded on the caller's thread (late). */
void cs_decode_ahead_counts(const cs_decode_ahead *d, int *ahead, int *late);
/* Stops the workers and frees what they decoded. NULL is a no-op. */
void cs_decode_ahead_close(cs_decode_ahead *d);

#endif
