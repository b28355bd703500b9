/* fuzz_joblist: a batch job list (the input as the file; its jobs' data folders are the fuzz
 * folder's "scene", which exists), resolved and checked as clsplat batch does before running. */
#include "fuzz.h"
#include "joblist.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    char scene[1200];
    snprintf(scene, sizeof scene, "%s/scene", fuzz_dir());
    cs_mkdirs(scene);
    const char *path = fuzz_write("jobs.json", data, n);
    cs_joblist l;
    if (path && cs_joblist_load(path, NULL, NULL, &l) == 0) {
        for (int i = 0; i < l.n; i++) (void)cs_joblist_find(&l, l.jobs[i].name);
        cs_joblist_free(&l);
    }
    return 0;
}
