/* memplan: the memory plan of a training run, from the owners' footprints. */
#include "memplan.h"

#include <string.h>

#include "util.h"

#include "image_store.h"
#include "loss.h"
#include "lpips.h"
#include "density.h"
#include "render.h"

/* a Gaussian's rows with the model's x1.5 spare capacity, and its scratch */
static size_t per_gaussian(const cs_mem_plan *p) { return p->bytes_per_gaussian * 3 / 2 + p->scratch_per_gaussian; }

/* Resolves residency RES (auto by the rule in memplan.h; HOST_AVAIL 0: unknown) with its reason;
   ADDRESSABLE: whether device residency can hold the images at all (image_store's limit). */
static void choose_residency(cs_mem_plan *p, int res, size_t host_avail, bool addressable)
{
    double gib = 1073741824.0, img = p->image_bytes / gib;
    if (res == CS_RES_DEVICE && !addressable) {
        p->residency = CS_RES_HOST;
        snprintf(p->residency_why, sizeof p->residency_why, "host: data.image_residency asks for device, but %.2f GiB "
                 "of images pass the %.0f GiB device residency addresses", img, (CS_IMAGES_DEVICE_MAX + 1.0) / gib);
        return;
    }
    p->residency = res;
    if (res != CS_RES_AUTO) {
        snprintf(p->residency_why, sizeof p->residency_why, "%s (data.image_residency)", cs_residency_name(res));
        if (res == CS_RES_HOST && host_avail && p->image_bytes > host_avail)
            snprintf(p->residency_why, sizeof p->residency_why,
                     "host (data.image_residency), but they need %.2f GiB of RAM and %.2f GiB are available: lazy "
                     "would fit", img, host_avail / gib);
        return;
    }
    if (p->image_bytes <= p->budget / 3 && addressable) {
        p->residency = CS_RES_DEVICE;
        snprintf(p->residency_why, sizeof p->residency_why, "device (auto: they fit in a third of the %.2f GiB budget)",
                 p->budget / gib);
    } else if (!host_avail || p->image_bytes <= host_avail / 2) {
        p->residency = CS_RES_HOST;
        if (host_avail)
            snprintf(p->residency_why, sizeof p->residency_why, "host (auto: over a third of the %.2f GiB device "
                     "budget; at most half of the %.2f GiB of host memory available)", p->budget / gib, host_avail / gib);
        else
            snprintf(p->residency_why, sizeof p->residency_why, "host (auto: over a third of the %.2f GiB device "
                     "budget; host memory not known)", p->budget / gib);
    } else {
        p->residency = CS_RES_LAZY;
        snprintf(p->residency_why, sizeof p->residency_why,
                 "lazy (auto: over a third of the %.2f GiB device budget and over half of the %.2f GiB of host memory "
                 "available: decoded from disk through the data.host_cache_mb cache)", p->budget / gib,
                 host_avail / gib);
    }
}

size_t cs_mem_plan_pairs(const cs_mem_plan *p)
{
    return (size_t)((double)p->cap * CS_PLAN_PAIRS_PER_GAUSSIAN * CS_PAIR_MARGIN);
}

size_t cs_mem_plan_bytes_at(const cs_mem_plan *p, int gaussians)
{
    return p->fixed_bytes + (size_t)(gaussians > 0 ? gaussians : 0) * per_gaussian(p);
}

/* A strategy with a fixed cap (MCMC): the rows are allocated for the cap once, with the
   strategy's scratch and no spare; the cap is densify.cap_max (0: what fits), and the plan's
   peak is the run's */
static void plan_fixed_cap(const cs_density_ops *ops, const cs_densify_cfg *dens, const cs_memory_cfg *mem,
                           cs_mem_plan *p)
{
    size_t row = p->bytes_per_gaussian + p->scratch_per_gaussian + ops->scratch_per_row();
    long fit = p->budget > p->fixed_bytes ? (long)((p->budget - p->fixed_bytes) / row) : 0;
    if (ops->row_limit > 0 && fit > ops->row_limit) fit = ops->row_limit;
    if (mem->max_gaussians > 0 && mem->max_gaussians < fit) fit = mem->max_gaussians;
    p->max_gaussians = (int)fit;
    p->cap = dens->cap_max > 0 ? dens->cap_max : p->max_gaussians;
    p->peak_bytes = p->fixed_bytes + (size_t)p->cap * row;
}

/* LPIPS runs at the evaluations when its weights are found and there are views to evaluate */
static int plans_lpips(const cs_config *cfg, const cs_split *split)
{
    char def[1024];
    return cs_lpips_weights_path(cfg->eval.lpips_weights, def, sizeof def) &&
           (split->n_test > 0 || cfg->eval.train_views > 0);
}

void cs_mem_plan_make(const cs_config *cfg, const cs_kernel_opts *o, size_t device_bytes, const cs_scene *scene,
                      const cs_split *split, cs_mem_plan *p)
{
    const cs_memory_cfg *mem = &cfg->memory;
    const int *train = split->train, n_train = split->n_train;
    memset(p, 0, sizeof *p);
    p->budget = mem->vram_budget_mb > 0 ? (size_t)(mem->vram_budget_mb * 1048576.0) : (size_t)(device_bytes * 0.97);
    p->rows = cs_model_row_bytes(&o->layout);
    p->bytes_per_gaussian = cs_row_bytes_total(&p->rows);
    cs_render_footprint f = cs_renderer_footprint(o);
    p->scratch_per_gaussian =
        f.per_gaussian + (size_t)(CS_PLAN_PAIRS_PER_GAUSSIAN * CS_PAIR_MARGIN * (double)f.per_pair);
    size_t maxpx = 0;
    int maxw = 0, maxh = 0, tile = o->tile > 0 ? o->tile : 16;
    for (int i = 0; i < scene->n_cams; i++) {
        const cs_camera *c = &scene->cams[i];
        size_t tiles = (size_t)((c->width + tile - 1) / tile) * (size_t)((c->height + tile - 1) / tile);
        if ((size_t)c->width * c->height > maxpx) maxpx = (size_t)c->width * c->height;
        if (tiles > p->max_tiles) p->max_tiles = tiles;
        maxw = c->width > maxw ? c->width : maxw, maxh = c->height > maxh ? c->height : maxh;
    }
    p->max_pixels = maxpx;
    /* LPIPS's weights and scratch while an evaluation runs */
    if (plans_lpips(cfg, split) && cs_lpips_fits(maxw, maxh)) p->lpips_bytes = cs_lpips_bytes(maxw, maxh);
    /* the renderer's per-pixel scratch and one ground-truth slot; the loss's for training, or
       while an evaluation runs (the training's trimmed) its metrics' and LPIPS's */
    size_t train_loss = maxpx * (cs_loss_bytes_per_pixel() + (cfg->optim.exposure ? cs_exposure_bytes_per_pixel() : 0)),
           eval = maxpx * cs_loss_metric_bytes_per_pixel() + p->lpips_bytes;
    size_t per_view = maxpx * (f.per_pixel + (size_t)cs_scene_gt_channels(scene)) + p->max_tiles * f.per_tile +
                      (train_loss > eval ? train_loss : eval);
    p->image_bytes = cs_images_device_bytes(scene, CS_RES_DEVICE, train, n_train);
    choose_residency(p, cfg->data.image_residency, cs_host_mem_available(), cs_images_device_addressable(scene, train, n_train));
    p->fixed_bytes = per_view + cs_images_device_bytes(scene, p->residency, train, n_train);
    /* the model keeps x1.5 spare rows when it grows */
    long fit = p->budget > p->fixed_bytes ? (long)((p->budget - p->fixed_bytes) / per_gaussian(p)) : 0;
    p->max_gaussians = fit > 2000000000L ? 2000000000 : (int)fit;
    if (mem->max_gaussians > 0 && mem->max_gaussians < p->max_gaussians) p->max_gaussians = mem->max_gaussians;
    const cs_density_ops *ops = cs_density_ops_of(cfg->densify.strategy);
    if (ops->fixed_cap) plan_fixed_cap(ops, &cfg->densify, mem, p);
}

void cs_mem_plan_print(const cs_mem_plan *p, FILE *out)
{
    fprintf(out,
            "memory plan: budget %.0f MiB; %zu B per Gaussian (params %zu, grads %zu, optimizer %zu, densify %zu) + "
            "~%zu B scratch; fixed %.1f MiB (images: %s, %.1f MiB); at most %d Gaussians\n",
            p->budget / 1048576.0, p->bytes_per_gaussian, p->rows.params, p->rows.grads, p->rows.optimizer,
            p->rows.densify, p->scratch_per_gaussian, p->fixed_bytes / 1048576.0, cs_residency_name(p->residency),
            p->image_bytes / 1048576.0, p->max_gaussians);
    fprintf(out, "images: %.1f MiB decoded; residency %s\n", p->image_bytes / 1048576.0, p->residency_why);
    if (p->cap)
        fprintf(out, "mcmc: %d Gaussians allocated at the start (%s), planned peak %.1f MiB\n", p->cap,
                p->cap == p->max_gaussians ? "what the budget holds" : "densify.cap_max", p->peak_bytes / 1048576.0);
}

json_t *cs_mem_plan_json(const cs_mem_plan *p)
{
    json_t *o = json_pack("{s:I,s:I,s:i,s:I}", "bytes_per_gaussian", (json_int_t)p->bytes_per_gaussian, "fixed_bytes",
                          (json_int_t)p->fixed_bytes, "max_gaussians", p->max_gaussians, "budget_bytes",
                          (json_int_t)p->budget);
    if (p->cap) {
        json_object_set_new(o, "mcmc_cap", json_integer(p->cap));
        json_object_set_new(o, "peak_bytes", json_integer((json_int_t)p->peak_bytes));
    }
    return o;
}
