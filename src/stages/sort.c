/* sort: host launchers for scan_block / scan_single / scan_add. */
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

int cs_sort_reserve(cs_cl *cl, cs_sort_scratch *s, unsigned n)
{
    return n > 1 ? reserve_scan(cl, s, n) : 0;
}

int cs_scan(cs_cl *cl, const cs_kernels *k, cs_sort_scratch *s, cs_buf *data, unsigned n, int stage)
{
    if (n == 0) return 0;
    if (reserve_scan(cl, s, n)) return -1;
    return scan_level(cl, k, &s->tmp, data->mem, 0, n, 0, stage);
}

void cs_sort_scratch_free(cs_cl *cl, cs_sort_scratch *s)
{
    cs_buf_free(cl, &s->tmp);
}
