/* image_metrics: `clsplat metrics A B`: PSNR, SSIM and LPIPS of two image files (PNG or JPEG
 * of one size; RGBA composited over the configured background first), computed with the same
 * kernels as evaluation: the loss module's PSNR and SSIM, lpips.h's LPIPS. */
#ifndef CS_IMAGE_METRICS_H
#define CS_IMAGE_METRICS_H

#include <jansson.h>

#include "cl_runtime.h"
#include "config.h"

/* The metrics of A against B as {"psnr", "ssim", "lpips"} (lpips null, with a note on stderr,
 * without weights at the default location); with REPEAT > 0 also "lpips_ms", the median of
 * REPEAT timed LPIPS evaluations (host wall time, blocking). -1 with a message naming the file
 * for unreadable images or different sizes. */
int cs_image_metrics(cs_cl *cl, const cs_config *cfg, const char *a, const char *b, int repeat, json_t **out);

#endif
