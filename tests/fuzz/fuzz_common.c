/* fuzz_common: scratch files for the harnesses. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "scene.h"
#include "util.h"

const char *fuzz_dir(void)
{
    static char dir[256];
    if (!dir[0]) {
        const char *base = getenv("CLSPLAT_FUZZ_SCRATCH"); /* tools/run_fuzzers.sh removes it */
        snprintf(dir, sizeof dir, "%s/clsplat-fuzz-%ld", base && base[0] ? base : "/tmp", (long)getpid());
        cs_mkdirs(dir);
    }
    return dir;
}

const char *fuzz_write(const char *name, const uint8_t *data, size_t n)
{
    static char p[1024];
    char folder[1024];
    snprintf(p, sizeof p, "%s/%s", fuzz_dir(), name);
    snprintf(folder, sizeof folder, "%s", p);
    char *slash = strrchr(folder, '/');
    if (slash) *slash = '\0', cs_mkdirs(folder);
    FILE *f = fopen(p, "wb");
    if (f) {
        if (n) fwrite(data, 1, n, f);
        fclose(f);
    }
    return p;
}

int fuzz_write_records(const uint8_t *data, size_t n, const char *const *names, int count)
{
    int written = 0;
    size_t i = 0;
    while (i < n) {
        int idx = data[i] % count;
        size_t len = i + 3 <= n ? (size_t)data[i + 1] | (size_t)data[i + 2] << 8 : 0;
        size_t start = i + 3 <= n ? i + 3 : n;
        if (start + len > n) len = n - start;
        fuzz_write(names[idx], data + start, len);
        written++;
        i = start + len;
    }
    return written;
}

void fuzz_remove(const char *name)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", fuzz_dir(), name);
    remove(p);
}

void fuzz_load_scene(const uint8_t *data, size_t n, const char *const *names, int count)
{
    for (int i = 0; i < count; i++) fuzz_remove(names[i]);
    fuzz_write_records(data, n, names, count);
    cs_config c;
    cs_config_defaults(&c);
    snprintf(c.data.path, sizeof c.data.path, "%s", fuzz_dir());
    c.data.eval = n & 1;
    cs_scene s;
    if (cs_scene_load(&c.data, &s) == 0) cs_scene_free(&s);
}
