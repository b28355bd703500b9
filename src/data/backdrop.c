/* backdrop: the training photos' border colour (backdrop.h). */
#include "backdrop.h"

#include "image.h"
#include "util.h"

/* Adds the border band's pixels of IMG to SUM (weighted RGB, 0-255) and their weight to *W. */
static void add_border(const cs_image *img, double sum[3], double *w)
{
    int W = img->width, H = img->height, c = img->channels;
    int bx = (int)(W * CS_BACKDROP_BAND), by = (int)(H * CS_BACKDROP_BAND);
    if (bx < 1) bx = 1;
    if (by < 1) by = 1;
    for (int y = 0; y < H; y++) {
        int whole_row = y < by || y >= H - by;
        for (int x = 0; x < W; x++) {
            if (!whole_row && x == bx && W - bx > bx) x = W - bx; /* past the band's inner edge */
            const uint8_t *p = img->px + ((size_t)y * W + x) * c;
            double a = c == 4 ? p[3] / 255.0 : 1.0;
            sum[0] += a * p[0], sum[1] += a * p[1], sum[2] += a * p[2];
            *w += a;
        }
    }
}

int cs_backdrop_colour(const cs_scene *s, float rgb[3], int *photos)
{
    int n_train = cs_scene_count(s, 0), k = n_train < CS_BACKDROP_PHOTOS ? n_train : CS_BACKDROP_PHOTOS;
    double sum[3] = {0, 0, 0}, w = 0;
    *photos = 0;
    if (k == 0) return cs_fail("data.background border: the scene has no training photos to take it from");
    for (int i = 0, seen = 0, want = 0; i < s->n_cams && *photos < k; i++) {
        if (s->cams[i].is_test) continue;
        /* the training views numbered want = j * n_train / k, j = 0 .. k - 1 */
        if (seen++ != want) continue;
        cs_image img;
        if (cs_image_load(s->cams[i].path, &img))
            return cs_fail_prefix("data.background border: %s", s->cams[i].path);
        add_border(&img, sum, &w);
        cs_image_free(&img);
        (*photos)++;
        want = (int)((long)*photos * n_train / k);
    }
    if (!(w > 0))
        return cs_fail("data.background border: the borders of the training photos read (%d) are transparent; give "
                       "data.background a colour", *photos);
    for (int j = 0; j < 3; j++) rgb[j] = (float)(sum[j] / w / 255.0);
    return 0;
}
