/* loop_probe: whether a device runs a long loop to its end (loop_probe.h). */
#include "loop_probe.h"

#include <stdlib.h>

#include "cl_runtime.h"
#include "util.h"

static const char *SRC = "__kernel void loop_probe(__global uint *out, uint n)\n"
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
static int run(cl_context ctx, cl_device_id dev, cl_command_queue q, cl_program *pr, cl_kernel *k, cl_mem *b,
               cl_uint *got)
{
    cl_int e;
    cl_uint n = CS_LOOP_PROBE_ITERATIONS;
    *pr = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e);
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
    int rc = run(ctx, dev, q, &pr, &k, &b, &got);
    if (b) clReleaseMemObject(b);
    if (k) clReleaseKernel(k);
    if (pr) clReleaseProgram(pr);
    if (!rc) *limited = got != cs_loop_probe_expect(CS_LOOP_PROBE_ITERATIONS);
    return rc;
}
