/* sort: device exclusive scan of uint arrays and radix sort of (uint key, uint value)
 * pairs over the low BITS bits, with scratch from the caller's pool. */
#ifndef CS_SORT_H
#define CS_SORT_H

#include "cl_mem.h"
#include "cl_runtime.h"
#include "kernels.h"
#include "layout.h"

typedef struct {
    cs_buf tmp;         /* scan block sums (all levels) */
    cs_buf hist;        /* radix histograms */
    cs_buf keys_alt, vals_alt;
} cs_sort_scratch;

/* block and pass constants: CS_SORT_* and CS_RADIX_* in cl/layout.h */

/* Enqueues an in-place exclusive scan of N uints (does not block). */
int cs_scan(cs_cl *cl, const cs_kernels *k, cs_sort_scratch *s, cs_buf *data, unsigned n, int stage);
/* Enqueues the sort of N pairs by the low BITS of the keys (does not block); result is in KEYS / VALS. With COUNT (a device
 * uint), only the first min(COUNT[0], N) pairs are sorted: N is then the buffers' capacity
 * and the host need not know the count. */
int cs_radix_sort(cs_cl *cl, const cs_kernels *k, cs_sort_scratch *s, cs_buf *keys, cs_buf *vals, unsigned n,
                  const cs_buf *count, int bits, int stage);
/* Allocates now the scratch that sorts of up to N pairs and scans of up to N values need. */
int cs_sort_reserve(cs_cl *cl, cs_sort_scratch *s, unsigned n);
/* Frees the scratch. */
void cs_sort_scratch_free(cs_cl *cl, cs_sort_scratch *s);

#endif
