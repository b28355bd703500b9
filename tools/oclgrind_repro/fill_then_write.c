/* fill_then_write: a minimal reproducer of an oclgrind 21.10 false positive (make
 * check-oclgrind notes it; #24). A buffer zero-filled with clEnqueueFillBuffer, then written by
 * one kernel (one work-item a work-group writes its group's total), is reported by
 * `oclgrind --uninitialized` as uninitialized when a second kernel reads it: every entry but the
 * first, although the values read are the ones written (the output is right). Without the fill
 * (mode 0) there is no report. clsplat zero-fills every buffer it allocates, so its scans
 * (scan_block -> scan_single) hit this under --uninitialized.
 *   build: cc -o fill_then_write fill_then_write.c -lOpenCL
 *   run:   oclgrind --uninitialized ./fill_then_write 1   (reports)   ... 0 (clean) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *SRC =
"#define WG 256\n"
"inline uint wg_scan_inclusive(uint v, __local uint *buf)\n"
"{\n"
"    int lid = get_local_id(0);\n"
"    buf[lid] = v;\n"
"    barrier(CLK_LOCAL_MEM_FENCE);\n"
"    for (int off = 1; off < WG; off <<= 1) {\n"
"        uint add = lid >= off ? buf[lid - off] : 0u;\n"
"        barrier(CLK_LOCAL_MEM_FENCE);\n"
"        buf[lid] += add;\n"
"        barrier(CLK_LOCAL_MEM_FENCE);\n"
"    }\n"
"    uint r = buf[lid];\n"
"    barrier(CLK_LOCAL_MEM_FENCE);\n"
"    return r;\n"
"}\n"
"__kernel void scan_block(__global uint *data, uint off, uint n, __global uint *sums, uint sums_off)\n"
"{\n"
"    __local uint buf[WG];\n"
"    int lid = get_local_id(0);\n"
"    size_t base = (size_t)get_group_id(0) * (WG * IPT) + (size_t)lid * IPT;\n"
"    uint v[IPT], sum = 0;\n"
"    for (int k = 0; k < IPT; k++) {\n"
"        v[k] = base + k < n ? data[off + base + k] : 0u;\n"
"        sum += v[k];\n"
"    }\n"
"    uint incl = wg_scan_inclusive(sum, buf);\n"
"    uint run = incl - sum;\n"
"    for (int k = 0; k < IPT; k++) {\n"
"        if (base + k < n) data[off + base + k] = run;\n"
"        run += v[k];\n"
"    }\n"
"    if (lid == WG - 1) sums[sums_off + get_group_id(0)] = incl;\n"
"}\n"
"__kernel void reader(__global const uint *sums, uint nb, __global uint *out)\n"
"{\n"
"    __local uint buf[WG];\n"
"    uint lid = get_local_id(0);\n"
"    uint v = lid < nb ? sums[lid] : 0u;\n"
"    buf[lid] = v;\n"
"    barrier(CLK_LOCAL_MEM_FENCE);\n"
"    out[lid] = buf[lid];\n"
"}\n";

int main(int argc, char **argv)
{
    int fill = argc > 1 ? atoi(argv[1]) : 1;
    cl_platform_id p;
    cl_device_id d;
    cl_int e;
    if (clGetPlatformIDs(1, &p, NULL) != CL_SUCCESS || clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL) != CL_SUCCESS) {
        fprintf(stderr, "no OpenCL device\n");
        return 1;
    }
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
    cl_program pr = clCreateProgramWithSource(c, 1, &SRC, NULL, &e);
    if (clBuildProgram(pr, 1, &d, "-DIPT=4", NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "build failed\n");
        return 1;
    }
    cl_kernel k1 = clCreateKernel(pr, "scan_block", &e), k2 = clCreateKernel(pr, "reader", &e);
    cl_uint n = 8 * 256 * 4, nb = 8, off = 0, z = 0, res[8];
    cl_uint *in = malloc(4 * n);
    for (cl_uint i = 0; i < n; i++) in[i] = 1;
    cl_mem bi = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 4 * n, in, &e);
    cl_mem bs = clCreateBuffer(c, CL_MEM_READ_WRITE, 4 * 256, NULL, &e);
    cl_mem bo = clCreateBuffer(c, CL_MEM_READ_WRITE, 4 * 256, NULL, &e);
    if (fill) clEnqueueFillBuffer(q, bs, &z, 4, 0, 4 * 256, 0, NULL, NULL);
    clSetKernelArg(k1, 0, sizeof bi, &bi);
    clSetKernelArg(k1, 1, 4, &off);
    clSetKernelArg(k1, 2, 4, &n);
    clSetKernelArg(k1, 3, sizeof bs, &bs);
    clSetKernelArg(k1, 4, 4, &off);
    clSetKernelArg(k2, 0, sizeof bs, &bs);
    clSetKernelArg(k2, 1, 4, &nb);
    clSetKernelArg(k2, 2, sizeof bo, &bo);
    size_t g = 256 * nb, l = 256, g2 = 256;
    clEnqueueNDRangeKernel(q, k1, 1, NULL, &g, &l, 0, NULL, NULL);
    clEnqueueNDRangeKernel(q, k2, 1, NULL, &g2, &l, 0, NULL, NULL);
    clEnqueueReadBuffer(q, bo, CL_TRUE, 0, sizeof res, res, 0, NULL, NULL);
    printf("fill %d: group totals %u %u ... %u (each should be 1024)\n", fill, res[0], res[1], res[7]);
    free(in);
    return 0;
}
