/* test.h: the plain-C test runner's registration and check macros. */
#ifndef CS_TEST_H
#define CS_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "cl_runtime.h"

typedef int (*cs_test_fn)(void);
typedef struct {
    const char *name;
    const char *group; /* "unit", "cl" (needs an OpenCL device; its kernels are the point), "host"
                          (needs a device, but what it checks is host-side: files, signals, batch,
                          CLI, memory accounting; make check-rusticl leaves it out), "real" (needs
                          ../shared/data) */
    cs_test_fn fn;
} cs_test;

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "  check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
            fprintf(stderr, __VA_ARGS__);                                                     \
            fprintf(stderr, "\n");                                                            \
            return 1;                                                                         \
        }                                                                                     \
    } while (0)
#define CHECK_OK(call) CHECK((call) == 0, "%s", cs_last_error())

/* shared fixtures */
const char *test_tmpdir(void);          /* a fresh folder for this run */
uint64_t test_seed(void);               /* fresh per run, printed at start; CLSPLAT_TEST_SEED overrides */
double test_rand(uint64_t *state);      /* [0, 1) */
double test_randn(uint64_t *state);
int test_cmp_float_desc(const void *a, const void *b); /* qsort's comparator, largest first */
/* The LPIPS data folder ($CLSPLAT_LPIPS_DIR, default ../shared/lpips) as an absolute path,
 * and its weights file; the folder name as given when it does not exist. */
const char *test_lpips_dir(void);
const char *test_lpips_weights(void);
/* 1 under CLSPLAT_TEST_SMALL=1: the tests that can take the smallest inputs that still check
   their paths (tools/check_oclgrind.sh, where a simulator runs every work-item) */
int test_small(void);
/* Opens the default test device (PoCL in CI) with a private kernel cache. */
int test_open_cl(cs_cl *cl);

#endif
