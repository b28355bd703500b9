/* view_server: `clsplat view` and `train --view`: an HTTP server (libmicrohttpd, in its own
 * thread) that shows one run folder, or a batch folder, while it is written. Read-only and
 * made of known resources only (nothing of the URL becomes a path). A run folder's:
 *   /                    the viewer page (src/serve/web/viewer.html and viewer.js, embedded):
 *                        a WebGL2 view of the model with the training cameras, their photos,
 *                        and the dashboard below, refreshed every few seconds
 *   /viewer.js           its script
 *   /dashboard           the run's page (run_report.h), made anew for each request
 *   /model.json, /model.bin   the model the page draws (view_model.h): a live run's newest
 *                        snapshot (cs_view_publish), else the newest saved PLY
 *   /photo/ID            view ID's photo as the run trained on it (view_photo.h), PNG
 *   /train_log.jsonl, /metrics.json, /result.json, /config.json, /cameras.json   its files
 * A batch folder's (for a job named in ROOT/summary.json only):
 *   /                    the batch's page, reloading itself every 5 seconds; a started job's
 *                        name links to its live view
 *   /<job>/...           that job's folder as a run folder's resources above (its viewer page,
 *                        model, photos, dashboard, files), opened on the first request
 *   /<job>/report.html   a batch job's page
 * GET and HEAD only; anything else is 404 (unknown resource) or 405 (other methods).
 * Loopback (127.0.0.1) unless a host is given; then a random access token is printed and
 * required (?token=... once, then a cookie). Limits: 32 connections (8 per address), 10 s
 * idle timeout, 16 KiB of request per connection (larger headers: 431), files served up to
 * 64 MiB. The server only reads files: a client that hangs, disconnects or sends garbage
 * costs one connection slot, never the training thread. */
#ifndef CS_VIEW_SERVER_H
#define CS_VIEW_SERVER_H

#include <stdbool.h>

#include "splats.h"

typedef struct cs_view_server cs_view_server;

/* How often `train --view` sends the page a snapshot of the model (wall seconds). */
#define CS_VIEW_SNAPSHOT_SECONDS 3.0
/* A page polls the model every 2 seconds; one silent for this long has gone. */
#define CS_VIEW_WATCHED_SECONDS 10.0

typedef struct {
    const char *dir;  /* the run or batch folder shown */
    const char *host; /* IPv4 address to listen on; NULL or "": 127.0.0.1 */
    int port;         /* 0: a free port (cs_view_port tells it) */
} cs_view_opts;

/* Starts serving. -1 with a message (a bad host, a port in use). */
int cs_view_start(const cs_view_opts *o, cs_view_server **out);
int cs_view_port(const cs_view_server *s);
/* The access token a non-loopback server requires ("" on loopback). */
const char *cs_view_token(const cs_view_server *s);
/* Prints the address to open (with the token when one is required) to stdout. */
void cs_view_announce(const cs_view_server *s);
/* Hands MODEL at ITERATION over as what a run folder's page draws (a live run's snapshot; *MODEL
 * is emptied: the server frees it, and encodes it on its own thread when a page asks). A batch
 * folder's server frees it. */
void cs_view_publish(cs_view_server *s, cs_splats *model, int iteration);
/* Whether a page asked for the model in the last CS_VIEW_WATCHED_SECONDS: a run takes
 * snapshots only while someone watches. */
bool cs_view_watched(cs_view_server *s);
/* Stops the server (open connections are closed) and frees it; NULL is a no-op. */
void cs_view_stop(cs_view_server *s);

#endif
