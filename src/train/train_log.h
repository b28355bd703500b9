/* train_log: OUT/train_log.jsonl, one JSON object a log interval, kept in memory and
 * rewritten atomically after each append (a killed run leaves the last complete file). Lines
 * are written and read back through jansson only. */
#ifndef CS_TRAIN_LOG_H
#define CS_TRAIN_LOG_H

#include <jansson.h>

typedef struct {
    char path[1200];
    json_t *lines; /* array of objects */
} cs_train_log;

/* An empty log that writes to DIR/train_log.jsonl. -1 with a message when the path is too long. */
int cs_train_log_open(cs_train_log *log, const char *dir);
/* Keeps the lines of the existing file whose "iteration" is at most UP_TO (a resumed run);
 * a missing file is an empty log, a line that is not a JSON object an error naming it. */
int cs_train_log_resume(cs_train_log *log, int up_to);
/* Appends RECORD (the reference is stolen) and rewrites the file atomically. */
int cs_train_log_append(cs_train_log *log, json_t *record);
/* The "seconds" of the last line held (training time up to it, 0 when none): a resumed run
 * counts on from there. */
double cs_train_log_last_seconds(const cs_train_log *log);
/* Drops the lines held in memory (the file has them). */
void cs_train_log_close(cs_train_log *log);

#endif
