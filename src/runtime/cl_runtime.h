/* cl_runtime: the OpenCL device: discovery and choice, context and queue, capability flags
 * (float-atomics path, fast math), one launch helper, optional stage profiling. It also
 * holds the device's memory counters and program-cache settings, which cl_mem.h (the
 * accounting allocator) and cl_program.h (program build and binary cache) work on. No global
 * state: each cs_cl is one device and can live beside others in one process. */
#ifndef CS_CL_RUNTIME_H
#define CS_CL_RUNTIME_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { CS_ATOMIC_CAS = 0, CS_ATOMIC_EXT = 1, CS_ATOMIC_PTX = 2 } cs_atomic_path;
extern const char *const cs_atomic_path_names[3];

/* ---- memory counters (kept by cl_mem.c) ------------------------------------------------ */
typedef enum {
    CS_MEM_PARAMS, CS_MEM_OPTIMIZER, CS_MEM_GRADS, CS_MEM_DENSIFY, CS_MEM_IMAGES, CS_MEM_SCRATCH, CS_MEM_EVAL, CS_MEM_OTHER,
    CS_MEM_NCAT
} cs_mem_cat;
extern const char *const cs_mem_cat_names[CS_MEM_NCAT]; /* in cl_mem.c */

typedef struct {
    size_t cur[CS_MEM_NCAT], peak[CS_MEM_NCAT];
    size_t cur_total, peak_total;
    size_t window_peak;   /* peak since cs_mem_window_start (e.g. one evaluation) */
    size_t budget;        /* bytes; allocations beyond it fail with a clear message */
} cs_mem_stats;

/* ---- profiling ----------------------------------------------------------------------- */
#define CS_PROF_MAX_STAGES 16
#define CS_PROF_MAX_EVENTS 4096
#define CS_PROF_MAX_KERNELS 64
typedef struct {
    cl_kernel kernel;
    double ms;    /* summed durations */
    int launches;
} cs_prof_kernel;
typedef struct {
    int enabled;
    int n;
    cl_event ev[CS_PROF_MAX_EVENTS];
    int stage[CS_PROF_MAX_EVENTS];
    cl_kernel kernel[CS_PROF_MAX_EVENTS];
    double ms[CS_PROF_MAX_STAGES]; /* accumulated by cs_prof_collect */
    /* the same durations by kernel since the table was last cleared (clsplat bench) */
    cs_prof_kernel by_kernel[CS_PROF_MAX_KERNELS];
    int n_kernels;
    /* between consecutive kernels of one collection: the device's idle time (a kernel's start
       after the previous one's end), and the part of it before the kernel was even submitted
       (the device waiting on the host) */
    double gap_ms, starved_ms;
} cs_prof;

typedef struct cs_cl {
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue queue;
    int platform_index, device_index;
    char name[256], vendor[256], driver[128], device_version[128], platform_version[256];
    cl_ulong global_mem, max_alloc, local_mem;
    size_t max_wg;
    cl_uint compute_units;
    int is_cpu;
    cs_atomic_path atomics;
    int atomics_forced;     /* device.float_atomics chose it: a failed self-test is an error */
    /* 1: fma contraction and native_exp in the rasterizer (FAST_MATH in cl/common.h); on for
       NVIDIA, whose native_exp is ex2.approx (2 ulp); tests cover both settings */
    int fast_math;
    /* 1: the device stops loops after 65535 iterations a work-item (the loop probe below; Mesa
       22.3's llvmpipe): the backward takes the deterministic path, LPIPS the tiled convolution,
       untuned runs 8x8 tiles (tuning.c). CLSPLAT_ASSUME_LOOP_LIMIT=1 sets it on any device (tests) */
    int loop_limited;
    int loop_limit_told;    /* the warning about it was printed */
    /* program build (cl_program.c) */
    const char *kernel_dir; /* NULL: embedded sources */
    int use_cache;
    char cache_dir[1024];
    int last_build_cached;  /* 1 if the last build came from the cache */
    cs_mem_stats mem;
    cs_prof prof;
    /* kernels enqueued, and seconds the host spent blocked on the device's results in the
       training loop's waits (a host-bound run waits little): result.json */
    unsigned long long launches;
    double wait_seconds;
} cs_cl;

typedef struct {
    const char *device_spec;   /* "P:D", a name substring, or NULL/"" for the best device */
    const char *kernel_dir;    /* or NULL */
    int no_cache;
    int profiling;
    const char *cache_dir;     /* or NULL for the default */
    int atomics;               /* 0: chosen by the device; 1 + cs_atomic_path: forced (refused when absent) */
    int fast_math;             /* 0: chosen by the vendor; 1 off, 2 on */
} cs_cl_options;

/* A device as listed, without opening it. */
typedef struct {
    int p, d;
    int is_gpu, is_cpu;
    size_t mem;           /* global memory */
    char name[256];
} cs_cl_device_desc;

/* Every OpenCL device into a malloc'd array (the caller frees it). -1 with a message when
 * there is no platform or no device. */
int cs_cl_devices(cs_cl_device_desc **out, int *n);
/* Prints every platform and device (id P:D, name, vendor, version, memory, atomics path,
 * whether loops run to their end). */
int cs_cl_list(FILE *out);
/* Chooses and opens a device. -1 with a message. */
int cs_cl_open(cs_cl *cl, const cs_cl_options *opt);
/* Releases the queue and context (blocks until the queue is done). */
void cs_cl_close(cs_cl *cl);


/* One kernel argument: CS_ARG(lvalue) passes its bytes, CS_LOCAL(n) n bytes of local memory. */
typedef struct {
    size_t size;
    const void *value;
} cs_arg;
#define CS_ARG(x) ((cs_arg){sizeof(x), (const void *)&(x)})
#define CS_LOCAL(bytes) ((cs_arg){(size_t)(bytes), NULL})

/* Sets the NARGS arguments ARGS and enqueues K over GLOBAL (rounded up to LOCAL) in DIMS
 * dimensions; does not block. STAGE is a profiling bucket (or -1). A zero global size
 * launches nothing. -1 with a message naming the kernel, the argument and the OpenCL error. */
int cs_cl_launch(cs_cl *cl, cl_kernel k, int stage, int dims, const size_t *global, const size_t *local,
                 const cs_arg *args, int nargs);
/* cs_cl_launch with the arguments listed inline and their count computed:
 *   cs_cl_run(cl, k, stage, 1, &g, &l, CS_ARG(n), CS_ARG(buf.mem)) */
#define cs_cl_run(cl, k, stage, dims, global, local, ...)                                               \
    cs_cl_launch((cl), (k), (stage), (dims), (global), (local), (const cs_arg[]){__VA_ARGS__},          \
                 (int)(sizeof((const cs_arg[]){__VA_ARGS__}) / sizeof(cs_arg)))

/* Blocks until the queue is empty (clFinish); -1 with a message on an error. */
int cs_cl_finish(cs_cl *cl);
/* Blocks (clFinish), then adds the profiled events' durations (ms) into prof.ms per stage and
 * into prof.by_kernel per kernel (cleared by setting prof.n_kernels to 0). */
int cs_prof_collect(cs_cl *cl);
/* Prints HEAD, then prof.by_kernel slowest first: each kernel's time and launches divided by DIV
 * (the passes or views measured), four to a line. Returns the kernels' summed time over DIV (ms). */
double cs_prof_print_kernels(const cs_cl *cl, double div, const char *head);
/* Stage profiling for a measurement on a queue opened without it: begin finishes the queue
 * and swaps in a profiling one (nothing to do when profiling is on already); end restores. */
typedef struct {
    cl_command_queue queue;
    int enabled;
} cs_prof_saved;
/* Both block (clFinish) around the swap. */
int cs_cl_profile_begin(cs_cl *cl, cs_prof_saved *saved);
int cs_cl_profile_end(cs_cl *cl, cs_prof_saved *saved);

/* ---- loop probe ------------------------------------------------------------------------
 * Does the device run a loop to its end? Mesa 22.3's llvmpipe (rusticl's CPU device in Debian
 * 12) stops every loop of a kernel invocation once the loops together have run 65535
 * iterations, with no error (tools/rusticl_repro/loop_limit.c). A kernel whose
 * work-items loop longer computes wrong results there: the rasterizer's compare-and-swap
 * accumulation over a tile of many Gaussians, LPIPS's direct convolution. The probe runs one
 * work-item through 100000 iterations of a recurrence and compares the result with the host's. */
/* The iterations the probe asks for: above llvmpipe's 65535 */
#define CS_LOOP_PROBE_ITERATIONS 100000u

/* *limited = 1 when the device stopped the probe's loop early, 0 when it ran to the end.
 * -1 with a message naming the failed OpenCL call (and the build log). */
int cs_loop_probe(cl_context ctx, cl_device_id dev, cl_command_queue q, int *limited);

/* The recurrence's value after N steps on the host (what the device must return). */
cl_uint cs_loop_probe_expect(cl_uint n);

/* The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"). */
const char *cs_cl_strerror(cl_int err);
/* Checked call for the host side: on error records call, error name, file and line. */
#define CS_CHECK(call)                                                                             \
    do {                                                                                           \
        cl_int cs_err_ = (call);                                                                   \
        if (cs_err_ != CL_SUCCESS)                                                                 \
            return cs_fail("%s failed: %s (%s:%d)", #call, cs_cl_strerror(cs_err_), __FILE__, __LINE__); \
    } while (0)

#endif
