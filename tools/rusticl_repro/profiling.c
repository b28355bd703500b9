/* profiling: Mesa 22.3's rusticl (Debian 12's mesa-opencl-icd, llvmpipe) answers
 * clGetEventProfilingInfo with placeholders: QUEUED 0, SUBMIT 1, START 2, END 3 for a kernel
 * that runs for tens of milliseconds, where PoCL reports real nanoseconds. clsplat's tuner and
 * `clsplat bench` time kernels through these events; on such a device the tuner says so and
 * keeps the default sizes (#24), bench prints only the wall time.
 *   build: cc -o profiling profiling.c -lOpenCL
 *   run:   OCL_ICD_VENDORS=/etc/OpenCL/vendors/rusticl.icd RUSTICL_ENABLE=llvmpipe ./profiling
 * Exit status 1 when END - START is under a microsecond (the placeholders), 0 otherwise. */
#include "repro.h"

static const char *SRC = "__kernel void spin(__global float *a)\n"
                         "{\n"
                         "    int i = get_global_id(0);\n"
                         "    float x = a[i];\n"
                         "    for (int j = 0; j < 20000; j++) x = x * 1.0001f + 0.5f;\n"
                         "    a[i] = x;\n"
                         "}\n";

int main(void)
{
    repro r;
    int rc = repro_open(&r, SRC, "spin", CL_QUEUE_PROFILING_ENABLE);
    if (rc) return rc;
    cl_int e;
    float zero = 0.f;
    cl_mem b = clCreateBuffer(r.ctx, CL_MEM_READ_WRITE, 4096 * sizeof(float), NULL, &e);
    TRY(e);
    TRY(clEnqueueFillBuffer(r.q, b, &zero, sizeof zero, 0, 4096 * sizeof(float), 0, NULL, NULL));
    TRY(clSetKernelArg(r.k, 0, sizeof b, &b));
    size_t g = 4096, l = 32;
    cl_event ev;
    TRY(clEnqueueNDRangeKernel(r.q, r.k, 1, NULL, &g, &l, 0, NULL, &ev));
    TRY(clFinish(r.q));
    static const cl_profiling_info WHAT[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                              CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    static const char *const NAMES[4] = {"queued", "submit", "start", "end"};
    cl_ulong t[4];
    for (int i = 0; i < 4; i++) {
        TRY(clGetEventProfilingInfo(ev, WHAT[i], sizeof t[i], &t[i], NULL));
        printf("%s: %s %llu ns\n", r.name, NAMES[i], (unsigned long long)t[i]);
    }
    unsigned long long ran = (unsigned long long)(t[3] - t[2]);
    printf("%s: end - start = %llu ns for 4096 x 20000 dependent multiply-adds (%s)\n", r.name, ran,
           ran < 1000 ? "placeholders" : "plausible");
    clReleaseEvent(ev);
    clReleaseMemObject(b);
    repro_close(&r);
    return ran < 1000 ? 1 : 0;
}
