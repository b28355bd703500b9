/* util: error messages, atomic file output, hashing, small file helpers.
 *
 * Errors: recoverable failures call cs_fail() with a message naming the input and what is
 * wrong, and return -1; only main() prints cs_last_error() and exits. The message buffer is
 * thread-local, so two trainers on two threads do not mix their messages. */
#ifndef CS_UTIL_H
#define CS_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Sets the thread's last error message (printf format) and returns -1. */
int cs_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prefixes the current message with more context ("loading X: <old message>"); returns -1. */
int cs_fail_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *cs_last_error(void);

/* ---- atomic output: every file clsplat writes goes through this ---------------------- */
typedef struct {
    FILE *f;
    char path[4096];
    char tmp[4200];
} cs_atomic_file;

/* Opens PATH.tmp.<pid> for writing; returns 0 or -1 with a message. */
int cs_atomic_open(cs_atomic_file *af, const char *path);
/* Flushes, fsyncs and renames onto the final name; on any earlier write error removes the
 * temporary file instead. Returns 0 or -1 with a message. */
int cs_atomic_commit(cs_atomic_file *af);
/* Removes the temporary file (used on error paths). */
void cs_atomic_abort(cs_atomic_file *af);
/* One-shot: writes N bytes atomically. */
int cs_write_file_atomic(const char *path, const void *data, size_t n);
/* Removes the temporary files (<file>.tmp.<pid>) that dead processes left in DIR and its
 * folders (three levels down) and that DIR/.clsplat-outputs lists (cs_atomic_open lists each
 * temporary name in a tracked folder); returns how many. A live writer's files, and files of
 * that shape clsplat did not make, are kept. */
int cs_remove_stale_temps(const char *dir);

/* ---- output manifests: what a run wrote, so that a cleanup removes only that ---------- */
/* The manifest's name inside a tracked folder: one path a line, relative to the folder, a
 * folder's path ending in '/'. */
#define CS_MANIFEST_NAME ".clsplat-outputs"
/* From now on, every file that cs_atomic_commit renames into place under DIR (at any depth)
 * and every folder cs_mkdirs creates there is appended to DIR/.clsplat-outputs (each path
 * once). Up to 8 folders at a time, from any thread. Returns 0 or -1 with a message. */
int cs_outputs_track(const char *dir);
/* Stops listing what is written under DIR. */
void cs_outputs_untrack(const char *dir);
/* Lists PATH (a file clsplat wrote without cs_atomic_commit, or a folder when IS_DIR) in the
 * manifest of the tracked folder it lies under; nothing when it lies under none. */
void cs_outputs_note(const char *path, bool is_dir);

/* Creates a directory and its parents (mkdir -p); returns 0 or -1 with a message. */
int cs_mkdirs(const char *path);
/* Reads a whole file into a NUL-terminated malloc'd buffer; NULL with a message on failure. */
char *cs_read_file(const char *path, size_t *len);
int cs_file_exists(const char *path);
int cs_dir_exists(const char *path);
/* Joins two path parts into OUT (size N); returns 0 or -1 if it does not fit. */
int cs_path_join(char *out, size_t n, const char *a, const char *b);

/* Levenshtein distance of two strings (1000 when B has 127 characters or more): the
 * "did you mean" of config keys and command-line flags. */
size_t cs_edit_distance(const char *a, const char *b);

/* 64-bit FNV-1a, chainable through SEED (use CS_HASH_SEED to start). */
#define CS_HASH_SEED 0xcbf29ce484222325ull
/* FNV-1a of N bytes, continuing from SEED. */
uint64_t cs_hash64(const void *data, size_t n, uint64_t seed);

/* Fault injection for the tests: with CLSPLAT_FAULT=SIGNAL:TEXT (SIGNAL kill, term or int),
 * a fault point whose WHERE contains TEXT raises that signal; with sleep:TEXT it waits 3 s
 * there. Points: every atomic write after its data and before its rename (WHERE = the final
 * path), and the phases of a run ("phase:scene", "phase:kernels", "phase:iteration <N>",
 * "phase:evaluate", "phase:stop" before the checkpoint of a stopped run). Without the variable
 * it does nothing. */
void cs_fault_point(const char *where);
/* True when CLSPLAT_FAULT is set (so a caller can skip formatting WHERE). */
bool cs_fault_enabled(void);

/* A growing byte buffer (encoders writing into memory). An append that cannot grow it sets OOM
 * and is dropped, as are all later ones: the writer checks OOM once at the end. */
typedef struct {
    uint8_t *buf;
    size_t len, cap;
    int oom;
} cs_bytes;
void cs_bytes_append(cs_bytes *b, const void *p, size_t n);
/* Frees the bytes and empties B. */
void cs_bytes_free(cs_bytes *b);

/* PSNR in dB of a mean squared error of values in [0, 1]: 10 log10(1 / MSE), and CS_PSNR_MAX for
 * identical images and anything closer (one value, whatever the image: float rounding of an
 * exact match gave 150 or 161 dB before). */
#define CS_PSNR_MAX 99.0
double cs_psnr(double mse);

/* Monotonic wall clock in seconds. */
double cs_now(void);
/* Host memory available now (MemAvailable of /proc/meminfo) in bytes; 0 when not known. */
size_t cs_host_mem_available(void);
/* The median of N > 0 values (V is sorted in place; the upper one of an even count). */
double cs_median(double *v, int n);
/* Offers distance D of item J to DIST / IDX, the N (< K, or K) smallest distances so far,
 * ascending (a tie goes after its equals); returns how many they hold now. */
int cs_nearest_insert(double *dist, int *idx, int n, int k, double d, int j);
/* Sorts N floats ascending in place (NaNs compare equal to everything: keep them out). */
void cs_sort_floats(float *v, size_t n);
/* The value of rank K (0-based) among N > K floats in descending order, found in linear time
 * on average (quickselect): V is reordered so that V[K] holds it, V[0..K) the values not below
 * it and V(K..N) those not above it (no NaNs). */
float cs_select_desc(float *v, size_t n, size_t k);
/* Seconds since the Unix epoch (CLOCK_REALTIME), for timestamps in files. */
double cs_wall_time(void);

/* Deterministic counter-based random numbers (no hidden state). */
uint32_t cs_hash_u32(uint32_t x);
float cs_rand_uniform(uint64_t seed, uint64_t counter);  /* [0, 1) */

#endif
