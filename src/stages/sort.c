/* sort: host launchers for scan_block / scan_add and radix_count / scan / radix_scatter. */
#include "sort.h"

#include "util.h"

/* Scans N values at DATA + OFF; this level's block sums go to TMP + SUMS_OFF and are
 * themselves scanned recursively after them. */
static int scan_level(cs_cl *cl, const cs_kernels *k, cs_buf *tmp, cl_mem data, unsigned off, unsigned n,
                      unsigned sums_off, int stage)
{
    unsigned nb = (n + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
    size_t g = (size_t)nb * CS_SORT_WG, l = CS_SORT_WG;
    if (n <= CS_SCAN_SINGLE_MAX) /* launches cost more than the work here */
        return cs_cl_run(cl, k->scan_single, stage, 1, &l, &l, CS_ARG(data), CS_ARG(off), CS_ARG(n));
    if (cs_cl_run(cl, k->scan_block, stage, 1, &g, &l, CS_ARG(data), CS_ARG(off), CS_ARG(n), CS_ARG(tmp->mem),
                  CS_ARG(sums_off)))
        return -1;
    if (nb == 1) return 0;
    if (scan_level(cl, k, tmp, tmp->mem, sums_off, nb, sums_off + nb, stage)) return -1;
    size_t g2 = n;
    return cs_cl_run(cl, k->scan_add, stage, 1, &g2, &l, CS_ARG(data), CS_ARG(off), CS_ARG(n), CS_ARG(tmp->mem),
                     CS_ARG(sums_off));
}

/* the scan of N values' block sums, every level one after the other */
static int reserve_scan(cs_cl *cl, cs_sort_scratch *s, unsigned n)
{
    size_t need = 1;
    for (unsigned m = n;;) {
        unsigned nb = (m + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
        need += nb;
        if (nb == 1) break;
        m = nb;
    }
    return cs_buf_reserve(cl, &s->tmp, need * 4, 0, "scan block sums");
}

/* a sort of N pairs' histograms and second key and value arrays */
static int reserve_sort(cs_cl *cl, cs_sort_scratch *s, unsigned n)
{
    unsigned nb = (n + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
    return cs_buf_reserve(cl, &s->hist, (size_t)nb * CS_RADIX_BUCKETS * 4, 0, "radix histogram") ||
           cs_buf_reserve(cl, &s->keys_alt, (size_t)n * 4, 0, "sort keys (alt)") ||
           cs_buf_reserve(cl, &s->vals_alt, (size_t)n * 4, 0, "sort values (alt)");
}

int cs_sort_reserve(cs_cl *cl, cs_sort_scratch *s, unsigned n)
{
    unsigned nb = (n + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
    unsigned scanned = nb * CS_RADIX_BUCKETS > n ? nb * CS_RADIX_BUCKETS : n;
    return n > 1 && (reserve_sort(cl, s, n) || reserve_scan(cl, s, scanned)) ? -1 : 0;
}

int cs_scan(cs_cl *cl, const cs_kernels *k, cs_sort_scratch *s, cs_buf *data, unsigned n, int stage)
{
    if (n == 0) return 0;
    if (reserve_scan(cl, s, n)) return -1;
    return scan_level(cl, k, &s->tmp, data->mem, 0, n, 0, stage);
}

int cs_radix_sort(cs_cl *cl, const cs_kernels *k, cs_sort_scratch *s, cs_buf *keys, cs_buf *vals, unsigned n,
                  const cs_buf *count, int bits, int stage)
{
    /* without a device count the kernels ignore the count argument: any buffer will do */
    int use_count = count != NULL;
    cl_mem cnt = count ? count->mem : keys->mem;
    if (n <= 1) return 0;
    unsigned nb = (n + CS_SORT_BLOCK - 1) / CS_SORT_BLOCK;
    if (reserve_sort(cl, s, n)) return -1;
    int passes = (bits + CS_RADIX_BITS - 1) / CS_RADIX_BITS;
    cs_buf *ki = keys, *vi = vals, *ko = &s->keys_alt, *vo = &s->vals_alt;
    size_t g = (size_t)nb * CS_SORT_WG, l = CS_SORT_WG;
    for (int p = 0; p < passes; p++) {
        unsigned shift = (unsigned)(p * CS_RADIX_BITS);
        if (cs_cl_run(cl, k->radix_count, stage, 1, &g, &l, CS_ARG(ki->mem), CS_ARG(n), CS_ARG(cnt), CS_ARG(use_count),
                      CS_ARG(shift), CS_ARG(s->hist.mem)) ||
            cs_scan(cl, k, s, &s->hist, nb * CS_RADIX_BUCKETS, stage) ||
            cs_cl_run(cl, k->radix_scatter, stage, 1, &g, &l, CS_ARG(ki->mem), CS_ARG(vi->mem), CS_ARG(ko->mem),
                      CS_ARG(vo->mem), CS_ARG(n), CS_ARG(cnt), CS_ARG(use_count), CS_ARG(shift),
                      CS_ARG(s->hist.mem)))
            return -1;
        cs_buf *t = ki; ki = ko; ko = t;
        t = vi; vi = vo; vo = t;
    }
    if (ki != keys) {
        /* odd number of passes: swap the buffers themselves (no copy) */
        cs_buf t = *keys; *keys = s->keys_alt; s->keys_alt = t;
        t = *vals; *vals = s->vals_alt; s->vals_alt = t;
    }
    return 0;
}

void cs_sort_scratch_free(cs_cl *cl, cs_sort_scratch *s)
{
    cs_buf_free(cl, &s->tmp);
    cs_buf_free(cl, &s->hist);
    cs_buf_free(cl, &s->keys_alt);
    cs_buf_free(cl, &s->vals_alt);
}
