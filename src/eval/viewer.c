/* viewer: a saved model on the device for forward-only work. */
#include "viewer.h"

#include <string.h>

#include "tuning.h"

int cs_viewer_open(cs_viewer *w, cs_cl *cl, const cs_config *cfg, const cs_splats *s, const cs_scene *scene,
                   unsigned programs)
{
    memset(w, 0, sizeof *w);
    cs_kernel_opts ko;
    cs_kernel_opts_of(cfg, &ko);
    ko.programs = programs;
    ko.layout.sh_degree = s->sh_degree;
    ko.layout.filter_3d = s->filter_3d != NULL;
    if (cs_kernels_build_stored(cl, &ko, cs_tune_readonly(cfg->device.tune), &w->k, NULL)) return -1;
    if (cs_model_create(cl, &w->m, s, &ko.layout, s->n)) {
        cs_kernels_release(&w->k);
        return -1;
    }
    cs_renderer_init(&w->r, cl, &w->k, (float)cfg->model.kernel_size);
    cs_loss_init(&w->loss, cl, &w->k);
    w->loss.gt_channels = cs_scene_gt_channels(scene);
    w->ready = 1;
    return 0;
}

void cs_viewer_close(cs_viewer *w, cs_cl *cl)
{
    if (!w->ready) return;
    cs_renderer_free(&w->r);
    cs_loss_free(&w->loss);
    cs_model_free(cl, &w->m);
    cs_kernels_release(&w->k);
    w->ready = 0;
}
