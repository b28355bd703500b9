/* dataset: the in-memory scene a reader produces (cameras, points), its train / test split
 * and graphdeco's scene extent. */
#include "dataset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

int cs_scene_gt_channels(const cs_scene *s) { return s->weighted ? 4 : 3; }

void cs_scene_free(cs_scene *s)
{
    for (int i = 0; i < s->n_maps; i++) free(s->maps[i].xy);
    free(s->maps);
    free(s->cams);
    free(s->points);
    free(s->colors);
    free(s->block_region.points);
    memset(s, 0, sizeof *s);
}

int cs_scene_count(const cs_scene *s, int test)
{
    int n = 0;
    for (int i = 0; i < s->n_cams; i++) n += (s->cams[i].is_test != 0) == (test != 0);
    return n;
}

static int cmp_cam_name(const void *a, const void *b)
{
    return strcmp(((const cs_camera *)a)->name, ((const cs_camera *)b)->name);
}

void cs_scene_split_every8(cs_scene *s, int eval)
{
    if (s->n_cams > 1) qsort(s->cams, s->n_cams, sizeof *s->cams, cmp_cam_name);
    for (int i = 0; i < s->n_cams; i++) s->cams[i].is_test = eval && i % 8 == 0;
}

double cs_scene_extent(const cs_scene *s)
{
    double mean[3] = {0, 0, 0}, c[3];
    int n = 0;
    for (int i = 0; i < s->n_cams; i++) {
        if (s->cams[i].is_test) continue;
        cs_camera_center(&s->cams[i], c);
        for (int k = 0; k < 3; k++) mean[k] += c[k];
        n++;
    }
    if (!n) return 1.0;
    for (int k = 0; k < 3; k++) mean[k] /= n;
    double maxd = 0;
    for (int i = 0; i < s->n_cams; i++) {
        if (s->cams[i].is_test) continue;
        cs_camera_center(&s->cams[i], c);
        double d = sqrt((c[0] - mean[0]) * (c[0] - mean[0]) + (c[1] - mean[1]) * (c[1] - mean[1]) +
                        (c[2] - mean[2]) * (c[2] - mean[2]));
        if (d > maxd) maxd = d;
    }
    return maxd * 1.1 > 0 ? maxd * 1.1 : 1.0;
}

int cs_split_of(const cs_scene *s, cs_split *out)
{
    memset(out, 0, sizeof *out);
    size_t n = (size_t)(s->n_cams > 0 ? s->n_cams : 1);
    out->train = malloc(sizeof(int) * n);
    out->test = malloc(sizeof(int) * n);
    if (!out->train || !out->test) {
        cs_split_free(out);
        return cs_fail("out of host memory (%d cameras)", s->n_cams);
    }
    for (int i = 0; i < s->n_cams; i++) {
        if (s->cams[i].is_test) out->test[out->n_test++] = i;
        else out->train[out->n_train++] = i;
    }
    return 0;
}

void cs_split_free(cs_split *sp)
{
    free(sp->train);
    free(sp->test);
    memset(sp, 0, sizeof *sp);
}
