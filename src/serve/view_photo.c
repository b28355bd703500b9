/* view_photo: the dataset's photos for the viewer page (view_photo.h). */
#include "view_photo.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "scene.h"
#include "util.h"

struct cs_view_photos {
    pthread_mutex_t lock;
    char dir[1024];
    int loaded;        /* 1 loaded, -1 failed (the message below), 0 not tried */
    char error[512];
    cs_scene scene;
};

cs_view_photos *cs_view_photos_new(const char *run_dir)
{
    cs_view_photos *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    pthread_mutex_init(&p->lock, NULL);
    snprintf(p->dir, sizeof p->dir, "%s", run_dir);
    return p;
}

/* under the lock: the run's dataset, once */
static int load_scene(cs_view_photos *p)
{
    if (p->loaded) return p->loaded > 0 ? 0 : cs_fail("%s", p->error);
    char path[1300];
    cs_config c;
    cs_config_defaults(&c);
    int r = cs_path_join(path, sizeof path, p->dir, "config.json") || cs_config_load_file(&c, path) ||
            cs_scene_load(&c.data, &p->scene);
    p->loaded = r ? -1 : 1;
    if (!r) return 0;
    snprintf(p->error, sizeof p->error, "the run's dataset: %s", cs_last_error());
    return cs_fail("%s", p->error);
}

/* the photo's RGB (a weighted scene's images carry the mask as a fourth channel) */
static int encode(cs_image *img, uint8_t **png, size_t *n)
{
    if (img->channels == 4) {
        size_t px = (size_t)img->width * img->height;
        for (size_t i = 0; i < px; i++) memmove(img->px + 3 * i, img->px + 4 * i, 3);
        img->channels = 3;
    }
    return cs_image_encode_png(img, 3, png, n);
}

int cs_view_photo_png(cs_view_photos *p, int id, uint8_t **png, size_t *n)
{
    pthread_mutex_lock(&p->lock);
    int r = load_scene(p);
    if (!r && (id < 0 || id >= p->scene.n_cams)) r = cs_fail("no view %d: the dataset has %d", id, p->scene.n_cams);
    cs_image img = {0};
    if (!r) r = cs_scene_read_image(&p->scene, &p->scene.cams[id], &img) || encode(&img, png, n);
    cs_image_free(&img);
    pthread_mutex_unlock(&p->lock);
    return r;
}

void cs_view_photos_free(cs_view_photos *p)
{
    if (!p) return;
    if (p->loaded > 0) cs_scene_free(&p->scene);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
