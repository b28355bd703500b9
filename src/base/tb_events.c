/* tb_events: TensorBoard event files (tb_events.h). */
#include "tb_events.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

/* protobuf wire types */
enum { WIRE_VARINT = 0, WIRE_FIXED64 = 1, WIRE_BYTES = 2, WIRE_FIXED32 = 5 };
/* field numbers: tensorflow/core/util/event.proto, tensorflow/core/framework/summary.proto */
enum { EVENT_WALL_TIME = 1, EVENT_STEP = 2, EVENT_FILE_VERSION = 3, EVENT_SUMMARY = 5 };
enum { SUMMARY_VALUE = 1 };
enum { VALUE_TAG = 1, VALUE_SIMPLE = 2, VALUE_IMAGE = 4, VALUE_HISTO = 5 };
enum { IMAGE_HEIGHT = 1, IMAGE_WIDTH = 2, IMAGE_COLORSPACE = 3, IMAGE_ENCODED = 4 };
enum { HISTO_MIN = 1, HISTO_MAX = 2, HISTO_NUM = 3, HISTO_SUM = 4, HISTO_SUM_SQ = 5, HISTO_LIMIT = 6, HISTO_BUCKET = 7 };

/* ---- CRC-32C ----------------------------------------------------------------------------- */

uint32_t cs_crc32c(const void *data, size_t n)
{
    static uint32_t table[256];
    static int ready;
    if (!ready) { /* reflected polynomial 0x1EDC6F41 */
        for (uint32_t i = 0; i < 256; i++) {
            uint32_t c = i;
            for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            table[i] = c;
        }
        ready = 1;
    }
    const uint8_t *p = data;
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

uint32_t cs_tb_mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

/* ---- protobuf encoding into a growing buffer --------------------------------------------- */

static void put(cs_tb_summary *s, const void *p, size_t n) { cs_bytes_append(s, p, n); }

static void put_varint(cs_tb_summary *s, uint64_t v)
{
    uint8_t b[10];
    int n = 0;
    do {
        b[n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
        v >>= 7;
    } while (v);
    put(s, b, (size_t)n);
}

static void put_key(cs_tb_summary *s, int field, int wire) { put_varint(s, (uint64_t)field << 3 | (uint64_t)wire); }

static void put_le(cs_tb_summary *s, uint64_t v, int bytes)
{
    uint8_t b[8];
    for (int i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(s, b, (size_t)bytes);
}

static void put_double(cs_tb_summary *s, int field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_key(s, field, WIRE_FIXED64);
    put_le(s, u, 8);
}

static void put_bytes(cs_tb_summary *s, int field, const void *p, size_t n)
{
    put_key(s, field, WIRE_BYTES);
    put_varint(s, n);
    put(s, p, n);
}

/* a nested message: field key, length, then the inner buffer */
static void put_message(cs_tb_summary *s, int field, cs_tb_summary *inner)
{
    if (inner->oom) s->oom = 1;
    put_bytes(s, field, inner->buf, inner->len);
    cs_tb_summary_free(inner);
}

/* ---- summaries --------------------------------------------------------------------------- */

void cs_tb_summary_init(cs_tb_summary *s) { memset(s, 0, sizeof *s); }

void cs_tb_summary_free(cs_tb_summary *s) { cs_bytes_free(s); }

void cs_tb_add_scalar(cs_tb_summary *s, const char *tag, float v)
{
    cs_tb_summary val;
    cs_tb_summary_init(&val);
    put_bytes(&val, VALUE_TAG, tag, strlen(tag));
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    put_key(&val, VALUE_SIMPLE, WIRE_FIXED32);
    put_le(&val, u, 4);
    put_message(s, SUMMARY_VALUE, &val);
}

void cs_tb_add_image(cs_tb_summary *s, const char *tag, const uint8_t *png, size_t n, int w, int h, int channels)
{
    cs_tb_summary img, val;
    cs_tb_summary_init(&img);
    put_key(&img, IMAGE_HEIGHT, WIRE_VARINT);
    put_varint(&img, (uint64_t)h);
    put_key(&img, IMAGE_WIDTH, WIRE_VARINT);
    put_varint(&img, (uint64_t)w);
    put_key(&img, IMAGE_COLORSPACE, WIRE_VARINT);
    put_varint(&img, (uint64_t)channels);
    put_bytes(&img, IMAGE_ENCODED, png, n);
    cs_tb_summary_init(&val);
    put_bytes(&val, VALUE_TAG, tag, strlen(tag));
    put_message(&val, VALUE_IMAGE, &img);
    put_message(s, SUMMARY_VALUE, &val);
}

/* a packed repeated double */
static void put_packed(cs_tb_summary *s, int field, const double *v, int n)
{
    put_key(s, field, WIRE_BYTES);
    put_varint(s, (uint64_t)n * 8);
    for (int i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        put_le(s, u, 8);
    }
}

void cs_tb_add_histo(cs_tb_summary *s, const char *tag, const cs_tb_histo *h)
{
    cs_tb_summary hp, val;
    cs_tb_summary_init(&hp);
    put_double(&hp, HISTO_MIN, h->min);
    put_double(&hp, HISTO_MAX, h->max);
    put_double(&hp, HISTO_NUM, h->num);
    put_double(&hp, HISTO_SUM, h->sum);
    put_double(&hp, HISTO_SUM_SQ, h->sum_squares);
    put_packed(&hp, HISTO_LIMIT, h->limit, h->n);
    put_packed(&hp, HISTO_BUCKET, h->count, h->n);
    cs_tb_summary_init(&val);
    put_bytes(&val, VALUE_TAG, tag, strlen(tag));
    put_message(&val, VALUE_HISTO, &hp);
    put_message(s, SUMMARY_VALUE, &val);
}

/* ---- records ----------------------------------------------------------------------------- */

static int write_record(cs_tb_writer *w, const cs_tb_summary *event)
{
    uint8_t head[12], tail[4];
    uint64_t n = event->len;
    for (int i = 0; i < 8; i++) head[i] = (uint8_t)(n >> (8 * i));
    uint32_t c = cs_tb_mask_crc(cs_crc32c(head, 8));
    for (int i = 0; i < 4; i++) head[8 + i] = (uint8_t)(c >> (8 * i));
    c = cs_tb_mask_crc(cs_crc32c(event->buf, event->len));
    for (int i = 0; i < 4; i++) tail[i] = (uint8_t)(c >> (8 * i));
    /* whole records only: a record is flushed at once, and one that does not reach the disk in
       full (a full disk) is cut off again, so the file stays a readable run of records */
    size_t total = 16 + event->len;
    uint8_t *rec = malloc(total);
    if (!rec) return cs_fail("out of host memory (TensorBoard record)");
    memcpy(rec, head, 12), memcpy(rec + 12, event->buf, event->len), memcpy(rec + 12 + event->len, tail, 4);
    long at = ftell(w->f);
    errno = 0;
    size_t put = fwrite(rec, 1, total, w->f); /* unbuffered (cs_tb_open): nothing is left pending */
    free(rec);
    if (put != total) {
        int err = errno;
        clearerr(w->f);
        int cut = at >= 0 && ftruncate(fileno(w->f), at) == 0 && fseek(w->f, at, SEEK_SET) == 0;
        return cs_fail("%s: writing a TensorBoard record failed: %s%s", w->path, strerror(err ? err : EIO),
                       cut ? " (the file keeps its earlier records whole)" : "");
    }
    return 0;
}

static int write_event(cs_tb_writer *w, int64_t step, const char *version, cs_tb_summary *summary, int flush)
{
    cs_tb_summary ev;
    cs_tb_summary_init(&ev);
    put_double(&ev, EVENT_WALL_TIME, cs_wall_time());
    if (!version) {
        put_key(&ev, EVENT_STEP, WIRE_VARINT);
        put_varint(&ev, (uint64_t)step);
    }
    if (version) put_bytes(&ev, EVENT_FILE_VERSION, version, strlen(version));
    if (summary) put_message(&ev, EVENT_SUMMARY, summary);
    int rc = ev.oom ? cs_fail("out of host memory (TensorBoard event)") : write_record(w, &ev);
    cs_tb_summary_free(&ev);
    if (!rc && flush && fflush(w->f)) rc = cs_fail("%s: writing a TensorBoard record failed: %s", w->path, strerror(errno));
    return rc;
}

int cs_tb_open(cs_tb_writer *w, const char *dir)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    if (snprintf(w->path, sizeof w->path, "%s/events.out.tfevents.%lld.%s.%d", dir, (long long)time(NULL), host,
                 (int)getpid()) >= (int)sizeof w->path)
        return cs_fail("%s: path too long for a TensorBoard event file", dir);
    w->f = fopen(w->path, "ab");
    if (!w->f) return cs_fail("%s: cannot create the TensorBoard event file: %s", w->path, strerror(errno));
    setvbuf(w->f, NULL, _IONBF, 0); /* a record goes out in one write, or is cut off (write_record) */
    cs_outputs_note(w->path, false);
    if (write_event(w, 0, "brain.Event:2", NULL, 1)) {
        cs_tb_close(w);
        return -1;
    }
    return 0;
}

void cs_tb_close(cs_tb_writer *w)
{
    if (w->f) fclose(w->f);
    w->f = NULL;
}

int cs_tb_write(cs_tb_writer *w, int64_t step, cs_tb_summary *s, int flush)
{
    if (!w->f) {
        cs_tb_summary_free(s);
        return 0;
    }
    return write_event(w, step, NULL, s, flush);
}
