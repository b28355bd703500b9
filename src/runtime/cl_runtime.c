/* cl_runtime: device discovery and choice, the queue, launches and stage profiling. */
#include "cl_runtime.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <CL/cl_ext.h>

#include "util.h"

/* cl_ext_float_atomics names, for headers older than the extension */
#ifndef CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT
#define CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT 0x4231
#endif
#ifndef CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT
#define CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT (1 << 1)
#endif

const char *const cs_atomic_path_names[3] = {"cas-loop", "cl_ext_float_atomics", "nvidia-ptx-red"};

const char *cs_cl_strerror(cl_int e)
{
    switch (e) {
#define E(x) case x: return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_BUILD_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS) E(CL_INVALID_PROGRAM)
        E(CL_INVALID_KERNEL_NAME) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX) E(CL_INVALID_ARG_VALUE)
        E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS) E(CL_INVALID_WORK_DIMENSION)
        E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE) E(CL_INVALID_GLOBAL_OFFSET)
        E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT) E(CL_INVALID_BUFFER_SIZE)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_PLATFORM) E(CL_INVALID_OPERATION) E(CL_INVALID_GLOBAL_WORK_SIZE)
        E(CL_MISALIGNED_SUB_BUFFER_OFFSET) E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
        E(CL_PLATFORM_NOT_FOUND_KHR)
#undef E
    default: return "unknown OpenCL error";
    }
}

/* ---- device discovery ----------------------------------------------------------------- */

typedef struct {
    cl_platform_id platform;
    cl_device_id device;
    int p, d;
    cl_device_type type;
    cl_ulong mem;
} dev_entry;

static int enumerate(dev_entry **out, int *n)
{
    cl_uint np = 0;
    cl_int e = clGetPlatformIDs(0, NULL, &np);
    if (e == CL_PLATFORM_NOT_FOUND_KHR || np == 0)
        return cs_fail("no OpenCL platform found (install an OpenCL driver, e.g. pocl-opencl-icd for the CPU)");
    CS_CHECK(e);
    cl_platform_id plats[16];
    if (np > 16) np = 16;
    CS_CHECK(clGetPlatformIDs(np, plats, NULL));
    dev_entry *list = NULL;
    int cnt = 0;
    for (cl_uint p = 0; p < np; p++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        cl_device_id devs[32];
        if (nd > 32) nd = 32;
        CS_CHECK(clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL));
        dev_entry *grown = realloc(list, sizeof *list * (cnt + nd));
        if (!grown) {
            free(list);
            return cs_fail("out of host memory (device list)");
        }
        list = grown;
        for (cl_uint d = 0; d < nd; d++) {
            dev_entry *de = &list[cnt++];
            de->platform = plats[p];
            de->device = devs[d];
            de->p = (int)p;
            de->d = (int)d;
            clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof de->type, &de->type, NULL);
            clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof de->mem, &de->mem, NULL);
        }
    }
    if (!cnt) {
        free(list);
        return cs_fail("OpenCL platforms exist but report no devices");
    }
    *out = list;
    *n = cnt;
    return 0;
}

/* The float-atomics paths the device has, as bits 1 << cs_atomic_path: the CAS loop always,
   NVIDIA's PTX red.global.add.f32 on NVIDIA, cl_ext_float_atomics with global fp32 add. */
static unsigned atomics_available(cl_device_id dev, const char *vendor)
{
    unsigned bits = 1u << CS_ATOMIC_CAS;
    if (strstr(vendor, "NVIDIA")) bits |= 1u << CS_ATOMIC_PTX;
    size_t sz = 0;
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &sz);
    char *ext = malloc(sz + 1);
    if (ext && clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sz, ext, NULL) == CL_SUCCESS) {
        ext[sz] = '\0';
        cl_bitfield caps = 0;
        if (strstr(ext, "cl_ext_float_atomics") &&
            clGetDeviceInfo(dev, CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT, sizeof caps, &caps, NULL) == CL_SUCCESS &&
            (caps & CL_DEVICE_GLOBAL_FP_ATOMIC_ADD_EXT))
            bits |= 1u << CS_ATOMIC_EXT;
    }
    free(ext);
    return bits;
}

/* the preferred path of those available: PTX, then the extension, then the CAS loop */
static cs_atomic_path pick_atomics(unsigned bits)
{
    return bits & (1u << CS_ATOMIC_PTX) ? CS_ATOMIC_PTX : bits & (1u << CS_ATOMIC_EXT) ? CS_ATOMIC_EXT : CS_ATOMIC_CAS;
}

/* "cas, ext, ptx" for the paths in BITS */
static void atomics_names(unsigned bits, char *out, size_t n)
{
    out[0] = '\0';
    for (int p = 0; p < 3; p++)
        if (bits & (1u << p)) {
            size_t used = strlen(out);
            snprintf(out + used, n - used, "%s%s", used ? ", " : "", cs_atomic_path_names[p]);
        }
}

/* fma contraction and native_exp per pixel: on for NVIDIA; CLSPLAT_FAST_MATH=0|1 overrides
   (A/B runs) */
static int pick_fast_math(const char *vendor, int forced)
{
    if (forced) return forced == 2;
    const char *fm = getenv("CLSPLAT_FAST_MATH");
    if (fm && (fm[0] == '0' || fm[0] == '1')) return fm[0] == '1';
    return strstr(vendor, "NVIDIA") != NULL;
}

static void info_str(cl_device_id d, cl_device_info what, char *buf, size_t n)
{
    buf[0] = '\0';
    clGetDeviceInfo(d, what, n, buf, NULL);
    buf[n - 1] = '\0';
}

int cs_cl_devices(cs_cl_device_desc **out, int *n)
{
    dev_entry *list;
    if (enumerate(&list, n)) return -1;
    *out = calloc((size_t)*n, sizeof **out);
    if (!*out) {
        free(list);
        return cs_fail("out of host memory (device list)");
    }
    for (int i = 0; i < *n; i++) {
        cs_cl_device_desc *d = &(*out)[i];
        d->p = list[i].p, d->d = list[i].d, d->mem = (size_t)list[i].mem;
        d->is_gpu = (list[i].type & CL_DEVICE_TYPE_GPU) != 0;
        d->is_cpu = (list[i].type & CL_DEVICE_TYPE_CPU) != 0;
        info_str(list[i].device, CL_DEVICE_NAME, d->name, sizeof d->name);
    }
    free(list);
    return 0;
}

/* ---- loop probe (see cl_runtime.h) ------------------------------------------------------ */
static const char *LOOP_PROBE_SRC = "__kernel void loop_probe(__global uint *out, uint n)\n"
                                    "{\n"
                                    "    uint x = 1u;\n"
                                    "    for (uint i = 0u; i < n; i++) x = x * 1664525u + 1013904223u;\n"
                                    "    out[0] = x;\n"
                                    "}\n";

cl_uint cs_loop_probe_expect(cl_uint n)
{
    cl_uint x = 1u;
    for (cl_uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
    return x;
}

/* Builds and runs the probe; -1 with a message */
static int probe_run(cl_context ctx, cl_device_id dev, cl_command_queue q, cl_program *pr, cl_kernel *k, cl_mem *b,
                     cl_uint *got)
{
    cl_int e;
    cl_uint n = CS_LOOP_PROBE_ITERATIONS;
    *pr = clCreateProgramWithSource(ctx, 1, &LOOP_PROBE_SRC, NULL, &e);
    if (!*pr) return cs_fail("clCreateProgramWithSource (loop probe) failed: %s", cs_cl_strerror(e));
    e = clBuildProgram(*pr, 1, &dev, "", NULL, NULL);
    if (e != CL_SUCCESS) {
        char log[2048] = "";
        clGetProgramBuildInfo(*pr, dev, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        return cs_fail("clBuildProgram (loop probe) failed: %s\n%s", cs_cl_strerror(e), log);
    }
    *k = clCreateKernel(*pr, "loop_probe", &e);
    if (!*k) return cs_fail("clCreateKernel(loop_probe) failed: %s", cs_cl_strerror(e));
    *b = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, sizeof(cl_uint), NULL, &e);
    if (!*b) return cs_fail("clCreateBuffer (loop probe, 4 bytes) failed: %s", cs_cl_strerror(e));
    size_t g = 1;
    CS_CHECK(clSetKernelArg(*k, 0, sizeof *b, b));
    CS_CHECK(clSetKernelArg(*k, 1, sizeof n, &n));
    CS_CHECK(clEnqueueNDRangeKernel(q, *k, 1, NULL, &g, NULL, 0, NULL, NULL));
    CS_CHECK(clEnqueueReadBuffer(q, *b, CL_TRUE, 0, sizeof *got, got, 0, NULL, NULL));
    return 0;
}

int cs_loop_probe(cl_context ctx, cl_device_id dev, cl_command_queue q, int *limited)
{
    cl_program pr = NULL;
    cl_kernel k = NULL;
    cl_mem b = NULL;
    cl_uint got = 0;
    int rc = probe_run(ctx, dev, q, &pr, &k, &b, &got);
    if (b) clReleaseMemObject(b);
    if (k) clReleaseKernel(k);
    if (pr) clReleaseProgram(pr);
    if (!rc) *limited = got != cs_loop_probe_expect(CS_LOOP_PROBE_ITERATIONS);
    return rc;
}

static const char *const LOOP_LIMITED_PATHS =
    "stopped after 65535 iterations (Mesa llvmpipe's loop limiter): the backward runs the deterministic path, LPIPS "
    "the tiled convolution, untuned runs 8x8 tiles; a tile of enough Gaussians to loop past the limit still renders "
    "wrong there";

/* Whether DEV runs loops to their end, by the probe in a context of its own */
static void print_loops(FILE *out, cl_device_id dev)
{
    cl_int e;
    int limited = 0;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    cl_command_queue q = ctx ? clCreateCommandQueue(ctx, dev, 0, &e) : NULL;
    if (!q || cs_loop_probe(ctx, dev, q, &limited))
        fprintf(out, "     loops: not probed (%s)\n", q ? cs_last_error() : cs_cl_strerror(e));
    else
        fprintf(out, "     loops: %s\n", limited ? LOOP_LIMITED_PATHS : "run to their end");
    if (q) clReleaseCommandQueue(q);
    if (ctx) clReleaseContext(ctx);
}

int cs_cl_list(FILE *out)
{
    dev_entry *list;
    int n;
    if (enumerate(&list, &n)) return -1;
    for (int i = 0; i < n; i++) {
        char name[256], vendor[256], ver[128], pname[256];
        cl_ulong gmem = 0, amem = 0, lmem = 0;
        info_str(list[i].device, CL_DEVICE_NAME, name, sizeof name);
        info_str(list[i].device, CL_DEVICE_VENDOR, vendor, sizeof vendor);
        info_str(list[i].device, CL_DEVICE_VERSION, ver, sizeof ver);
        clGetPlatformInfo(list[i].platform, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
        clGetDeviceInfo(list[i].device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof gmem, &gmem, NULL);
        clGetDeviceInfo(list[i].device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof amem, &amem, NULL);
        clGetDeviceInfo(list[i].device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
        fprintf(out, "%d:%d  %s\n", list[i].p, list[i].d, name);
        fprintf(out, "     platform: %s\n     vendor: %s\n     version: %s\n     type: %s\n", pname, vendor, ver,
                (list[i].type & CL_DEVICE_TYPE_GPU) ? "GPU" : (list[i].type & CL_DEVICE_TYPE_CPU) ? "CPU" : "other");
        fprintf(out, "     global memory: %.0f MiB, max allocation: %.0f MiB, local memory: %.0f KiB\n",
                gmem / 1048576.0, amem / 1048576.0, lmem / 1024.0);
        unsigned bits = atomics_available(list[i].device, vendor);
        char names[64];
        atomics_names(bits, names, sizeof names);
        fprintf(out, "     float atomics: %s (available: %s; device.float_atomics forces one), fast math: %s\n",
                cs_atomic_path_names[pick_atomics(bits)], names, pick_fast_math(vendor, 0) ? "on" : "off");
        print_loops(out, list[i].device);
    }
    free(list);
    return 0;
}

static int ci_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i])) i++;
        if (i == n) return 1;
    }
    return 0;
}

static int choose(dev_entry *list, int n, const char *spec)
{
    if (spec && spec[0]) {
        int p, d;
        char extra;
        if (sscanf(spec, "%d:%d%c", &p, &d, &extra) == 2) {
            for (int i = 0; i < n; i++)
                if (list[i].p == p && list[i].d == d) return i;
            return cs_fail("device %s does not exist (see 'clsplat devices')", spec);
        }
        for (int i = 0; i < n; i++) {
            char name[256];
            info_str(list[i].device, CL_DEVICE_NAME, name, sizeof name);
            if (ci_contains(name, spec)) return i;
        }
        return cs_fail("no device name contains '%s' (see 'clsplat devices')", spec);
    }
    int best = -1;
    for (int i = 0; i < n; i++) {
        int gpu = (list[i].type & CL_DEVICE_TYPE_GPU) != 0;
        if (best < 0) {
            best = i;
            continue;
        }
        int bgpu = (list[best].type & CL_DEVICE_TYPE_GPU) != 0;
        if (gpu > bgpu || (gpu == bgpu && list[i].mem > list[best].mem)) best = i;
    }
    return best;
}

int cs_cl_open(cs_cl *cl, const cs_cl_options *opt)
{
    memset(cl, 0, sizeof *cl);
    dev_entry *list;
    int n;
    if (enumerate(&list, &n)) return -1;
    int i = choose(list, n, opt ? opt->device_spec : NULL);
    if (i < 0) {
        free(list);
        return -1;
    }
    cl->platform = list[i].platform;
    cl->device = list[i].device;
    cl->platform_index = list[i].p;
    cl->device_index = list[i].d;
    cl->is_cpu = (list[i].type & CL_DEVICE_TYPE_CPU) != 0;
    free(list);
    info_str(cl->device, CL_DEVICE_NAME, cl->name, sizeof cl->name);
    info_str(cl->device, CL_DEVICE_VENDOR, cl->vendor, sizeof cl->vendor);
    info_str(cl->device, CL_DEVICE_VERSION, cl->device_version, sizeof cl->device_version);
    info_str(cl->device, CL_DRIVER_VERSION, cl->driver, sizeof cl->driver);
    clGetPlatformInfo(cl->platform, CL_PLATFORM_VERSION, sizeof cl->platform_version, cl->platform_version, NULL);
    CS_CHECK(clGetDeviceInfo(cl->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof cl->global_mem, &cl->global_mem, NULL));
    CS_CHECK(clGetDeviceInfo(cl->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof cl->max_alloc, &cl->max_alloc, NULL));
    CS_CHECK(clGetDeviceInfo(cl->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof cl->local_mem, &cl->local_mem, NULL));
    CS_CHECK(clGetDeviceInfo(cl->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof cl->max_wg, &cl->max_wg, NULL));
    CS_CHECK(clGetDeviceInfo(cl->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cl->compute_units, &cl->compute_units,
                             NULL));
    unsigned bits = atomics_available(cl->device, cl->vendor);
    int forced = opt ? opt->atomics : 0;
    if (forced > 0 && !(bits & (1u << (forced - 1)))) {
        char names[64];
        atomics_names(bits, names, sizeof names);
        static const char *const keys[3] = {"cas", "ext", "ptx"};
        return cs_fail("device.float_atomics %s: %s (%s) does not have the %s path (it has: %s)", keys[forced - 1],
                       cl->name, cl->vendor, cs_atomic_path_names[forced - 1], names);
    }
    cl->atomics = forced > 0 ? (cs_atomic_path)(forced - 1) : pick_atomics(bits);
    cl->atomics_forced = forced > 0;
    cl->fast_math = pick_fast_math(cl->vendor, opt ? opt->fast_math : 0);
    cl_int err;
    cl->ctx = clCreateContext(NULL, 1, &cl->device, NULL, NULL, &err);
    if (!cl->ctx) return cs_fail("clCreateContext failed for %s: %s", cl->name, cs_cl_strerror(err));
    cl->prof.enabled = opt && opt->profiling;
    cl->queue = clCreateCommandQueue(cl->ctx, cl->device, cl->prof.enabled ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    if (!cl->queue) {
        clReleaseContext(cl->ctx);
        return cs_fail("clCreateCommandQueue failed for %s: %s", cl->name, cs_cl_strerror(err));
    }
    /* 4 bytes for a moment, released before any of the engine's memory exists */
    if (cs_loop_probe(cl->ctx, cl->device, cl->queue, &cl->loop_limited)) {
        cs_cl_close(cl);
        return -1;
    }
    const char *ll = getenv("CLSPLAT_ASSUME_LOOP_LIMIT");
    if (ll && !strcmp(ll, "1")) cl->loop_limited = 1;
    cl->kernel_dir = opt ? opt->kernel_dir : NULL;
    cl->use_cache = !(opt && opt->no_cache);
    if (opt && opt->cache_dir)
        snprintf(cl->cache_dir, sizeof cl->cache_dir, "%s", opt->cache_dir);
    else if (getenv("XDG_CACHE_HOME") && getenv("XDG_CACHE_HOME")[0])
        snprintf(cl->cache_dir, sizeof cl->cache_dir, "%s/clsplat/kernels", getenv("XDG_CACHE_HOME"));
    else if (getenv("HOME") && getenv("HOME")[0])
        snprintf(cl->cache_dir, sizeof cl->cache_dir, "%s/.cache/clsplat/kernels", getenv("HOME"));
    else
        snprintf(cl->cache_dir, sizeof cl->cache_dir, "/tmp/clsplat-kernels");
    cl->mem.budget = (size_t)-1;
    return 0;
}

void cs_cl_close(cs_cl *cl)
{
    for (int i = 0; i < cl->prof.n; i++) clReleaseEvent(cl->prof.ev[i]);
    cl->prof.n = 0;
    if (cl->queue) clReleaseCommandQueue(cl->queue);
    if (cl->ctx) clReleaseContext(cl->ctx);
    cl->queue = NULL;
    cl->ctx = NULL;
}

/* ---- launches --------------------------------------------------------------------------- */

int cs_cl_launch(cs_cl *cl, cl_kernel k, int stage, int dims, const size_t *global, const size_t *local,
                 const cs_arg *args, int nargs)
{
    char kname[128] = "?";
    for (int i = 0; i < nargs; i++) {
        cl_int e = clSetKernelArg(k, (cl_uint)i, args[i].size, args[i].value);
        if (e != CL_SUCCESS) {
            clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof kname, kname, NULL);
            return cs_fail("clSetKernelArg(%s, arg %d, %zu bytes) failed: %s", kname, i, args[i].size,
                           cs_cl_strerror(e));
        }
    }
    size_t g[3];
    for (int d = 0; d < dims; d++) {
        g[d] = global[d];
        if (local && local[d]) g[d] = (g[d] + local[d] - 1) / local[d] * local[d];
        if (g[d] == 0) return 0; /* nothing to do */
    }
    cl_event ev = NULL;
    cl->launches++;
    int want_ev = cl->prof.enabled && stage >= 0 && cl->prof.n < CS_PROF_MAX_EVENTS;
    cl_int e = clEnqueueNDRangeKernel(cl->queue, k, (cl_uint)dims, NULL, g, local, 0, NULL, want_ev ? &ev : NULL);
    if (e != CL_SUCCESS) {
        clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof kname, kname, NULL);
        return cs_fail("launching kernel %s (global %zu, local %zu) failed: %s", kname, g[0], local ? local[0] : 0,
                       cs_cl_strerror(e));
    }
    if (want_ev) {
        cl->prof.ev[cl->prof.n] = ev;
        cl->prof.kernel[cl->prof.n] = k;
        cl->prof.stage[cl->prof.n++] = stage;
    }
    return 0;
}

/* adds MS to kernel K's row of the table (a new row while there is room) */
static void prof_by_kernel(cs_prof *p, cl_kernel k, double ms)
{
    int i = 0;
    while (i < p->n_kernels && p->by_kernel[i].kernel != k) i++;
    if (i == p->n_kernels) {
        if (i == CS_PROF_MAX_KERNELS) return;
        p->by_kernel[p->n_kernels++] = (cs_prof_kernel){k, 0.0, 0};
    }
    p->by_kernel[i].ms += ms;
    p->by_kernel[i].launches++;
}

int cs_prof_collect(cs_cl *cl)
{
    CS_CHECK(clFinish(cl->queue));
    cl_ulong prev_end = 0;
    for (int i = 0; i < cl->prof.n; i++) {
        cl_ulong a = 0, b = 0, sub = 0;
        clGetEventProfilingInfo(cl->prof.ev[i], CL_PROFILING_COMMAND_START, sizeof a, &a, NULL);
        clGetEventProfilingInfo(cl->prof.ev[i], CL_PROFILING_COMMAND_END, sizeof b, &b, NULL);
        clGetEventProfilingInfo(cl->prof.ev[i], CL_PROFILING_COMMAND_SUBMIT, sizeof sub, &sub, NULL);
        if (prev_end && a > prev_end) {
            cl->prof.gap_ms += (double)(a - prev_end) * 1e-6;
            if (sub > prev_end) cl->prof.starved_ms += (double)((sub < a ? sub : a) - prev_end) * 1e-6;
        }
        prev_end = b > prev_end ? b : prev_end;
        double ms = (double)(b - a) * 1e-6;
        if (cl->prof.stage[i] < CS_PROF_MAX_STAGES) cl->prof.ms[cl->prof.stage[i]] += ms;
        prof_by_kernel(&cl->prof, cl->prof.kernel[i], ms);
        clReleaseEvent(cl->prof.ev[i]);
    }
    cl->prof.n = 0;
    return 0;
}

static int by_ms_desc(const void *a, const void *b)
{
    double x = ((const cs_prof_kernel *)a)->ms, y = ((const cs_prof_kernel *)b)->ms;
    return (x < y) - (x > y);
}

double cs_prof_print_kernels(const cs_cl *cl, double div, const char *head)
{
    cs_prof_kernel t[CS_PROF_MAX_KERNELS];
    int n = cl->prof.n_kernels;
    double sum = 0;
    memcpy(t, cl->prof.by_kernel, sizeof(cs_prof_kernel) * (size_t)n);
    qsort(t, (size_t)n, sizeof t[0], by_ms_desc);
    printf("%s", head);
    for (int i = 0; i < n; i++) {
        char name[64] = "?";
        clGetKernelInfo(t[i].kernel, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL);
        printf("%s %s %.3f ms x%.3g", i % 4 ? "," : "\n   ", name, t[i].ms / div, (double)t[i].launches / div);
        sum += t[i].ms / div;
    }
    printf("\n");
    return sum;
}

int cs_cl_profile_begin(cs_cl *cl, cs_prof_saved *saved)
{
    saved->queue = NULL;
    saved->enabled = cl->prof.enabled;
    if (cl->prof.enabled) return 0;
    CS_CHECK(clFinish(cl->queue));
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(cl->ctx, cl->device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) return cs_fail("clCreateCommandQueue (profiling) failed: %s", cs_cl_strerror(err));
    saved->queue = cl->queue;
    cl->queue = q;
    cl->prof.enabled = 1;
    return 0;
}

int cs_cl_profile_end(cs_cl *cl, cs_prof_saved *saved)
{
    if (!saved->queue) return 0;
    cl_int e = clFinish(cl->queue);
    for (int i = 0; i < cl->prof.n; i++) clReleaseEvent(cl->prof.ev[i]);
    cl->prof.n = 0;
    clReleaseCommandQueue(cl->queue);
    cl->queue = saved->queue;
    cl->prof.enabled = saved->enabled;
    saved->queue = NULL;
    return e == CL_SUCCESS ? 0 : cs_fail("clFinish (profiling queue) failed: %s", cs_cl_strerror(e));
}

int cs_cl_finish(cs_cl *cl)
{
    cl_int e = clFinish(cl->queue);
    return e == CL_SUCCESS ? 0 : cs_fail("clFinish failed: %s (%s:%d)", cs_cl_strerror(e), __FILE__, __LINE__);
}
