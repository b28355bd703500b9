/* lpips: the LPIPS distance on the device (lpips.h). */
#include "lpips.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "layout.h"
#include "util.h"

/* AlexNet's five convolutions as LPIPS taps them: channels out, kernel, stride, padding, and
 * whether a 3x3/2 max-pool comes before it */
static const struct { int cout, k, stride, pad, pool_before; } CONV[5] = {
    {64, 11, 4, 2, 0}, {192, 5, 1, 2, 1}, {384, 3, 1, 1, 1}, {256, 3, 1, 1, 0}, {256, 3, 1, 1, 0}};
#define LIN_FLOATS (64 + 192 + 384 + 256 + 256)

/* float offsets of conv L's weight and bias and of lin L, in file order */
static void offsets(int wo[5], int bo[5], int lo[5])
{
    int at = 6, cin = 3;
    for (int l = 0; l < 5; l++) {
        wo[l] = at;
        at += CONV[l].cout * cin * CONV[l].k * CONV[l].k;
        bo[l] = at;
        at += CONV[l].cout;
        cin = CONV[l].cout;
    }
    for (int l = 0; l < 5; l++) {
        lo[l] = at;
        at += CONV[l].cout;
    }
}

/* the default weights path into BUF */
static void default_path(char *buf, size_t n)
{
    const char *x = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (x && *x) snprintf(buf, n, "%s/clsplat/lpips/alex_v0.1.f32.bin", x);
    else snprintf(buf, n, "%s/.local/share/clsplat/lpips/alex_v0.1.f32.bin", home ? home : ".");
}

const char *cs_lpips_weights_path(const char *configured, char *buf, size_t n)
{
    if (configured && *configured) return configured;
    default_path(buf, n);
    return cs_file_exists(buf) ? buf : NULL;
}

int cs_lpips_load(cs_lpips *lp, cs_cl *cl, const cs_kernels *k, const char *path)
{
    memset(lp, 0, sizeof *lp);
    lp->cl = cl, lp->k = k, lp->gt_channels = 3;
    /* CLSPLAT_LPIPS_CONV=tiled|direct overrides the choice (tests and measurements) */
    const char *v = getenv("CLSPLAT_LPIPS_CONV");
    /* direct on CPUs, but not where loops stop early (its work-items loop over every input
       channel and tap) */
    lp->direct = v && *v ? !strcmp(v, "direct") : cl->is_cpu && !cl->loop_limited;
    snprintf(lp->path, sizeof lp->path, "%s", path);
    size_t n;
    char *d = cs_read_file(path, &n);
    if (!d) return cs_fail_prefix("LPIPS weights");
    if (n != CS_LPIPS_WEIGHT_BYTES) {
        free(d);
        return cs_fail("%s: %zu bytes; LPIPS-alex v0.1 weights are %u bytes of float32 (make them with "
                       "tools/get-lpips-weights.sh)", path, n, CS_LPIPS_WEIGHT_BYTES);
    }
    lp->host = (float *)d; /* little-endian float32: this host's order on every target */
    for (size_t i = 0; i < n / 4; i++)
        if (!isfinite(lp->host[i])) {
            cs_lpips_free(lp);
            return cs_fail("%s: value %zu is not finite: not an LPIPS weights file", path, i);
        }
    int wo[5], bo[5], lo[5];
    offsets(wo, bo, lo);
    if ((size_t)(lo[4] + CONV[4].cout) * 4 != n) {
        cs_lpips_free(lp);
        return cs_fail("LPIPS layer table does not match the file size");
    }
    return 0;
}

/* a side after the 3x3 stride-2 pool (no padding; N >= 3) and after conv L (when
   N + 2 pad >= k) */
static int pool_side(int n) { return (n - 3) / 2 + 1; }
static int conv_side(int n, int l) { return (n + 2 * CONV[l].pad - CONV[l].k) / CONV[l].stride + 1; }

/* One side through the network: the pool needs at least 3 inputs and each convolution at
 * least one output; -1 when the side is too small for some stage, else the side after conv L
 * (L = 0..4) into SIDES. */
static int sides_of(int n, int sides[5])
{
    for (int l = 0; l < 5; l++) {
        if (CONV[l].pool_before) {
            if (n < 3) return -1;
            n = pool_side(n);
        }
        if (n + 2 * CONV[l].pad < CONV[l].k) return -1;
        n = sides[l] = conv_side(n, l);
    }
    return 0;
}

int cs_lpips_fits(int w, int h)
{
    int sw[5], sh[5];
    return sides_of(w, sw) == 0 && sides_of(h, sh) == 0;
}

/* activation floats a W x H image needs at its largest stage (W x H fits) */
static size_t act_floats(int w, int h)
{
    int sw[5], sh[5];
    sides_of(w, sw), sides_of(h, sh);
    size_t most = (size_t)3 * w * h;
    for (int l = 0; l < 5; l++) {
        size_t a = (size_t)CONV[l].cout * sw[l] * sh[l];
        if (a > most) most = a;
    }
    return most;
}

static size_t round16(size_t b) { return (b + 15) / 16 * 16; }

/* partial sums of the five taps: at most one group per CS_LPIPS_WG positions of each, and
   no tap has more positions than the image has pixels */
static size_t partial_floats(int w, int h) { return 5 * (((size_t)w * h + CS_LPIPS_WG - 1) / CS_LPIPS_WG + 1); }

size_t cs_lpips_bytes(int w, int h)
{
    size_t parts = partial_floats(w, h);
    return round16(CS_LPIPS_WEIGHT_BYTES) + 4 * round16(act_floats(w, h) * sizeof(float)) + round16(parts * sizeof(float));
}

int cs_lpips_begin(cs_lpips *lp, int w, int h)
{
    if (!cs_lpips_fits(w, h))
        return cs_fail("LPIPS needs images of at least %dx%d pixels (AlexNet's pooling); this one is %dx%d",
                       CS_LPIPS_MIN_SIDE, CS_LPIPS_MIN_SIDE, w, h);
    if (!lp->weights.mem && (cs_buf_alloc(lp->cl, &lp->weights, CS_MEM_EVAL, CS_LPIPS_WEIGHT_BYTES, "LPIPS weights") ||
                             cs_buf_write(lp->cl, &lp->weights, 0, CS_LPIPS_WEIGHT_BYTES, lp->host)))
        return -1;
    if (lp->act[0].mem && w * (size_t)h <= lp->w * (size_t)lp->h && w <= lp->w && h <= lp->h) return 0;
    size_t bytes = act_floats(w, h) * sizeof(float), parts = partial_floats(w, h);
    for (int i = 0; i < 4; i++) {
        lp->act[i].cat = CS_MEM_EVAL;
        if (cs_buf_resize(lp->cl, &lp->act[i], bytes, 0, "LPIPS activations")) return -1;
    }
    lp->partial.cat = CS_MEM_EVAL;
    if (cs_buf_resize(lp->cl, &lp->partial, parts * sizeof(float), 0, "LPIPS partial sums")) return -1;
    lp->w = w, lp->h = h;
    return 0;
}

int cs_lpips_conv(cs_cl *cl, const cs_kernels *k, int direct, const cs_buf *in, int cin, int h, int w,
                  const cs_buf *wts, int w_off, int b_off, int cout, int ksize, int stride, int pad, cs_buf *out, int ho,
                  int wo)
{
    size_t n = (size_t)ho * wo;
    if (direct) {
        size_t g[3] = {((size_t)wo + 7) / 8, (size_t)ho, ((size_t)cout + CS_LPIPS_CPB - 1) / CS_LPIPS_CPB},
               l[3] = {1, 1, 1};
        return cs_cl_run(cl, k->lpips_conv_direct, -1, 3, g, l, CS_ARG(in->mem), CS_ARG(cin), CS_ARG(h), CS_ARG(w),
                         CS_ARG(wts->mem), CS_ARG(w_off), CS_ARG(b_off), CS_ARG(cout), CS_ARG(ksize), CS_ARG(ksize),
                         CS_ARG(stride), CS_ARG(pad), CS_ARG(out->mem), CS_ARG(ho), CS_ARG(wo));
    }
    size_t g[2] = {(n + CS_LPIPS_TN - 1) / CS_LPIPS_TN * 16, ((size_t)cout + CS_LPIPS_TM - 1) / CS_LPIPS_TM * 16},
           l[2] = {16, 16};
    return cs_cl_run(cl, k->lpips_conv, -1, 2, g, l, CS_ARG(in->mem), CS_ARG(cin), CS_ARG(h), CS_ARG(w),
                     CS_ARG(wts->mem), CS_ARG(w_off), CS_ARG(b_off), CS_ARG(cout), CS_ARG(ksize), CS_ARG(ksize),
                     CS_ARG(stride), CS_ARG(pad), CS_ARG(out->mem), CS_ARG(ho), CS_ARG(wo));
}

/* conv L of image I (activations in act[2I], output to act[2I+1] or the reverse), with the
 * pool before it; *C, *H, *W the shape in and out; *IN_X: which buffer holds the input */
static int layer(cs_lpips *lp, int l, int img, int *c, int *h, int *w, int *in_x)
{
    const cs_kernels *k = lp->k;
    cs_buf *x = &lp->act[2 * img + (*in_x ? 0 : 1)], *y = &lp->act[2 * img + (*in_x ? 1 : 0)];
    int wo[5], bo[5], lo[5];
    offsets(wo, bo, lo);
    if (CONV[l].pool_before) { /* the pooled map goes to the other buffer, then conv back */
        int ho = pool_side(*h), wd = pool_side(*w);
        size_t g = (size_t)*c * ho * wd, lsz = 256;
        if (cs_cl_run(lp->cl, k->lpips_maxpool, -1, 1, &g, &lsz, CS_ARG(x->mem), CS_ARG(*c), CS_ARG(*h), CS_ARG(*w),
                      CS_ARG(y->mem), CS_ARG(ho), CS_ARG(wd)))
            return -1;
        *h = ho, *w = wd;
        cs_buf *t = x;
        x = y, y = t;
        *in_x = !*in_x;
    }
    int ho = conv_side(*h, l), wd = conv_side(*w, l);
    if (cs_lpips_conv(lp->cl, k, lp->direct, x, *c, *h, *w, &lp->weights, wo[l], bo[l], CONV[l].cout, CONV[l].k,
                      CONV[l].stride, CONV[l].pad, y, ho, wd))
        return -1;
    *c = CONV[l].cout, *h = ho, *w = wd;
    *in_x = !*in_x; /* the output is the next input */
    return 0;
}

/* the five layers on the prepared inputs in act[0] and act[2]; one read of the partials */
static int network(cs_lpips *lp, int w, int h, double *out)
{
    int shape[2][3] = {{3, h, w}, {3, h, w}}, in_x[2] = {1, 1}, wo[5], bo[5], lo[5], first[6] = {0}, n[5];
    offsets(wo, bo, lo);
    for (int l = 0; l < 5; l++) {
        for (int i = 0; i < 2; i++)
            if (layer(lp, l, i, &shape[i][0], &shape[i][1], &shape[i][2], &in_x[i])) return -1;
        /* the taps: the buffer each image's output went to */
        cs_buf *a = &lp->act[in_x[0] ? 0 : 1], *b = &lp->act[2 + (in_x[1] ? 0 : 1)];
        int c = shape[0][0];
        n[l] = shape[0][1] * shape[0][2];
        size_t g = ((size_t)n[l] + CS_LPIPS_WG - 1) / CS_LPIPS_WG * CS_LPIPS_WG, lsz = CS_LPIPS_WG;
        first[l + 1] = first[l] + (int)(g / CS_LPIPS_WG);
        if (cs_cl_run(lp->cl, lp->k->lpips_distance, -1, 1, &g, &lsz, CS_ARG(a->mem), CS_ARG(b->mem), CS_ARG(c),
                      CS_ARG(n[l]), CS_ARG(lp->weights.mem), CS_ARG(lo[l]), CS_ARG(lp->partial.mem), CS_ARG(first[l])))
            return -1;
    }
    float *pp = malloc(sizeof(float) * first[5]);
    if (!pp) return cs_fail("out of host memory (LPIPS)");
    int rc = cs_buf_read(lp->cl, &lp->partial, 0, sizeof(float) * first[5], pp);
    double total = 0;
    for (int l = 0; !rc && l < 5; l++) {
        double s = 0;
        for (int i = first[l]; i < first[l + 1]; i++) s += pp[i];
        total += s / n[l];
    }
    free(pp);
    *out = total;
    return rc;
}

int cs_lpips_render(cs_lpips *lp, const cs_buf *render, const cs_buf *b, unsigned b_off, int w, int h, double *out)
{
    if (cs_lpips_begin(lp, w, h)) return -1;
    int n = w * h;
    size_t g = (size_t)n, l = 256;
    int ch = lp->gt_channels;
    if (cs_cl_run(lp->cl, lp->k->lpips_prep_f32, -1, 1, &g, &l, CS_ARG(render->mem), CS_ARG(n), CS_ARG(b->mem),
                  CS_ARG(b_off), CS_ARG(ch), CS_ARG(lp->weights.mem), CS_ARG(lp->act[0].mem)) ||
        cs_cl_run(lp->cl, lp->k->lpips_prep_u8, -1, 1, &g, &l, CS_ARG(b->mem), CS_ARG(b_off), CS_ARG(ch), CS_ARG(n),
                  CS_ARG(lp->weights.mem), CS_ARG(lp->act[2].mem)))
        return -1;
    return network(lp, w, h, out);
}

int cs_lpips_u8(cs_lpips *lp, const cs_buf *a, unsigned a_off, const cs_buf *b, unsigned b_off, int w, int h,
                double *out)
{
    if (cs_lpips_begin(lp, w, h)) return -1;
    int n = w * h;
    size_t g = (size_t)n, l = 256;
    int ch = 3;
    if (cs_cl_run(lp->cl, lp->k->lpips_prep_u8, -1, 1, &g, &l, CS_ARG(a->mem), CS_ARG(a_off), CS_ARG(ch), CS_ARG(n),
                  CS_ARG(lp->weights.mem), CS_ARG(lp->act[0].mem)) ||
        cs_cl_run(lp->cl, lp->k->lpips_prep_u8, -1, 1, &g, &l, CS_ARG(b->mem), CS_ARG(b_off), CS_ARG(ch), CS_ARG(n),
                  CS_ARG(lp->weights.mem), CS_ARG(lp->act[2].mem)))
        return -1;
    return network(lp, w, h, out);
}

void cs_lpips_end(cs_lpips *lp)
{
    if (!lp->cl) return;
    for (int i = 0; i < 4; i++) cs_buf_free(lp->cl, &lp->act[i]);
    cs_buf_free(lp->cl, &lp->partial);
    cs_buf_free(lp->cl, &lp->weights);
    lp->w = lp->h = 0;
}

void cs_lpips_free(cs_lpips *lp)
{
    cs_lpips_end(lp);
    free(lp->host);
    lp->host = NULL;
}
