/* tb_events: TensorBoard event files (events.out.tfevents.<time>.<host>.<pid>) written by
 * hand: TFRecord framing (length, masked CRC-32C of the length, data, masked CRC-32C of the
 * data) around protobuf-encoded tensorflow.Event messages (event.proto, summary.proto). The
 * first record carries file_version "brain.Event:2"; each later one a step and a Summary of
 * scalar, PNG image and histogram values. Records are appended and flushed on request, so a
 * killed run keeps everything up to its last flush. */
#ifndef CS_TB_EVENTS_H
#define CS_TB_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/* A Summary under construction: the encoded Summary.Value fields, appended in order (an
 * append that runs out of memory is reported by cs_tb_write). */
typedef cs_bytes cs_tb_summary;

/* A histogram as TensorBoard draws it: N buckets, bucket i counting values in
 * (limit[i-1], limit[i]] (the first from -DBL_MAX); min, max, sum, sum of squares, count. */
typedef struct {
    double min, max, num, sum, sum_squares;
    const double *limit, *count;
    int n;
} cs_tb_histo;

typedef struct {
    FILE *f;
    char path[1400];
} cs_tb_writer;

/* CRC-32C (Castagnoli) of N bytes, and the TFRecord mask of a CRC. */
uint32_t cs_crc32c(const void *data, size_t n);
uint32_t cs_tb_mask_crc(uint32_t crc);

/* Creates DIR/events.out.tfevents.<unix time>.<host>.<pid> and writes its version record.
 * -1 with a message naming the file. */
int cs_tb_open(cs_tb_writer *w, const char *dir);
/* Flushes and closes (a closed or never opened writer is fine). */
void cs_tb_close(cs_tb_writer *w);

void cs_tb_summary_init(cs_tb_summary *s);
void cs_tb_summary_free(cs_tb_summary *s);
void cs_tb_add_scalar(cs_tb_summary *s, const char *tag, float v);
/* PNG bytes PNG (N of them) of a W x H image with CHANNELS (3 or 4) channels. */
void cs_tb_add_image(cs_tb_summary *s, const char *tag, const uint8_t *png, size_t n, int w, int h, int channels);
void cs_tb_add_histo(cs_tb_summary *s, const char *tag, const cs_tb_histo *h);
/* Appends Event{wall_time: now, step: STEP, summary: S} and empties S; with FLUSH the file is
 * flushed to the kernel. -1 with a message. */
int cs_tb_write(cs_tb_writer *w, int64_t step, cs_tb_summary *s, int flush);

#endif
