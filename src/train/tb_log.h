/* tb_log: what a training run writes to TensorBoard (tb_events.h): the scalars of each
 * train_log.jsonl record (tags by cs_tb_tag_of), histograms of the model (histo.h) and, through
 * the evaluator, evaluation scalars and images. Off (every call a no-op) with
 * log.tensorboard false. A resumed run appends a new event file and continues the steps. */
#ifndef CS_TB_LOG_H
#define CS_TB_LOG_H

#include <jansson.h>
#include <stdbool.h>

#include "histo.h"
#include "tb_events.h"

typedef struct {
    cs_tb_writer w;
    cs_buf part; /* histogram partials on the device */
    bool on;
} cs_tb_log;

/* Opens OUT_DIR's new event file when ON. -1 with a message. */
int cs_tb_log_open(cs_tb_log *t, const char *out_dir, bool on);
/* The TensorBoard tag of a train_log.jsonl key: "memory/<key>" for keys ending in "_mb",
 * "perf/<key>" for its and seconds, "train/<key>" otherwise; NULL for "iteration". */
const char *cs_tb_tag_of(const char *key, char *buf, size_t n);
/* Every number of REC (a train_log.jsonl record) as a scalar at step REC.iteration; flushed. */
int cs_tb_log_record(cs_tb_log *t, const json_t *rec);
/* Histograms (histo/<name>) of M at STEP; flushed. */
int cs_tb_log_histograms(cs_tb_log *t, cs_cl *cl, const cs_kernels *k, const cs_model *m, int step);
/* Closes the file and frees the partials. */
void cs_tb_log_close(cs_tb_log *t, cs_cl *cl);

#endif
