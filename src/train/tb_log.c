/* tb_log: a training run's TensorBoard output (tb_log.h). */
#include "tb_log.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

int cs_tb_log_open(cs_tb_log *t, const char *out_dir, bool on)
{
    memset(t, 0, sizeof *t);
    if (!on) return 0;
    if (cs_tb_open(&t->w, out_dir)) return -1;
    t->on = true;
    return 0;
}

const char *cs_tb_tag_of(const char *key, char *buf, size_t n)
{
    size_t l = strlen(key);
    if (!strcmp(key, "iteration")) return NULL;
    const char *group = l > 3 && !strcmp(key + l - 3, "_mb")             ? "memory"
                        : !strcmp(key, "its") || !strcmp(key, "seconds") ? "perf"
                                                                          : "train";
    snprintf(buf, n, "%s/%s", group, key);
    return buf;
}

int cs_tb_log_record(cs_tb_log *t, const json_t *rec)
{
    if (!t->on) return 0;
    cs_tb_summary s;
    cs_tb_summary_init(&s);
    const char *key;
    json_t *v;
    char tag[160];
    json_object_foreach((json_t *)rec, key, v) {
        if (json_is_number(v) && cs_tb_tag_of(key, tag, sizeof tag))
            cs_tb_add_scalar(&s, tag, (float)json_number_value(v));
    }
    return cs_tb_write(&t->w, json_integer_value(json_object_get(rec, "iteration")), &s, 1);
}

int cs_tb_log_histograms(cs_tb_log *t, cs_cl *cl, const cs_kernels *k, const cs_model *m, int step)
{
    if (!t->on) return 0;
    cs_tb_summary s;
    cs_tb_summary_init(&s);
    for (int q = 0; q < CS_HISTO_COUNT; q++) {
        cs_histo h;
        if (cs_histo_compute(cl, k, m, q, &t->part, &h)) {
            cs_tb_summary_free(&s);
            return cs_fail_prefix("TensorBoard histogram %s at iteration %d", cs_histo_names[q], step);
        }
        char tag[64];
        snprintf(tag, sizeof tag, "histo/%s", cs_histo_names[q]);
        cs_tb_histo th = {h.n ? h.min : 0, h.n ? h.max : 0, h.n, h.sum, h.sum_squares, h.limit, h.count,
                          h.n ? CS_HISTO_BUCKETS : 0};
        cs_tb_add_histo(&s, tag, &th);
    }
    return cs_tb_write(&t->w, step, &s, 1);
}

void cs_tb_log_close(cs_tb_log *t, cs_cl *cl)
{
    cs_tb_close(&t->w);
    cs_buf_free(cl, &t->part);
    t->on = false;
}
