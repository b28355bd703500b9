/* test_tune: the per-device choice of tile and work-group sizes: measured when the cache has
 * none (the fastest candidate, the default unless beaten by the margin), stored, loaded,
 * ignored when corrupt, skipped for a tile the device cannot run, and applied to the kernels. */
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "tune.h"
#include "util.h"

/* the rule tune.c applies: a candidate other than the default wins only by 2% */
static int picked_right(const double *ms, const size_t *cand, int n, size_t chosen, size_t def)
{
    int ci = -1, di = -1;
    for (int i = 0; i < n; i++) {
        if (cand[i] == chosen) ci = i;
        if (cand[i] == def) di = i;
    }
    if (ci < 0 || ms[ci] < 0) return 0;
    for (int i = 0; i < n; i++)
        if (ms[i] >= 0 && ms[i] < ms[ci] - 1e-12) {
            if (ci != di) return 0;             /* a faster one than a non-default choice */
            if (ms[i] < ms[di] * 0.98) return 0; /* the default kept though beaten */
        }
    if (ci != di && di >= 0 && ms[di] >= 0 && ms[ci] > ms[di] * 0.98) return 0;
    return 1;
}

static int check_measured(const cs_tuning *t, const cs_kernels *k)
{
    CHECK(t->source == CS_TUNED_MEASURED, "source %d, not a measurement", (int)t->source);
    CHECK(k->opts.tile == t->tile && (t->tile == 8 || t->tile == 16), "tile %d (kernels %d)", t->tile, k->opts.tile);
    double tms[CS_TUNE_TILES];
    size_t tc[CS_TUNE_TILES];
    for (int i = 0; i < CS_TUNE_TILES; i++) tms[i] = t->tile_ms[i], tc[i] = (size_t)t->tiles[i];
    CHECK(picked_right(tms, tc, CS_TUNE_TILES, (size_t)t->tile, 16) || (tms[0] < 0 && t->tile == 8),
          "tile %d chosen with pass times 16: %.3f, 8: %.3f ms", t->tile, tms[0], tms[1]);
    for (int g = 0; g < CS_WG_COUNT; g++) {
        CHECK(k->wg[g] == t->wg[g] && t->wg[g] <= k->wg_max[g], "%s: kernels %zu, tuning %zu, max %zu", cs_wg_names[g],
              k->wg[g], t->wg[g], k->wg_max[g]);
        size_t def = k->wg_max[g] < CS_WG_DEFAULT ? k->wg_max[g] : CS_WG_DEFAULT;
        CHECK(picked_right(t->wg_ms[g], t->wgs, CS_TUNE_WGS, t->wg[g], def), "%s: %zu chosen (%.3f %.3f %.3f %.3f ms)",
              cs_wg_names[g], t->wg[g], t->wg_ms[g][0], t->wg_ms[g][1], t->wg_ms[g][2], t->wg_ms[g][3]);
    }
    return 0;
}

/* Whether the device's profiling events carry times: a kernel of 4096 x 20000 dependent
 * multiply-adds must take a microsecond (Mesa 22.3's rusticl answers 0, 1, 2, 3 ns; see
 * tools/rusticl_repro/profiling.c). 1 yes, 0 no, -1 on an OpenCL error. */
static int profiling_has_times(cs_cl *cl)
{
    static const char *src = "__kernel void spin(__global float *a)\n"
                             "{ int i = get_global_id(0); float x = a[i];\n"
                             "  for (int j = 0; j < 20000; j++) x = x * 1.0001f + 0.5f; a[i] = x; }\n";
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(cl->ctx, cl->device, CL_QUEUE_PROFILING_ENABLE, &e);
    if (!q) return -1;
    cl_program p = clCreateProgramWithSource(cl->ctx, 1, &src, NULL, &e);
    cl_kernel k = NULL;
    cl_mem b = clCreateBuffer(cl->ctx, CL_MEM_READ_WRITE, 4096 * 4, NULL, &e);
    cl_event ev = NULL;
    cl_ulong t0 = 0, t1 = 0;
    float zero = 0.f;
    size_t g = 4096;
    int r = -1;
    if (p && b && clBuildProgram(p, 1, &cl->device, "", NULL, NULL) == CL_SUCCESS && (k = clCreateKernel(p, "spin", &e)) &&
        clEnqueueFillBuffer(q, b, &zero, 4, 0, 4096 * 4, 0, NULL, NULL) == CL_SUCCESS &&
        clSetKernelArg(k, 0, sizeof b, &b) == CL_SUCCESS &&
        clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &ev) == CL_SUCCESS && clFinish(q) == CL_SUCCESS &&
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL) == CL_SUCCESS &&
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL) == CL_SUCCESS)
        r = t1 - t0 >= 1000;
    if (ev) clReleaseEvent(ev);
    if (k) clReleaseKernel(k);
    if (p) clReleaseProgram(p);
    if (b) clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    return r;
}

/* A device whose profiling has no times: the measurement refuses with that reason, auto
 * keeps the defaults within the device's limits and runs, and nothing is stored. */
static int untimed_device(cs_cl *cl, const cs_kernel_opts *o)
{
    cs_kernels k;
    cs_tuning t;
    CHECK(cs_kernels_build_tuned(cl, o, CS_TUNE_FORCE, &k, &t) == -1 && strstr(cs_last_error(), "no kernel times"),
          "a measurement without times: %s", cs_last_error());
    CHECK_OK(cs_kernels_build_tuned(cl, o, CS_TUNE_AUTO, &k, &t));
    int tile = cl->loop_limited ? 8 : 16; /* the default where loops stop early: 8x8 */
    CHECK(t.source == CS_TUNED_DEFAULT && k.opts.tile == tile, "auto: source %d, tile %d (default %d)", (int)t.source,
          k.opts.tile, tile);
    for (int g = 0; g < CS_WG_COUNT; g++) CHECK(k.wg[g] <= k.wg_max[g], "%s: %zu", cs_wg_names[g], k.wg[g]);
    cs_kernels_release(&k);
    CHECK(!cs_file_exists(t.path), "a tuning file was stored from placeholder times: %s", t.path);
    printf("  this device's profiling events carry no times: the tuner keeps the defaults (measured parts held back)\n");
    return 0;
}

int test_tune(void)
{
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    snprintf(cl.cache_dir, sizeof cl.cache_dir, "%s/tune_test", test_tmpdir());
    cs_kernel_opts o = {{1, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    cs_kernels k;
    cs_tuning t, t2;
    int timed = profiling_has_times(&cl);
    CHECK(timed >= 0, "the profiling probe failed");
    if (!timed) {
        int r = untimed_device(&cl, &o);
        cs_cl_close(&cl);
        return r;
    }
    /* nothing cached: measured, stored, and the measurement's buffers gone from the peak */
    CHECK_OK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_AUTO, &k, &t));
    cs_tuning_report(&t, stdout);
    cs_tuning_summary(&t, stdout);
    if (check_measured(&t, &k)) return 1;
    CHECK(t.tile_ms[0] > 0 && t.tile_ms[1] > 0, "both tiles should run here: %.3f %.3f", t.tile_ms[0], t.tile_ms[1]);
    CHECK(cl.mem.cur_total == 0 && cl.mem.peak_total == 0, "tuning left %zu bytes allocated, peak %zu", cl.mem.cur_total,
          cl.mem.peak_total);
    size_t len = 0;
    char *text = cs_read_file(t.path, &len);
    CHECK(text && strstr(text, "\"work_groups\""), "no tuning file at %s", t.path);
    free(text);
    cs_kernels_release(&k);
    /* cached: the same choice, not measured again; CACHED reads it too; OFF ignores it */
    const int reading[] = {CS_TUNE_AUTO, CS_TUNE_CACHED};
    for (int i = 0; i < 2; i++) {
        int policy = reading[i];
        CHECK_OK(cs_kernels_build_tuned(&cl, &o, policy, &k, &t2));
        CHECK(t2.source == CS_TUNED_CACHE && t2.tile == t.tile && k.opts.tile == t.tile &&
                  !memcmp(k.wg, t.wg, sizeof k.wg),
              "policy %d: source %d tile %d", policy, (int)t2.source, t2.tile);
        cs_kernels_release(&k);
    }
    CHECK_OK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_OFF, &k, &t2));
    CHECK(t2.source == CS_TUNED_DEFAULT && k.opts.tile == 16 && k.wg[CS_WG_PROJECT] == CS_WG_DEFAULT, "off: tile %d wg %zu",
          k.opts.tile, k.wg[CS_WG_PROJECT]);
    cs_kernels_release(&k);
    /* a stored choice is applied as written */
    const char *mine = "{\"format\": 1, \"tile\": 8, \"work_groups\": {\"project\": 64, \"project_bwd\": 128, "
                       "\"bin\": 512, \"adam\": 64}}";
    CHECK_OK(cs_write_file_atomic(t.path, mine, strlen(mine)));
    CHECK_OK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_AUTO, &k, &t2));
    CHECK(t2.source == CS_TUNED_CACHE && k.opts.tile == 8 && k.wg[CS_WG_PROJECT] == 64 && k.wg[CS_WG_PROJECT_BWD] == 128 &&
              k.wg[CS_WG_BIN] == (k.wg_max[CS_WG_BIN] < 512 ? k.wg_max[CS_WG_BIN] : 512) && k.wg[CS_WG_ADAM] == 64,
          "stored choice not applied: tile %d, wg %zu %zu %zu %zu", k.opts.tile, k.wg[0], k.wg[1], k.wg[2], k.wg[3]);
    cs_kernels_release(&k);
    /* a corrupt file: defaults when only reading, a new measurement under auto */
    CHECK_OK(cs_write_file_atomic(t.path, "{\"format\": 1, \"tile\": 12", 24));
    CHECK_OK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_CACHED, &k, &t2));
    CHECK(t2.source == CS_TUNED_DEFAULT && k.opts.tile == 16, "corrupt file under CACHED: source %d", (int)t2.source);
    cs_kernels_release(&k);
    CHECK_OK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_AUTO, &k, &t2));
    if (check_measured(&t2, &k)) return 1;
    cs_kernels_release(&k);
    /* a device that runs at most 64 work-items a group: 16x16 tiles with a pixel a work-item
       cannot run and the build says why; auto covers 4 pixels a work-item there; the tuner
       measures both tiles and keeps every group within the limit */
    size_t saved = cl.max_wg;
    cl.max_wg = 64;
    cs_kernel_opts o16 = o;
    o16.tile = 16;
    o16.pixels = 1;
    CHECK(cs_kernels_build(&cl, &o16, &k) == -1 && strstr(cs_last_error(), "rasterize") &&
              strstr(cs_last_error(), "16x16") && strstr(cs_last_error(), "pixels_per_item"),
          "16x16 tiles, 1 pixel a work-item, on a 64-item device: %s", cs_last_error());
    cs_kernels_release(&k);
    o16.pixels = 0;
    CHECK_OK(cs_kernels_build(&cl, &o16, &k));
    CHECK(k.opts.pixels == 4, "auto on a 64-item device: %d pixels a work-item", k.opts.pixels);
    cs_kernels_release(&k);
    CHECK_OK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_FORCE, &k, &t2));
    CHECK(t2.tile_ms[0] > 0 && t2.tile_ms[1] > 0, "a tile not measured: 16x16 %.3f ms, 8x8 %.3f ms", t2.tile_ms[0],
          t2.tile_ms[1]);
    CHECK(k.opts.tile == t2.tile && k.opts.tile * (k.opts.tile / k.opts.pixels) <= 64, "tile %d with %d pixels",
          k.opts.tile, k.opts.pixels);
    for (int g = 0; g < CS_WG_COUNT; g++) CHECK(k.wg[g] <= 64, "%s: %zu work-items", cs_wg_names[g], k.wg[g]);
    if (check_measured(&t2, &k)) return 1;
    cs_kernels_release(&k);
    cl.max_wg = saved;
    /* a measurement that cannot run (no memory for the synthetic view): auto trains on with
       the defaults, force reports why */
    snprintf(cl.cache_dir, sizeof cl.cache_dir, "%s/tune_test_oom", test_tmpdir());
    cl.mem.budget = 1 << 20;
    CHECK_OK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_AUTO, &k, &t2));
    CHECK(t2.source == CS_TUNED_DEFAULT && k.opts.tile == 16 && k.wg[CS_WG_ADAM] == CS_WG_DEFAULT,
          "failed measurement under auto: source %d tile %d", (int)t2.source, k.opts.tile);
    cs_kernels_release(&k);
    CHECK(cs_kernels_build_tuned(&cl, &o, CS_TUNE_FORCE, &k, &t2) == -1 && strstr(cs_last_error(), "budget"),
          "failed measurement under force: %s", cs_last_error());
    CHECK(cl.mem.cur_total == 0, "%zu bytes left allocated after the failed measurement", cl.mem.cur_total);
    cl.mem.budget = (size_t)-1;
    cs_cl_close(&cl);
    return 0;
}
