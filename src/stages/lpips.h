/* lpips: the LPIPS image distance (Zhang et al. 2018; AlexNet features with the v0.1 lin
 * layers, the variant gsplat reports) on the device, fp32 throughout (cl/lpips.cl).
 *
 * Weights: one file of little-endian float32 tensors in torch layout, concatenated without a
 * header (CS_LPIPS_WEIGHT_BYTES): scaling shift (3), scale (3), then conv1..conv5 weight and
 * bias, then lin0..lin4 (no bias). eval.lpips_weights names it, else
 * $XDG_DATA_HOME/clsplat/lpips/alex_v0.1.f32.bin (~/.local/share/... without XDG_DATA_HOME);
 * tools/get-lpips-weights.sh makes it from the published torch files.
 *
 * Memory (CS_MEM_EVAL): the weights (9.4 MiB) and two activation buffers per image of a pair,
 * sized for the largest image, plus the per-group partials; held only while an evaluation
 * runs (cs_lpips_begin .. cs_lpips_end).
 *
 * Convolutions: a tiled implicit GEMM in local memory on GPUs; on CPU devices a direct kernel
 * vectorised over output positions (CLSPLAT_LPIPS_CONV=tiled|direct overrides). */
#ifndef CS_LPIPS_H
#define CS_LPIPS_H

#include <stddef.h>

#include "cl_mem.h"
#include "kernels.h"

#define CS_LPIPS_WEIGHT_BYTES 9883416u
/* The smallest side the network takes: below it a pooling layer has fewer than 3 inputs (the
 * reference implementation refuses such images too). */
#define CS_LPIPS_MIN_SIDE 31

typedef struct {
    cs_cl *cl;
    const cs_kernels *k;
    float *host;             /* the weights, read once */
    cs_buf weights, act[4], partial;
    int w, h;                /* the scratch is sized for this image */
    int direct;              /* convolutions by lpips_conv_direct (CPUs), else the tiled GEMM */
    int gt_channels;         /* cs_lpips_render's ground truth: 3 (RGB, the default) or 4 (RGB, weight) */
    char path[1024];
} cs_lpips;

/* True when W x H images go through every layer (both sides >= CS_LPIPS_MIN_SIDE). */
int cs_lpips_fits(int w, int h);
/* Device bytes LPIPS holds while evaluating W x H images (weights, activations, partials). */
size_t cs_lpips_bytes(int w, int h);
/* The weights file to read: CONFIGURED (eval.lpips_weights) when not empty, else the default
 * path above (written into BUF) when that file exists; NULL when it does not (LPIPS is off). */
const char *cs_lpips_weights_path(const char *configured, char *buf, size_t n);
/* Reads the weights at PATH (checked: size, finite values). -1 with a message naming the file. */
int cs_lpips_load(cs_lpips *lp, cs_cl *cl, const cs_kernels *k, const char *path);
/* Uploads the weights and sizes the scratch for W x H images (blocks); -1 with a message for
 * images too small for the network. */
int cs_lpips_begin(cs_lpips *lp, int w, int h);
/* LPIPS of a render (planar float (3, H, W) in [0, 1], clamped) against an 8-bit image of
 * lp->gt_channels at byte offset B_OFF of B (with a weight, the render is blended towards it
 * where the weight is below 1, as the loss does); blocks. */
int cs_lpips_render(cs_lpips *lp, const cs_buf *render, const cs_buf *b, unsigned b_off, int w, int h, double *out);
/* LPIPS of two 8-bit RGB images on the device; blocks. */
int cs_lpips_u8(cs_lpips *lp, const cs_buf *a, unsigned a_off, const cs_buf *b, unsigned b_off, int w, int h,
                double *out);
/* Enqueues relu(bias + conv) of IN (CIN, H, W) into OUT (COUT, HO, WO) with the OIHW weights
 * at float W_OFF of WTS and the bias at B_OFF: the tiled GEMM, or with DIRECT the CPU kernel. */
int cs_lpips_conv(cs_cl *cl, const cs_kernels *k, int direct, const cs_buf *in, int cin, int h, int w,
                  const cs_buf *wts, int w_off, int b_off, int cout, int ksize, int stride, int pad, cs_buf *out, int ho,
                  int wo);
/* Frees the device weights and scratch (the host copy stays). */
void cs_lpips_end(cs_lpips *lp);
/* Frees everything. */
void cs_lpips_free(cs_lpips *lp);

#endif
