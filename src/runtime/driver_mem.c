/* driver_mem: NVML through dlopen (see driver_mem.h). The few NVML types used are declared
 * here with their documented layouts, so no NVML header is needed at build time. */
#include "driver_mem.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A

typedef struct {
    unsigned long long total, free, used;
} nvml_memory;

typedef struct { /* nvmlProcessInfo_v1_t */
    unsigned int pid;
    unsigned long long used_gpu_memory;
} nvml_process;

typedef int (*fn_void)(void);
typedef int (*fn_handle_by_bus)(const char *, void **);
typedef int (*fn_handle_by_index)(unsigned, void **);
typedef int (*fn_count)(unsigned *);
typedef int (*fn_procs)(void *, unsigned *, nvml_process *);
typedef int (*fn_info)(void *, nvml_memory *);

static void *sym(void *lib, const char *a, const char *b)
{
    void *p = dlsym(lib, a);
    return p || !b ? p : dlsym(lib, b);
}

int cs_driver_mem_open(cs_driver_mem *dm, const cs_cl *cl)
{
    memset(dm, 0, sizeof *dm);
    dm->pid = (unsigned)getpid();
    if (!strstr(cl->vendor, "NVIDIA")) {
        snprintf(dm->why, sizeof dm->why, "not an NVIDIA device");
        return 1;
    }
    dm->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!dm->lib) {
        snprintf(dm->why, sizeof dm->why, "libnvidia-ml.so.1 not found");
        return 1;
    }
    fn_void init = (fn_void)sym(dm->lib, "nvmlInit_v2", "nvmlInit");
    dm->fn_shutdown = sym(dm->lib, "nvmlShutdown", NULL);
    dm->fn_procs = sym(dm->lib, "nvmlDeviceGetComputeRunningProcesses", NULL);
    dm->fn_info = sym(dm->lib, "nvmlDeviceGetMemoryInfo", NULL);
    fn_handle_by_bus by_bus = (fn_handle_by_bus)sym(dm->lib, "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetHandleByPciBusId");
    fn_handle_by_index by_index = (fn_handle_by_index)sym(dm->lib, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex");
    fn_count count = (fn_count)sym(dm->lib, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
    if (!init || !dm->fn_info || !by_index || !count || init() != NVML_SUCCESS) {
        snprintf(dm->why, sizeof dm->why, "NVML did not initialise");
        dlclose(dm->lib);
        dm->lib = NULL;
        return 1;
    }
    /* the OpenCL device's PCI address (cl_nv_device_attribute_query) picks the NVML device */
    cl_uint bus = 0, slot = 0, domain = 0;
    int have_bus = clGetDeviceInfo(cl->device, CL_DEVICE_PCI_BUS_ID_NV, sizeof bus, &bus, NULL) == CL_SUCCESS &&
                   clGetDeviceInfo(cl->device, CL_DEVICE_PCI_SLOT_ID_NV, sizeof slot, &slot, NULL) == CL_SUCCESS;
    if (have_bus && clGetDeviceInfo(cl->device, CL_DEVICE_PCI_DOMAIN_ID_NV, sizeof domain, &domain, NULL) != CL_SUCCESS)
        domain = 0;
    int found = 0;
    for (int k = 0; k < 2 && have_bus && by_bus && !found; k++) { /* slot as device number, or as devfn */
        char id[64];
        snprintf(id, sizeof id, "%08x:%02x:%02x.0", domain, bus, k ? slot >> 3 : slot);
        found = by_bus(id, &dm->dev) == NVML_SUCCESS;
    }
    unsigned n = 0;
    if (!found && count(&n) == NVML_SUCCESS && n == 1) found = by_index(0, &dm->dev) == NVML_SUCCESS;
    if (!found) {
        snprintf(dm->why, sizeof dm->why, "no NVML device matches the OpenCL device's PCI address");
        cs_driver_mem_close(dm);
        return 1;
    }
    return 0;
}

size_t cs_driver_mem_sample(cs_driver_mem *dm)
{
    if (!dm->lib) return 0;
    size_t used = 0;
    int listed = 0;
    if (dm->fn_procs) {
        nvml_process procs[64];
        unsigned n = 64;
        if (((fn_procs)dm->fn_procs)(dm->dev, &n, procs) == NVML_SUCCESS) {
            for (unsigned i = 0; i < n && i < 64; i++)
                if (procs[i].pid == dm->pid) used = (size_t)procs[i].used_gpu_memory, listed = 1;
        }
    }
    if (!listed) {
        nvml_memory m;
        if (((fn_info)dm->fn_info)(dm->dev, &m) == NVML_SUCCESS) used = (size_t)m.used;
    }
    if (used > dm->peak) dm->peak = used;
    return used;
}

void cs_driver_mem_close(cs_driver_mem *dm)
{
    if (dm->lib) {
        if (dm->fn_shutdown) ((fn_void)dm->fn_shutdown)();
        dlclose(dm->lib);
    }
    dm->lib = NULL;
}
