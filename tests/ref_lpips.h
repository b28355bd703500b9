/* ref_lpips: a double-precision CPU reference of LPIPS-alex v0.1 (the network of lpips.h),
 * written from the definition in ../shared/lpips/README.md, independent of cl/lpips.cl. */
#ifndef CS_REF_LPIPS_H
#define CS_REF_LPIPS_H

#include <stdint.h>

/* out (cout, ho, wo) = relu(bias + conv(in (cin, h, w))), torch OIHW weights. */
void ref_conv_relu(const double *in, int cin, int h, int w, const float *wt, const float *bias, int cout, int k,
                   int stride, int pad, double *out, int *ho, int *wo);
/* LPIPS of two 8-bit interleaved RGB W x H images with the weights file's floats WTS. */
double ref_lpips(const float *wts, const uint8_t *a, const uint8_t *b, int w, int h);

#endif
