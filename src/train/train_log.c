/* train_log: the JSON-lines training log, written and read back through jansson. */
#include "train_log.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* one line a record ({"a": 1, "b": 2}), keys in insertion order, reals to 8 significant digits */
#define LINE_FLAGS (JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(8))

int cs_train_log_open(cs_train_log *log, const char *dir)
{
    memset(log, 0, sizeof *log);
    if (cs_path_join(log->path, sizeof log->path, dir, "train_log.jsonl")) return -1;
    log->lines = json_array();
    return log->lines ? 0 : cs_fail("out of host memory (train log)");
}

int cs_train_log_resume(cs_train_log *log, int up_to)
{
    if (!cs_file_exists(log->path)) return 0;
    char *text = cs_read_file(log->path, NULL);
    if (!text) return -1;
    int rc = 0, line_no = 0;
    for (char *line = text, *nl; *line && !rc; line = nl ? nl + 1 : line + strlen(line)) {
        nl = strchr(line, '\n');
        if (nl) *nl = '\0';
        line_no++;
        if (!*line) continue;
        json_error_t err;
        json_t *o = json_loads(line, 0, &err);
        if (!json_is_object(o)) {
            rc = cs_fail("%s:%d: not a JSON object (%s)", log->path, line_no, err.text);
        } else if (json_integer_value(json_object_get(o, "iteration")) <= up_to) {
            json_array_append(log->lines, o);
        }
        json_decref(o);
    }
    free(text);
    return rc;
}

int cs_train_log_append(cs_train_log *log, json_t *record)
{
    if (json_array_append_new(log->lines, record)) return cs_fail("out of host memory (train log)");
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t n = json_array_size(log->lines);
    for (size_t i = 0; buf && i < n; i++) {
        char *line = json_dumps(json_array_get(log->lines, i), LINE_FLAGS);
        size_t l = line ? strlen(line) : 0;
        if (line && len + l + 2 > cap) {
            cap = (len + l + 2) * 2;
            char *b = realloc(buf, cap);
            if (!b) free(buf);
            buf = b;
        }
        if (line && buf) {
            memcpy(buf + len, line, l);
            len += l;
            buf[len++] = '\n';
        }
        free(line);
    }
    if (!buf) return cs_fail("out of host memory (train log)");
    int rc = cs_write_file_atomic(log->path, buf, len);
    free(buf);
    return rc;
}

void cs_train_log_close(cs_train_log *log)
{
    if (log->lines) json_decref(log->lines);
    log->lines = NULL;
}

double cs_train_log_last_seconds(const cs_train_log *log)
{
    size_t n = json_array_size(log->lines);
    return n ? json_number_value(json_object_get(json_array_get(log->lines, n - 1), "seconds")) : 0.0;
}
