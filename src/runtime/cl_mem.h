/* cl_mem: the accounting allocator. Every device buffer is created here, in a category
 * (cs_mem_cat); cl->mem keeps current and peak bytes per category and in total, a window
 * peak, and the budget beyond which an allocation fails with a message naming the buffer.
 * Reads and writes block until done; fills are enqueued and do not block. */
#ifndef CS_CL_MEM_H
#define CS_CL_MEM_H

#include "cl_runtime.h"

typedef struct {
    cl_mem mem;
    size_t bytes;
    cs_mem_cat cat;
} cs_buf;

/* Creates a buffer of BYTES (rounded up to 16, at least 16) in category CAT; WHAT names it
 * in errors. The buffer is zero-filled on the queue (this also forces the driver to commit
 * it, so an out-of-memory shows here and not in the hot loop); does not block. -1 with a
 * message naming WHAT, the category, the use and the budget when it does not fit. */
int cs_buf_alloc(cs_cl *cl, cs_buf *b, cs_mem_cat cat, size_t bytes, const char *what);
/* Releases B (no-op for an empty one) and takes its bytes off the counters. */
void cs_buf_free(cs_cl *cl, cs_buf *b);
/* Grows B to at least BYTES; with KEEP the old contents are copied (blocks for the copy).
 * No-op when big enough. */
int cs_buf_reserve(cs_cl *cl, cs_buf *b, size_t bytes, int keep, const char *what);
/* Resizes B to exactly BYTES (shrinking or growing), keeping the first min(old, new) bytes if
 * KEEP (blocks for the copy). A buffer first created here is in CS_MEM_SCRATCH unless b->cat
 * was set. */
int cs_buf_resize(cs_cl *cl, cs_buf *b, size_t bytes, int keep, const char *what);
/* Copies host bytes in; blocks until SRC may be reused. */
int cs_buf_write(cs_cl *cl, cs_buf *b, size_t offset, size_t bytes, const void *src);
/* Copies bytes out; blocks until DST holds them (after everything enqueued before). */
int cs_buf_read(cs_cl *cl, const cs_buf *b, size_t offset, size_t bytes, void *dst);
/* Enqueues a pattern fill; does not block. */
int cs_buf_fill(cs_cl *cl, cs_buf *b, size_t offset, size_t bytes, const void *pattern, size_t pattern_size);
/* Peaks (total, per category, window) back to the current use. */
void cs_mem_reset_peak(cs_cl *cl);
/* Starts a measurement window: window_peak = current total (the overall peaks stay). */
void cs_mem_window_start(cs_cl *cl);

#endif
