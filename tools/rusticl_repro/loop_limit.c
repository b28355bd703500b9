/* loop_limit: Mesa 22.3's llvmpipe (rusticl's CPU device in Debian 12's mesa-opencl-icd) ends
 * every loop of a kernel invocation once the invocation's loops together have run 65535
 * iterations; no error is reported and the kernel's results are simply wrong. A single loop of
 * 100000 steps stops at 65535; two nested loops after a long first loop get only what is left
 * of the budget. PoCL and NVIDIA run both to their end.
 * Found in clsplat (#24): the rasterizer backward's compare-and-swap accumulation over a tile
 * of 1721 Gaussians lost whole work-items in its last rounds; LPIPS's direct convolution gave
 * 0.3997 for a golden 0.3946. clsplat probes for this at device open (src/runtime/cl_runtime.c) and
 * takes the deterministic backward and the tiled convolution there.
 *   build: cc -o loop_limit loop_limit.c -lOpenCL
 *   run:   OCL_ICD_VENDORS=/etc/OpenCL/vendors/rusticl.icd RUSTICL_ENABLE=llvmpipe ./loop_limit
 * Exit status 1 when a loop stopped early, 0 when both ran to their end, 2 on an OpenCL error. */
#include "repro.h"

static const char *SRC = "__kernel void count(__global uint *out, uint n, uint outer, uint inner)\n"
                         "{\n"
                         "    uint a = 0u, b = 0u;\n"
                         "    for (uint i = 0u; i < n; i++) a = a * 3u + 1u;\n"
                         "    for (uint i = 0u; i < outer; i++)\n"
                         "        for (uint j = 0u; j < inner; j++) b++;\n"
                         "    out[0] = a;\n"
                         "    out[1] = b;\n"
                         "}\n";

/* the first loop's value after N steps */
static cl_uint expect(cl_uint n)
{
    cl_uint a = 0u;
    for (cl_uint i = 0; i < n; i++) a = a * 3u + 1u;
    return a;
}

static int run(cl_command_queue q, cl_kernel k, cl_mem b, cl_uint n, cl_uint outer, cl_uint inner, cl_uint got[2])
{
    TRY(clSetKernelArg(k, 0, sizeof b, &b));
    TRY(clSetKernelArg(k, 1, sizeof n, &n));
    TRY(clSetKernelArg(k, 2, sizeof outer, &outer));
    TRY(clSetKernelArg(k, 3, sizeof inner, &inner));
    size_t g = 1;
    TRY(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    TRY(clEnqueueReadBuffer(q, b, CL_TRUE, 0, 2 * sizeof(cl_uint), got, 0, NULL, NULL));
    return 0;
}

int main(void)
{
    repro r;
    int rc = repro_open(&r, SRC, "count", 0);
    if (rc) return rc;
    cl_int e;
    cl_mem b = clCreateBuffer(r.ctx, CL_MEM_WRITE_ONLY, 2 * sizeof(cl_uint), NULL, &e);
    TRY(e);
    /* {first loop, outer, inner}: one long loop; a long loop then a nested pair below 65535 */
    static const cl_uint CASES[3][3] = {{100000u, 0u, 0u}, {60000u, 1000u, 10u}, {1000u, 1000u, 10u}};
    int bad = 0;
    printf("%s:\n", r.name);
    for (int i = 0; i < 3; i++) {
        cl_uint got[2];
        rc = run(r.q, r.k, b, CASES[i][0], CASES[i][1], CASES[i][2], got);
        if (rc) return rc;
        int ok = got[0] == expect(CASES[i][0]) && got[1] == CASES[i][1] * CASES[i][2];
        printf("  loop of %u, then %u x %u nested: first %s, nested %u of %u\n", CASES[i][0], CASES[i][1],
               CASES[i][2], got[0] == expect(CASES[i][0]) ? "ran to its end" : "stopped early", got[1],
               CASES[i][1] * CASES[i][2]);
        bad += !ok;
    }
    printf("%s\n", bad ? "loops stop early on this device" : "every loop ran to its end");
    clReleaseMemObject(b);
    repro_close(&r);
    return bad ? 1 : 0;
}
