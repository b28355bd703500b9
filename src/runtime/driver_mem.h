/* driver_mem: what the driver says the device memory use is, to check the accounting
 * allocator against reality. On NVIDIA it asks NVML, loaded with dlopen at run time
 * ("libnvidia-ml.so.1"), for this process's usage on the OpenCL device's GPU (matched by
 * PCI bus id); elsewhere, or when NVML is absent, it reports nothing and nothing breaks. */
#ifndef CS_DRIVER_MEM_H
#define CS_DRIVER_MEM_H

#include <stddef.h>

#include "cl_runtime.h"

typedef struct {
    void *lib;           /* dlopen handle, NULL when unavailable */
    void *dev;           /* nvmlDevice_t */
    void *fn_procs;      /* nvmlDeviceGetComputeRunningProcesses */
    void *fn_info;       /* nvmlDeviceGetMemoryInfo */
    void *fn_shutdown;
    unsigned pid;
    size_t peak;         /* largest value seen by cs_driver_mem_sample */
    char why[160];       /* why it is unavailable */
} cs_driver_mem;

/* Opens NVML for CL's device. Returns 0 when available; otherwise 1 with dm->why set. */
int cs_driver_mem_open(cs_driver_mem *dm, const cs_cl *cl);
/* Bytes this process uses on the device (or the device's total used memory when the
 * driver does not list processes); 0 when unavailable. Updates dm->peak. */
size_t cs_driver_mem_sample(cs_driver_mem *dm);
/* Shuts NVML down; safe on one that never opened. */
void cs_driver_mem_close(cs_driver_mem *dm);

#endif
