/* memplan: the memory plan of a training run, from the owners' footprints. */
#include "memplan.h"

#include "image_store.h"
#include "loss.h"
#include "lpips.h"
#include "render.h"

/* a Gaussian's rows with the model's x1.5 spare capacity, and its scratch */
static size_t per_gaussian(const cs_mem_plan *p) { return p->bytes_per_gaussian * 3 / 2 + p->scratch_per_gaussian; }

size_t cs_mem_plan_bytes_at(const cs_mem_plan *p, int gaussians)
{
    return p->fixed_bytes + (size_t)(gaussians > 0 ? gaussians : 0) * per_gaussian(p);
}

void cs_mem_plan_make(const cs_memory_cfg *mem, const cs_data_cfg *data, const cs_kernel_opts *o, size_t device_bytes,
                      const cs_scene *scene, const int *train, int n_train, cs_mem_plan *p)
{
    p->budget = mem->vram_budget_mb > 0 ? (size_t)(mem->vram_budget_mb * 1048576.0) : (size_t)(device_bytes * 0.97);
    p->rows = cs_model_row_bytes(&o->layout);
    p->bytes_per_gaussian = cs_row_bytes_total(&p->rows);
    cs_render_footprint f = cs_renderer_footprint(o);
    p->scratch_per_gaussian =
        f.per_gaussian + (size_t)(CS_PLAN_PAIRS_PER_GAUSSIAN * CS_PAIR_MARGIN * (double)f.per_pair);
    size_t maxpx = 0;
    int maxw = 0, maxh = 0;
    for (int i = 0; i < scene->n_cams; i++) {
        const cs_camera *c = &scene->cams[i];
        if ((size_t)c->width * c->height > maxpx) maxpx = (size_t)c->width * c->height;
        maxw = c->width > maxw ? c->width : maxw, maxh = c->height > maxh ? c->height : maxh;
    }
    /* the renderer's and the loss's per-pixel scratch and one ground-truth slot; LPIPS's
       weights and scratch while an evaluation runs */
    size_t per_view = maxpx * (f.per_pixel + cs_loss_bytes_per_pixel() + CS_IMAGE_BYTES_PER_PIXEL) +
                      (cs_lpips_fits(maxw, maxh) ? cs_lpips_bytes(maxw, maxh) : 0);
    p->image_bytes = cs_images_device_bytes(scene, CS_RES_DEVICE, train, n_train);
    p->residency = data->image_residency;
    if (p->residency == CS_RES_AUTO) p->residency = p->image_bytes <= p->budget / 3 ? CS_RES_DEVICE : CS_RES_HOST;
    p->fixed_bytes = per_view + cs_images_device_bytes(scene, p->residency, train, n_train);
    /* the model keeps x1.5 spare rows when it grows */
    long fit = p->budget > p->fixed_bytes ? (long)((p->budget - p->fixed_bytes) / per_gaussian(p)) : 0;
    p->max_gaussians = fit > 2000000000L ? 2000000000 : (int)fit;
    if (mem->max_gaussians > 0 && mem->max_gaussians < p->max_gaussians) p->max_gaussians = mem->max_gaussians;
}

void cs_mem_plan_print(const cs_mem_plan *p, FILE *out)
{
    static const char *const res_names[] = {"auto", "device", "host", "lazy"};
    fprintf(out,
            "memory plan: budget %.0f MiB; %zu B per Gaussian (params %zu, grads %zu, optimizer %zu, densify %zu) + "
            "~%zu B scratch; fixed %.1f MiB (images: %s, %.1f MiB); at most %d Gaussians\n",
            p->budget / 1048576.0, p->bytes_per_gaussian, p->rows.params, p->rows.grads, p->rows.optimizer,
            p->rows.densify, p->scratch_per_gaussian, p->fixed_bytes / 1048576.0, res_names[p->residency],
            p->image_bytes / 1048576.0, p->max_gaussians);
}

json_t *cs_mem_plan_json(const cs_mem_plan *p)
{
    return json_pack("{s:I,s:I,s:i,s:I}", "bytes_per_gaussian", (json_int_t)p->bytes_per_gaussian, "fixed_bytes",
                     (json_int_t)p->fixed_bytes, "max_gaussians", p->max_gaussians, "budget_bytes",
                     (json_int_t)p->budget);
}
