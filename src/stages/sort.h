/* sort: device exclusive scan of uint arrays, with scratch from the caller's pool (the pairs'
 * per-tile sort is bin.cl's, launched by render.c). */
#ifndef CS_SORT_H
#define CS_SORT_H

#include "cl_mem.h"
#include "cl_runtime.h"
#include "kernels.h"
#include "layout.h"

typedef struct {
    cs_buf tmp; /* scan block sums (all levels) */
} cs_sort_scratch;

/* block constants: CS_SORT_* in cl/layout.h */

/* Enqueues an in-place exclusive scan of N uints (does not block). */
int cs_scan(cs_cl *cl, const cs_kernels *k, cs_sort_scratch *s, cs_buf *data, unsigned n, int stage);
/* Allocates now the scratch that scans of up to N values need. */
int cs_sort_reserve(cs_cl *cl, cs_sort_scratch *s, unsigned n);
/* Frees the scratch. */
void cs_sort_scratch_free(cs_cl *cl, cs_sort_scratch *s);

#endif
