/* bench: per-stage medians of a training iteration and a least-bytes bandwidth model. */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "layout.h"
#include "loss.h"
#include "model.h"
#include "pass.h"
#include "render.h"
#include "scene.h"
#include "tune.h"
#include "util.h"

/* Least bytes a stage must move (each input read once, each output written once): N Gaussians,
 * M pairs, P pixels. A model, not a counter: re-reads through caches and
 * atomics are not counted, so the percentage is an upper bound on how close a stage runs to
 * the copy ceiling. */
static double stage_bytes(int st, const cs_kernel_opts *o, double N, double M, double P)
{
    cs_row_bytes row = cs_model_row_bytes(&o->layout);
    double params = (double)row.params, grads = (double)row.grads, moments = (double)row.optimizer;
    double proj_out = CS_PROJ_BYTES - 4;   /* projection outputs but the pair offset */
    double v2d = CS_V2D_W * 4;
    double bin_n = 8 + 8 + 16;             /* bounds, xy, conic + opacity: read to count and to emit */
    double pair_in = 4 + 8 + 16 + 12;      /* value, xy, conic + opacity, rgb */
    double pix = 12 + 4 + 4;               /* image, final T, last contributor */
    switch (st) {
    case CS_STAGE_PROJECT: return N * (params + proj_out);
    case CS_STAGE_SORT:
        return N * (2 * bin_n + 4) + M * (8 + 8 + 4); /* emit writes key + value; the tile sort reads both, writes values */
    case CS_STAGE_RASTER_FWD: return M * pair_in + P * pix;
    case CS_STAGE_LOSS: return P * (12 + 3 + 12);
    case CS_STAGE_RASTER_BWD: return M * pair_in + P * pix + N * v2d;
    case CS_STAGE_PROJECT_BWD: return N * (params + v2d + 8 + grads);
    case CS_STAGE_ADAM: return N * (params * 2 + grads + moments * 2);
    case CS_STAGE_DENSIFY: return N * (4 + 8 + 24);
    default: return 0;
    }
}

/* Device-to-device copy bandwidth (GB/s) of devices it was measured on, else 0. */
static double copy_ceiling(const cs_cl *cl)
{
    return strstr(cl->name, "H100") ? 3000.0 : 0.0;
}

/* tile ranges must partition the pairs: their lengths sum to the pair count */
static void print_tile_stats(cs_cl *cl, const cs_renderer *r)
{
    size_t nt = (size_t)r->tiles_x * r->tiles_y;
    cl_uint *rg = malloc(nt * 8);
    if (rg && cs_buf_read(cl, &r->ranges, 0, nt * 8, rg) == 0) {
        unsigned long long sum = 0, mx = 0, nonempty = 0;
        for (size_t t = 0; t < nt; t++) {
            unsigned long long len = rg[2 * t + 1] >= rg[2 * t] ? rg[2 * t + 1] - rg[2 * t] : 0;
            sum += len, nonempty += len > 0, mx = len > mx ? len : mx;
        }
        printf("  tiles %zu (%llu non-empty), pairs per tile: mean %.1f, max %llu, sum %llu\n", nt, nonempty,
               nonempty ? (double)sum / nonempty : 0.0, mx, sum);
        unsigned split = cs_render_split(r, (unsigned)nt);
        if (split) printf("  forward: tiles of %u units (%u pairs each) or more unit by unit\n", split, r->chunk);
    }
    free(rg);
}

static void print_table(cs_cl *cl, const cs_kernel_opts *ko, const cs_renderer *r, const cs_camera *c, int n_gauss,
                        const double med[CS_STAGE_COUNT], double wall)
{
    double ceiling = copy_ceiling(cl);
    printf("  %-16s %12s  %11s  %12s", "stage", "median", "least bytes", "achieved");
    if (ceiling > 0) printf("  of %.1f TB/s (device copy)", ceiling / 1000.0);
    printf("\n");
    double sum = 0;
    for (int st = 0; st < CS_STAGE_COUNT; st++) {
        if (med[st] == 0) continue;
        sum += med[st];
        double gb = stage_bytes(st, ko, n_gauss, r->n_pairs, (double)c->width * c->height) / 1e9;
        double gbs = gb / (med[st] * 1e-3);
        printf("  %-16s %9.3f ms  %8.1f MB  %7.1f GB/s", cs_stage_names[st], med[st], gb * 1e3, gbs);
        if (ceiling > 0) printf("  %5.1f%%", 100.0 * gbs / ceiling);
        printf("\n");
    }
    printf("  %-16s %9.3f ms\n  %-16s %9.3f ms\n", "sum of stages", sum, "wall (host)", wall);
    if (sum < 1e-3 && wall > 0)
        printf("  (the device's profiling events report no kernel times, as Mesa 22.3's rusticl: only the wall time "
               "is measured)\n");
}

/* What each kernel costs the device besides its buffers: private (per work-item stack and
   spills, which a driver backs in device memory for every resident work-item) and local
   memory per work-group, as the OpenCL implementation reports them. */
static void print_kernel_resources(cs_cl *cl, const cs_kernels *k)
{
#define ROW(name, group, program) {k->name, #name},
    struct { cl_kernel kern; const char *name; } all[] = {CS_KERNEL_LIST(ROW)};
#undef ROW
    printf("  kernel resources (private bytes per work-item / local bytes per work-group):");
    int shown = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        cl_ulong priv = 0, loc = 0;
        if (!all[i].kern) continue; /* its program was not built */
        clGetKernelWorkGroupInfo(all[i].kern, cl->device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, NULL);
        clGetKernelWorkGroupInfo(all[i].kern, cl->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof loc, &loc, NULL);
        if (!priv && !loc) continue;
        printf("%s %s %llu/%llu", shown++ % 4 ? "," : "\n   ", all[i].name, (unsigned long long)priv,
               (unsigned long long)loc);
    }
    printf("\n");
}

/* Uploads camera C's image as 8-bit ground truth (RGB, or RGB and a weight). */
static int upload_gt(cs_cl *cl, const cs_scene *scene, const cs_camera *c, cs_buf *gt)
{
    cs_image img;
    if (cs_scene_read_image(scene, c, &img)) return -1;
    size_t bytes = (size_t)c->width * c->height * img.channels;
    int e = cs_buf_alloc(cl, gt, CS_MEM_IMAGES, bytes, "ground truth") || cs_buf_write(cl, gt, 0, bytes, img.px);
    cs_image_free(&img);
    return e ? -1 : 0;
}

int cs_bench(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, int view, int iters)
{
    if (view < 0 || view >= scene->n_cams)
        return cs_fail("--view %d: the dataset has views 0 to %d", view, scene->n_cams - 1);
    cs_kernel_opts ko;
    cs_kernel_opts_of(cfg, &ko);
    ko.programs = CS_PROGS_TRAIN; /* a training iteration's, no mesh or LPIPS */
    ko.layout.sh_degree = s->sh_degree; /* the PLY's */
    ko.layout.filter_3d = s->filter_3d != NULL;
    cs_kernels k;
    cs_tuning tun;
    if (cs_kernels_build_tuned(cl, &ko, cfg->device.tune, &k, &tun)) return -1;
    cs_tuning_report(&tun, stdout);
    cs_tuning_summary(&tun, stdout);
    print_kernel_resources(cl, &k);
    cs_model m;
    if (cs_model_create(cl, &m, s, &ko.layout, s->n)) {
        cs_kernels_release(&k);
        return -1;
    }
    cs_renderer r;
    cs_loss loss;
    cs_renderer_init(&r, cl, &k, (float)cfg->model.kernel_size);
    cs_loss_init(&loss, cl, &k);
    loss.gt_channels = cs_scene_gt_channels(scene);
    const cs_camera *c = &scene->cams[view];
    cs_view v;
    cs_view_from_camera(c, &v);
    cs_buf gt = {0};
    double med[CS_STAGE_COUNT], wall;
    int rc = upload_gt(cl, scene, c, &gt) ||
             cs_time_iterations(&r, &loss, &m, &v, s->sh_degree, scene->background, &gt, 0,
                                (float)cfg->optim.lambda_dssim, cfg->optim.sparse_adam, iters, med, &wall);
    if (!rc) {
        printf("bench: %s view %s (%dx%d), %d Gaussians, %u pairs, %d runs (medians)\n", cfg->data.path, c->name,
               c->width, c->height, s->n, r.n_pairs, iters);
        print_tile_stats(cl, &r);
        print_table(cl, &ko, &r, c, s->n, med, wall);
        cs_prof_print_kernels(cl, iters, "  by kernel (mean a pass):");
    }
    cs_buf_free(cl, &gt);
    cs_renderer_free(&r);
    cs_loss_free(&loss);
    cs_model_free(cl, &m);
    cs_kernels_release(&k);
    return rc ? -1 : 0;
}
