/* loop_probe: does the device run a loop to its end? Mesa 22.3's llvmpipe (rusticl's CPU
 * device in Debian 12) stops every loop of a kernel invocation once the loops together have
 * run 65535 iterations, with no error (tools/rusticl_repro/loop_limit.c). A kernel whose
 * work-items loop longer computes wrong results there: the rasterizer's compare-and-swap
 * accumulation over a tile of many Gaussians, LPIPS's direct convolution. The probe runs one
 * work-item through 100000 iterations of a recurrence and compares the result with the host's. */
#ifndef CS_LOOP_PROBE_H
#define CS_LOOP_PROBE_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

/* The iterations the probe asks for: above llvmpipe's 65535 */
#define CS_LOOP_PROBE_ITERATIONS 100000u

/* *limited = 1 when the device stopped the probe's loop early, 0 when it ran to the end.
 * -1 with a message naming the failed OpenCL call (and the build log). */
int cs_loop_probe(cl_context ctx, cl_device_id dev, cl_command_queue q, int *limited);

/* The recurrence's value after N steps on the host (what the device must return). */
cl_uint cs_loop_probe_expect(cl_uint n);

#endif
