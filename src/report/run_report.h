/* run_report: OUT/report.html, one self-contained page about a run, made from the files the run
 * wrote (config.json, train_log.jsonl, metrics.json, result.json, memory.json, previews/): a
 * summary, charts (loss, PSNR, Gaussians, memory, speed, against iteration and against training
 * time) as inline SVG, the evaluations as a table, the latest previews (render | ground truth |
 * error) embedded as data URIs, the memory plan and use, and the config. It references nothing outside itself: it opens from
 * the file system, offline, in any browser. Written at the end of every training run
 * (output.report) and by `clsplat report -m OUT`. */
#ifndef CS_RUN_REPORT_H
#define CS_RUN_REPORT_H

#include <stdbool.h>
#include <stddef.h>

/* Largest preview embedded (bytes) and how many at most: the page stays a few MB. */
#define CS_RUN_REPORT_MAX_PREVIEW_BYTES (4L << 20)
#define CS_RUN_REPORT_MAX_PREVIEWS 8

/* Writes the report of the run in RUN_DIR to OUT_PATH (NULL: RUN_DIR/report.html), atomically;
 * an existing OUT_PATH is replaced only when it is a clsplat report (its first line after the
 * doctype says so), anything else is refused by name.
 * A run folder without train_log.jsonl or config.json is refused by name; a missing
 * metrics.json, result.json or previews/ leaves its part of the page saying so. -1 with a
 * message. */
int cs_run_report_write(const char *run_dir, const char *out_path);
/* The page of a batch folder ROOT (clsplat batch), from ROOT/summary.json: totals and one row a
 * job (status, iterations, test metrics, time, memory, attempts, error), each job's name linking
 * to its own ROOT/<job>/report.html when there is one. OUT_PATH as above (NULL:
 * ROOT/report.html). -1 with a message, also for a folder without summary.json. */
int cs_batch_report_page(const char *root, const char *out_path);
/* The page of DIR (a run, or with BATCH a batch folder) into a new buffer *HTML of *LEN bytes
 * (the caller frees it), for serving: it reloads itself every 5 seconds. -1 with a message. */
int cs_report_html(const char *dir, bool batch, char **html, size_t *len);
/* Whether DIR is a batch folder: a summary.json and no config.json. */
bool cs_report_is_batch(const char *dir);

#endif
