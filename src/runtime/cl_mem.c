/* cl_mem: the accounting allocator: every device buffer, its category, current and peak
 * bytes, the budget. */
#include "cl_mem.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *const cs_mem_cat_names[CS_MEM_NCAT] = {"params", "optimizer", "grads", "densify",
                                                   "images", "scratch", "eval", "other"};

static void account(cs_cl *cl, cs_mem_cat cat, size_t bytes, int add)
{
    cs_mem_stats *m = &cl->mem;
    if (add) {
        m->cur[cat] += bytes;
        m->cur_total += bytes;
        if (m->cur[cat] > m->peak[cat]) m->peak[cat] = m->cur[cat];
        if (m->cur_total > m->peak_total) m->peak_total = m->cur_total;
        if (m->cur_total > m->window_peak) m->window_peak = m->cur_total;
    } else {
        m->cur[cat] -= bytes;
        m->cur_total -= bytes;
    }
}

static int oom(cs_cl *cl, cs_mem_cat cat, size_t bytes, const char *what, const char *why)
{
    return cs_fail("out of device memory: %s (%s) needs %.1f MiB more; %.1f MiB in use (%s %.1f MiB), budget %.1f MiB, "
                   "device %s has %.0f MiB%s%s",
                   what, cs_mem_cat_names[cat], bytes / 1048576.0, cl->mem.cur_total / 1048576.0, cs_mem_cat_names[cat],
                   cl->mem.cur[cat] / 1048576.0,
                   cl->mem.budget == (size_t)-1 ? cl->global_mem / 1048576.0 : cl->mem.budget / 1048576.0, cl->name,
                   cl->global_mem / 1048576.0, why ? ": " : "", why ? why : "");
}

int cs_buf_alloc(cs_cl *cl, cs_buf *b, cs_mem_cat cat, size_t bytes, const char *what)
{
    memset(b, 0, sizeof *b);
    if (bytes < 4) bytes = 4;
    bytes = (bytes + 15) & ~(size_t)15;
    if (cl->mem.budget != (size_t)-1 && cl->mem.cur_total + bytes > cl->mem.budget)
        return oom(cl, cat, bytes, what, "over memory.vram_budget_mb");
    if (bytes > cl->max_alloc) {
        char why[128];
        snprintf(why, sizeof why, "larger than the device's max allocation (%.0f MiB)", cl->max_alloc / 1048576.0);
        return oom(cl, cat, bytes, what, why);
    }
    cl_int err;
    b->mem = clCreateBuffer(cl->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!b->mem) return oom(cl, cat, bytes, what, cs_cl_strerror(err));
    cl_uint zero = 0;
    err = clEnqueueFillBuffer(cl->queue, b->mem, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS) err = clFinish(cl->queue);
    if (err != CL_SUCCESS) {
        clReleaseMemObject(b->mem);
        b->mem = NULL;
        return oom(cl, cat, bytes, what, cs_cl_strerror(err));
    }
    b->bytes = bytes;
    b->cat = cat;
    account(cl, cat, bytes, 1);
    return 0;
}

void cs_buf_free(cs_cl *cl, cs_buf *b)
{
    if (b->mem) {
        clReleaseMemObject(b->mem);
        account(cl, b->cat, b->bytes, 0);
    }
    b->mem = NULL;
    b->bytes = 0;
}

int cs_buf_resize(cs_cl *cl, cs_buf *b, size_t bytes, int keep, const char *what)
{
    if (b->mem && ((bytes + 15) & ~(size_t)15) == b->bytes) return 0;
    cs_buf nb;
    /* a buffer first created by resize / reserve is a scratch buffer unless the caller set cat */
    cs_mem_cat cat = b->mem || b->cat != CS_MEM_PARAMS ? b->cat : CS_MEM_SCRATCH;
    if (cs_buf_alloc(cl, &nb, cat, bytes, what)) return -1;
    if (keep && b->mem) {
        size_t n = b->bytes < nb.bytes ? b->bytes : nb.bytes;
        cl_int e = clEnqueueCopyBuffer(cl->queue, b->mem, nb.mem, 0, 0, n, 0, NULL, NULL);
        if (e == CL_SUCCESS) e = clFinish(cl->queue);
        if (e != CL_SUCCESS) {
            cs_buf_free(cl, &nb);
            return cs_fail("copying %s while resizing failed: %s", what, cs_cl_strerror(e));
        }
    }
    cs_buf_free(cl, b);
    *b = nb;
    return 0;
}

int cs_buf_reserve(cs_cl *cl, cs_buf *b, size_t bytes, int keep, const char *what)
{
    if (b->mem && b->bytes >= bytes) return 0;
    return cs_buf_resize(cl, b, bytes, keep, what);
}

int cs_buf_write(cs_cl *cl, cs_buf *b, size_t off, size_t n, const void *src)
{
    if (n == 0) return 0;
    if (off + n > b->bytes) return cs_fail("internal: write of %zu bytes past a %zu-byte buffer", off + n, b->bytes);
    CS_CHECK(clEnqueueWriteBuffer(cl->queue, b->mem, CL_TRUE, off, n, src, 0, NULL, NULL));
    return 0;
}

int cs_buf_read(cs_cl *cl, const cs_buf *b, size_t off, size_t n, void *dst)
{
    if (n == 0) return 0;
    if (off + n > b->bytes) return cs_fail("internal: read of %zu bytes past a %zu-byte buffer", off + n, b->bytes);
    CS_CHECK(clEnqueueReadBuffer(cl->queue, b->mem, CL_TRUE, off, n, dst, 0, NULL, NULL));
    return 0;
}

int cs_buf_fill(cs_cl *cl, cs_buf *b, size_t off, size_t n, const void *pat, size_t psz)
{
    if (n == 0) return 0;
    if (off + n > b->bytes) return cs_fail("internal: fill of %zu bytes past a %zu-byte buffer", off + n, b->bytes);
    CS_CHECK(clEnqueueFillBuffer(cl->queue, b->mem, pat, psz, off, n, 0, NULL, NULL));
    return 0;
}

void cs_mem_reset_peak(cs_cl *cl)
{
    for (int i = 0; i < CS_MEM_NCAT; i++) cl->mem.peak[i] = cl->mem.cur[i];
    cl->mem.peak_total = cl->mem.window_peak = cl->mem.cur_total;
}

void cs_mem_window_start(cs_cl *cl) { cl->mem.window_peak = cl->mem.cur_total; }
