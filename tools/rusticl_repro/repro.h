/* repro.h: what the rusticl reproducers share (each stays one file to build with
 * `cc -o X X.c -lOpenCL` in this folder): TRY for a checked call, and repro_open, which takes
 * the first device of the first platform (select rusticl with OCL_ICD_VENDORS) and builds one
 * kernel from source. */
#ifndef REPRO_H
#define REPRO_H
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

/* returns 2 from the calling function when CALL fails, naming it */
#define TRY(call)                                                                                   \
    do {                                                                                            \
        cl_int e_ = (call);                                                                         \
        if (e_ != CL_SUCCESS) {                                                                     \
            fprintf(stderr, "%s failed: %d (line %d)\n", #call, e_, __LINE__);                      \
            return 2;                                                                               \
        }                                                                                           \
    } while (0)

typedef struct {
    cl_device_id dev;
    char name[256];
    cl_context ctx;
    cl_command_queue q;
    cl_program prog;
    cl_kernel k;
} repro;

/* The first device, a queue with PROPS, and kernel KERNEL of SRC built; 2 on an OpenCL error */
static int repro_open(repro *r, const char *src, const char *kernel, cl_command_queue_properties props)
{
    cl_platform_id p;
    cl_int e;
    TRY(clGetPlatformIDs(1, &p, NULL));
    TRY(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &r->dev, NULL));
    TRY(clGetDeviceInfo(r->dev, CL_DEVICE_NAME, sizeof r->name, r->name, NULL));
    r->ctx = clCreateContext(NULL, 1, &r->dev, NULL, NULL, &e);
    TRY(e);
    r->q = clCreateCommandQueue(r->ctx, r->dev, props, &e);
    TRY(e);
    r->prog = clCreateProgramWithSource(r->ctx, 1, &src, NULL, &e);
    TRY(e);
    TRY(clBuildProgram(r->prog, 1, &r->dev, "", NULL, NULL));
    r->k = clCreateKernel(r->prog, kernel, &e);
    TRY(e);
    return 0;
}

static void repro_close(repro *r)
{
    clReleaseKernel(r->k);
    clReleaseProgram(r->prog);
    clReleaseCommandQueue(r->q);
    clReleaseContext(r->ctx);
}

#endif
