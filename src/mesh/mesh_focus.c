/* mesh_focus: the part of a capture its training views look at together (mesh_focus.h). */
#include "mesh_focus.h"

#include <math.h>
#include <stdlib.h>

#include "util.h"

/* how many of SCENE's training views see P inside the image within MAX_DEPTH */
static int views_seeing(const cs_scene *scene, const float p[3], double max_depth)
{
    int seen = 0;
    for (int v = 0; v < scene->n_cams; v++) {
        const cs_camera *c = &scene->cams[v];
        double u, w, z;
        if (c->is_test || !cs_camera_project(c, p, &u, &w, &z)) continue;
        seen += z > 0 && z <= max_depth && u >= 0 && u <= c->width && w >= 0 && w <= c->height;
    }
    return seen;
}

/* (mesh_focus.h) */
int cs_mesh_focus_box(const cs_scene *scene, const cs_splats *s, float min_logit, double max_depth, double share,
                      float box[6], size_t *kept, size_t *sampled)
{
    enum { MAX_PAIRS = 8 << 20 };
    int views = cs_scene_count(scene, 0);
    *kept = *sampled = 0;
    if (views <= 0 || s->n <= 0) return 1;
    size_t step = (size_t)s->n * (size_t)views / MAX_PAIRS + 1, cap = (size_t)s->n / step + 1, m = 0;
    float *pts = malloc(sizeof(float) * 3 * cap), *axis = malloc(sizeof(float) * cap);
    if (!pts || !axis) {
        free(pts), free(axis);
        return cs_fail("out of host memory (the focus of %d Gaussians)", s->n);
    }
    double need = ceil(share * views);
    for (size_t i = 0; i < (size_t)s->n; i += step) {
        const float *p = s->means + 3 * i;
        if (!(s->logit_opacity[i] > min_logit) || !isfinite(p[0] + p[1] + p[2])) continue;
        (*sampled)++;
        if (views_seeing(scene, p, max_depth) < need) continue;
        pts[3 * m] = p[0], pts[3 * m + 1] = p[1], pts[3 * m + 2] = p[2], m++;
    }
    *kept = m;
    int rc = m < 10;
    for (int k = 0; !rc && k < 3; k++) {
        for (size_t i = 0; i < m; i++) axis[i] = pts[3 * i + k];
        cs_sort_floats(axis, m);
        box[k] = axis[(size_t)((double)m * 0.005)];
        box[3 + k] = axis[(size_t)((double)m * 0.995)];
    }
    free(pts), free(axis);
    return rc;
}
