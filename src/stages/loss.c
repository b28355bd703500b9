/* loss: launchers for ssim_fwd / ssim_bwd / reduce_partials, and gt_downsample for the
 * resolution schedule. */
#include "loss.h"

#include <math.h>
#include <string.h>

#include "util.h"

void cs_loss_init(cs_loss *l, cs_cl *cl, const cs_kernels *k)
{
    memset(l, 0, sizeof *l);
    l->cl = cl;
    l->k = k;
    l->gt_channels = 3;
}

void cs_loss_trim(cs_loss *l)
{
    cs_buf_free(l->cl, &l->dmap3);
    cs_buf_free(l->cl, &l->partials);
    cs_buf_free(l->cl, &l->v_img);
    cs_buf_free(l->cl, &l->gt_small);
    if (l->exposure) cs_exposure_trim(l->exposure);
}

size_t cs_loss_metric_bytes_per_pixel(void)
{
    /* the partial sums: 16 bytes a 16x16 group of each of 3 channels, rounded up */
    return 1;
}

size_t cs_loss_bytes_per_pixel(void)
{
    /* and dmap3: 3 derivative maps of 3 channels, v_img: 3; a scaled ground truth (at most 4
       channels at a quarter of the pixels: one byte) */
    return cs_loss_metric_bytes_per_pixel() + (3 * 3 + 3) * sizeof(float) + 1;
}

int cs_loss_gt_scaled(cs_loss *l, cs_buf *gt, unsigned gt_off, int W, int H, int f, cs_buf **out)
{
    int w2 = W / f, h2 = H / f, C = l->gt_channels;
    if (f < 2 || w2 < 1 || h2 < 1) return cs_fail("ground truth of %dx%d scaled by 1/%d", W, H, f);
    if (cs_buf_reserve(l->cl, &l->gt_small, (size_t)w2 * h2 * C, 0, "scaled ground truth")) return -1;
    size_t g[2] = {(size_t)(w2 + 15) / 16 * 16, (size_t)(h2 + 15) / 16 * 16}, lc[2] = {16, 16};
    cl_uint off = gt_off;
    *out = &l->gt_small;
    return cs_cl_run(l->cl, l->k->gt_downsample, CS_STAGE_LOSS, 2, g, lc, CS_ARG(gt->mem), CS_ARG(off), CS_ARG(W),
                     CS_ARG(C), CS_ARG(f), CS_ARG(l->gt_small.mem), CS_ARG(w2), CS_ARG(h2));
}

void cs_loss_free(cs_loss *l)
{
    cs_loss_trim(l);
    cs_buf_free(l->cl, &l->sums);
}

static int run_forward(cs_loss *l, const cs_buf *img, const cs_buf *gt, unsigned gt_off, int W, int H, int clamp01,
                       int want_grad, float dL_dssim, int slot)
{
    cs_cl *cl = l->cl;
    const cs_kernels *k = l->k;
    size_t n3 = (size_t)3 * W * H;
    size_t g[3] = {(size_t)W, (size_t)H, 3}, lc[3] = {16, 16, 1};
    size_t groups = ((W + 15) / 16) * ((H + 15) / 16) * 3;
    if (cs_buf_reserve(cl, &l->partials, groups * 16, 0, "metric partial sums") ||
        cs_buf_reserve(cl, &l->sums, CS_LOSS_SLOTS * 16, 0, "metric sums"))
        return -1;
    if (want_grad && cs_buf_reserve(cl, &l->dmap3, n3 * 3 * 4, 0, "SSIM derivative maps")) return -1;
    if (slot < -1 || slot >= CS_LOSS_SLOTS || (slot < 0 && !want_grad))
        return cs_fail("internal: metric slot %d out of range", slot);
    cl_mem dm = want_grad ? l->dmap3.mem : l->partials.mem; /* not written without the gradient */
    unsigned ng = (unsigned)groups, us = (unsigned)slot;
    if (slot >= 0) l->slot_values[slot] = (double)n3;
    int ch = l->gt_channels;
    size_t one = 256;
    return cs_cl_run(cl, k->ssim_fwd, CS_STAGE_LOSS, 3, g, lc, CS_ARG(img->mem), CS_ARG(gt->mem), CS_ARG(gt_off),
                     CS_ARG(ch), CS_ARG(W), CS_ARG(H), CS_ARG(clamp01), CS_ARG(want_grad), CS_ARG(dL_dssim), CS_ARG(dm),
                     CS_ARG(l->partials.mem)) ||
           (slot >= 0 && cs_cl_run(cl, k->reduce_partials, CS_STAGE_LOSS, 1, &one, &one, CS_ARG(l->partials.mem), CS_ARG(ng),
                     CS_ARG(l->sums.mem), CS_ARG(us)));
}

int cs_loss_forward_backward(cs_loss *l, const cs_buf *img, const cs_buf *gt, unsigned gt_off, int W, int H, float lambda,
                             int slot)
{
    cs_cl *cl = l->cl;
    size_t n3 = (size_t)3 * W * H;
    float dL_dssim = -lambda / (float)n3, dL_dl1 = (1.f - lambda) / (float)n3;
    const cs_buf *render = img;
    if (l->exposure) { /* the loss sees the render under the view's exposure */
        if (cs_exposure_forward(l->exposure, render, W, H)) return -1;
        img = &l->exposure->out;
    }
    if (run_forward(l, img, gt, gt_off, W, H, 0, 1, dL_dssim, slot)) return -1;
    if (l->v_img.bytes < n3 * 4) {
        cs_buf_free(cl, &l->v_img);
        if (cs_buf_alloc(cl, &l->v_img, CS_MEM_SCRATCH, n3 * 4, "image gradient")) return -1;
    }
    size_t g[3] = {(size_t)W, (size_t)H, 3}, lc[3] = {16, 16, 1};
    return cs_cl_run(cl, l->k->ssim_bwd, CS_STAGE_LOSS, 3, g, lc, CS_ARG(l->dmap3.mem), CS_ARG(img->mem),
                     CS_ARG(gt->mem), CS_ARG(gt_off), CS_ARG(l->gt_channels), CS_ARG(W), CS_ARG(H), CS_ARG(dL_dl1),
                     CS_ARG(l->v_img.mem)) ||
           (l->exposure && cs_exposure_backward(l->exposure, render, &l->v_img, W, H));
}

int cs_loss_metrics(cs_loss *l, const cs_buf *img, const cs_buf *gt, unsigned gt_off, int W, int H, int slot)
{
    return run_forward(l, img, gt, gt_off, W, H, 1, 0, 0.f, slot);
}

int cs_loss_read(cs_loss *l, int slot, float lambda, cs_metrics *m, double *loss)
{
    float s[4];
    if (slot < 0 || slot >= CS_LOSS_SLOTS) return cs_fail("internal: metric slot %d out of range", slot);
    if (cs_buf_read(l->cl, &l->sums, (size_t)slot * 16, 16, s)) return -1;
    /* weighted ground truth: means over the pixels' weights (the unmasked pixels) */
    double n3 = l->gt_channels == 4 ? s[3] : l->slot_values[slot];
    if (!(n3 > 0)) n3 = 1; /* a fully masked image: every sum is 0 */
    m->l1 = s[0] / n3;
    m->mse = s[1] / n3;
    m->ssim = s[2] / n3;
    m->psnr = cs_psnr(m->mse);
    if (loss) *loss = (1.0 - lambda) * m->l1 + lambda * (1.0 - m->ssim);
    return 0;
}
