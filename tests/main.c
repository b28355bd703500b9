/* main: runs every registered test; prints "N passed, N failed" last. A test's own output
 * (its measurements, the warnings of the faults it simulates) is kept in the scratch folder
 * and shown only when it fails, or always with CLSPLAT_TEST_VERBOSE=1 (make test V=1): a
 * passing run reads as one line a test.
 * usage: run_tests [group|name-substring] */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

#define X(name, group) int name(void);
#include "test_list.h"
#undef X
static const cs_test TESTS[] = {
#define X(name, group) {#name, group, name},
#include "test_list.h"
#undef X
};

static char g_tmp[512];
static uint64_t g_seed;

const char *test_tmpdir(void) { return g_tmp; }
uint64_t test_seed(void) { return g_seed; }

double test_rand(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(*s >> 11) * (1.0 / 9007199254740992.0);
}

int test_cmp_float_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

double test_randn(uint64_t *s)
{
    double u1 = test_rand(s), u2 = test_rand(s);
    if (u1 < 1e-300) u1 = 1e-300;
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

const char *test_lpips_dir(void)
{
    static char dir[4096];
    const char *d = getenv("CLSPLAT_LPIPS_DIR");
    if (!d) d = "../shared/lpips";
    if (!realpath(d, dir)) snprintf(dir, sizeof dir, "%s", d);
    return dir;
}

const char *test_lpips_weights(void)
{
    static char p[4200];
    snprintf(p, sizeof p, "%s/alex_v0.1.f32.bin", test_lpips_dir());
    return p;
}

int test_small(void)
{
    const char *s = getenv("CLSPLAT_TEST_SMALL");
    return s && !strcmp(s, "1");
}

int test_open_cl(cs_cl *cl)
{
    char cache[600];
    snprintf(cache, sizeof cache, "%s/kcache", g_tmp);
    const char *dev = getenv("CLSPLAT_TEST_DEVICE");
    cs_cl_options o = {dev, NULL, 0, 0, cache, 0, 0};
    return cs_cl_open(cl, &o);
}

/* whether NAME is a group's name (then it selects that group only, never by name: "cl" would
   select test_cli_runs) */
static int is_group(const char *name)
{
    return !strcmp(name, "unit") || !strcmp(name, "cl") || !strcmp(name, "host") || !strcmp(name, "real");
}

/* 1 when test T is to run: a FILTER naming a group selects that group, another selects the
   tests whose names hold it, one written -PART leaves out the tests whose names hold PART; with
   no selecting FILTER every test but the real-data group is selected */
static int selected(const cs_test *t, char **filters, int n)
{
    int any = 0, hit = 0;
    for (int i = 0; i < n; i++) {
        if (filters[i][0] == '-') {
            if (strstr(t->name, filters[i] + 1)) return 0;
            continue;
        }
        any = 1;
        hit |= is_group(filters[i]) ? !strcmp(t->group, filters[i]) : strstr(t->name, filters[i]) != NULL;
    }
    return any ? hit : strcmp(t->group, "real") != 0;
}

/* Runs T with its stdout and stderr going to a file of the scratch folder; shows that file when
   T fails (or always when VERBOSE). Returns T's result. */
static int run_captured(const cs_test *t, int verbose)
{
    if (verbose) return t->fn();
    char path[700];
    snprintf(path, sizeof path, "%s/%s.out", g_tmp, t->name);
    fflush(stdout), fflush(stderr);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int out = dup(1), err = dup(2);
    if (fd < 0 || out < 0 || err < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0) { /* cannot capture: run it plainly */
        if (fd >= 0) close(fd);
        if (out >= 0) close(out);
        if (err >= 0) close(err);
        return t->fn();
    }
    close(fd);
    int r = t->fn();
    fflush(stdout), fflush(stderr);
    dup2(out, 1), dup2(err, 2);
    close(out), close(err);
    if (r) {
        char *text = cs_read_file(path, NULL);
        if (text) fputs(text, stdout);
        free(text);
    }
    return r;
}

int main(int argc, char **argv)
{
    const char *se = getenv("CLSPLAT_TEST_SEED");
    g_seed = se ? strtoull(se, NULL, 0) : ((uint64_t)time(NULL) * 2654435761u) ^ (uint64_t)getpid();
    snprintf(g_tmp, sizeof g_tmp, "/tmp/clsplat-test-%ld", (long)getpid());
    if (cs_mkdirs(g_tmp)) {
        fprintf(stderr, "%s\n", cs_last_error());
        return 1;
    }
    printf("seed %llu (set CLSPLAT_TEST_SEED to repeat), scratch %s\n", (unsigned long long)g_seed, g_tmp);
    const char *v = getenv("CLSPLAT_TEST_VERBOSE");
    int verbose = v && v[0] && strcmp(v, "0");
    int passed = 0, failed = 0;
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        const cs_test *t = &TESTS[i];
        if (!selected(t, argv + 1, argc - 1)) continue;
        double t0 = cs_now();
        fflush(stdout);
        int r = run_captured(t, verbose);
        printf("%-4s %-40s %6.2fs\n", r ? "FAIL" : "ok", t->name, cs_now() - t0);
        fflush(stdout);
        if (r) failed++;
        else passed++;
    }
    if (!failed) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
        if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_tmp);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
