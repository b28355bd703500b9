/* mesh_exposure: a model's exposure.json on the host for the mesh stage (mesh_exposure.h). */
#include "mesh_exposure.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

int cs_mesh_exposure_load(cs_mesh_exposure *x, const cs_scene *scene, const char *path)
{
    memset(x, 0, sizeof *x);
    if (cs_split_of(scene, &x->split)) return -1;
    size_t n = x->split.n_train > 0 ? (size_t)x->split.n_train : 1;
    x->rows = malloc(n * CS_EXPOSURE_W * sizeof(float));
    if (!x->rows) {
        cs_mesh_exposure_free(x);
        return cs_fail("out of host memory (exposure rows)");
    }
    if (cs_exposure_parse(path, scene, x->split.train, x->split.n_train, x->rows, &x->found)) {
        cs_mesh_exposure_free(x);
        return -1;
    }
    return 0;
}

void cs_mesh_exposure_free(cs_mesh_exposure *x)
{
    cs_split_free(&x->split);
    free(x->rows);
    x->rows = NULL;
}

void cs_mesh_exposure_apply(const cs_mesh_exposure *x, const cs_scene *scene, int cam, cs_image *img)
{
    float e[CS_EXPOSURE_W];
    cs_exposure_row_of(scene, x->split.train, x->split.n_train, x->rows, cam, e);
    size_t n = (size_t)img->width * img->height;
    for (size_t i = 0; i < n; i++) {
        uint8_t *p = img->px + (size_t)img->channels * i;
        float c[3] = {p[0] / 255.f, p[1] / 255.f, p[2] / 255.f};
        for (int k = 0; k < 3; k++) {
            float v = (e[4 * k] * c[0] + e[4 * k + 1] * c[1] + e[4 * k + 2] * c[2] + e[4 * k + 3]) * 255.f + 0.5f;
            p[k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
}
