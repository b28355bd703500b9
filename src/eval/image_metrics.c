/* image_metrics: PSNR, SSIM and LPIPS of two image files (image_metrics.h). */
#include "image_metrics.h"

#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "kernels.h"
#include "loss.h"
#include "lpips.h"
#include "render.h"
#include "util.h"

/* both images, composited over BG, of one size */
static int load_pair(const char *pa, const char *pb, const float bg[3], cs_image *a, cs_image *b)
{
    memset(a, 0, sizeof *a), memset(b, 0, sizeof *b);
    if (cs_image_load(pa, a) || cs_image_composite(a, bg)) return -1;
    if (cs_image_load(pb, b) || cs_image_composite(b, bg)) {
        cs_image_free(a);
        return -1;
    }
    if (a->width == b->width && a->height == b->height) return 0;
    cs_fail("%s is %dx%d and %s is %dx%d: metrics compare images of one size", pa, a->width, a->height, pb, b->width,
            b->height);
    cs_image_free(a), cs_image_free(b);
    return -1;
}

/* A as the "render" (planar float in [0, 1]) and B as the 8-bit ground truth, on the device */
static int upload(cs_cl *cl, const cs_image *a, const cs_image *b, cs_renderer *r, cs_buf *gt)
{
    size_t n = (size_t)a->width * a->height;
    float *f = malloc(sizeof(float) * 3 * n);
    if (!f) return cs_fail("out of host memory (%zu pixels)", n);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++) f[c * n + i] = a->px[i * 3 + c] / 255.f;
    int rc = cs_buf_alloc(cl, &r->img, CS_MEM_SCRATCH, sizeof(float) * 3 * n, "image A") ||
             cs_buf_write(cl, &r->img, 0, sizeof(float) * 3 * n, f) ||
             cs_buf_alloc(cl, gt, CS_MEM_IMAGES, 3 * n, "image B") || cs_buf_write(cl, gt, 0, 3 * n, b->px);
    free(f);
    return rc;
}

/* LPIPS of the pair, timed REPEAT times after it when asked */
static int lpips_of(cs_cl *cl, const cs_kernels *k, const char *weights, cs_renderer *r, cs_buf *gt, int w, int h,
                    int repeat, json_t *o)
{
    char def[1024];
    const char *p = cs_lpips_weights_path(weights, def, sizeof def);
    if (!p) {
        fprintf(stderr, "note: LPIPS is off: no weights at %s (tools/get-lpips-weights.sh makes them, or pass --set "
                        "eval.lpips_weights=FILE)\n", def);
        json_object_set_new(o, "lpips", json_null());
        return 0;
    }
    if (!cs_lpips_fits(w, h)) {
        fprintf(stderr, "note: LPIPS needs images of at least %dx%d pixels; these are %dx%d\n", CS_LPIPS_MIN_SIDE,
                CS_LPIPS_MIN_SIDE, w, h);
        json_object_set_new(o, "lpips", json_null());
        return 0;
    }
    cs_lpips lp;
    double v = 0;
    int rc = cs_lpips_load(&lp, cl, k, p) || cs_lpips_render(&lp, &r->img, gt, 0, w, h, &v);
    double *ms = repeat > 0 && !rc ? malloc(sizeof(double) * repeat) : NULL;
    for (int i = 0; ms && !rc && i < repeat; i++) {
        double t0 = cs_now(), x;
        rc = cs_lpips_render(&lp, &r->img, gt, 0, w, h, &x);
        ms[i] = (cs_now() - t0) * 1e3;
    }
    if (!rc) json_object_set_new(o, "lpips", json_real(v));
    if (ms && !rc) json_object_set_new(o, "lpips_ms", json_real(cs_median(ms, repeat)));
    free(ms);
    cs_lpips_free(&lp);
    return rc;
}

int cs_image_metrics(cs_cl *cl, const cs_config *cfg, const char *pa, const char *pb, int repeat, json_t **out)
{
    float bg[3]; /* "border" has no photos here: black, as "" */
    cs_image a, b;
    if (cs_config_background(&cfg->data, bg) < 0 || load_pair(pa, pb, bg, &a, &b)) return -1;
    int w = a.width, h = a.height;
    cs_kernel_opts ko;
    cs_kernel_opts_of(cfg, &ko);
    ko.programs = CS_PROGS(loss) | CS_PROGS(lpips); /* two images: no renderer, no trainer */
    cs_kernels k;
    cs_renderer r;
    cs_loss loss;
    cs_buf gt = {0};
    int rc = cs_kernels_build(cl, &ko, &k);
    if (rc) {
        cs_image_free(&a), cs_image_free(&b);
        return -1;
    }
    cs_renderer_init(&r, cl, &k, 0.f);
    cs_loss_init(&loss, cl, &k);
    cs_metrics mt;
    json_t *o = json_object();
    rc = upload(cl, &a, &b, &r, &gt) || cs_loss_metrics(&loss, &r.img, &gt, 0, w, h, 0) ||
         cs_loss_read(&loss, 0, 0.f, &mt, NULL);
    if (!rc) {
        json_object_set_new(o, "psnr", json_real(mt.psnr));
        json_object_set_new(o, "ssim", json_real(mt.ssim));
        rc = lpips_of(cl, &k, cfg->eval.lpips_weights, &r, &gt, w, h, repeat, o);
    }
    cs_buf_free(cl, &gt);
    cs_loss_free(&loss);
    cs_renderer_free(&r);
    cs_kernels_release(&k);
    cs_image_free(&a), cs_image_free(&b);
    if (rc) json_decref(o);
    else *out = o;
    return rc;
}
