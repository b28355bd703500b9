/* histo: histograms of per-Gaussian quantities of the model (CS_HISTO_* of cl/layout.h:
 * opacity, largest scale, SH-rest magnitude, densification gradient) computed on the device
 * into a small fixed partials buffer (accounted, CS_MEM_OTHER); only the partials are read. */
#ifndef CS_HISTO_H
#define CS_HISTO_H

#include "cl_mem.h"
#include "kernels.h"
#include "layout.h"
#include "model.h"

typedef struct {
    double min, max, sum, sum_squares;
    int n;                                  /* values counted: the model's Gaussians */
    int log_spaced;                         /* limits spaced evenly in log(value) */
    double limit[CS_HISTO_BUCKETS];         /* upper limit of each bucket */
    double count[CS_HISTO_BUCKETS];
} cs_histo;

extern const char *const cs_histo_names[CS_HISTO_COUNT]; /* "opacity", "scale_max", ... */

/* Histogram of quantity Q (CS_HISTO_*) over M's rows; STATS is the densification statistics
 * buffer (N, 3). PART is the caller's partials buffer, allocated here on first use. Blocks. */
int cs_histo_compute(cs_cl *cl, const cs_kernels *k, const cs_model *m, int q, cs_buf *part, cs_histo *out);

#endif
