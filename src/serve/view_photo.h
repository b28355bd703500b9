/* view_photo: a training camera's photo for the viewer page (/photo/ID of view_server.h): the
 * run's dataset (the data settings of its config.json) is loaded once, on the first request,
 * and view ID (cameras.json's id: the dataset's views in order) is decoded as the run trained
 * on it (cs_scene_read_image: at the training resolution, undistorted, over the background)
 * and encoded as PNG. Safe to call from the server's threads. */
#ifndef CS_VIEW_PHOTO_H
#define CS_VIEW_PHOTO_H

#include <stddef.h>
#include <stdint.h>

typedef struct cs_view_photos cs_view_photos;

/* For the run folder RUN_DIR; NULL when out of memory. */
cs_view_photos *cs_view_photos_new(const char *run_dir);
/* View ID's photo as PNG (*PNG of *N bytes; the caller frees it). -1 with a message: an ID that
 * is no view, a dataset that no longer loads, an image that does not decode. */
int cs_view_photo_png(cs_view_photos *p, int id, uint8_t **png, size_t *n);
void cs_view_photos_free(cs_view_photos *p);

#endif
