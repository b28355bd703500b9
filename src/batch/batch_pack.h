/* batch_pack: which device runs a batch job, and how much of its memory the job reserves.
 *
 * A job reserves its memory budget: memory.vram_budget_mb when it sets one, else a share of
 * the device (the whole device, or 1/K of it with --per-device K, given to the job as its
 * budget). When memory.max_gaussians caps the model, the job's memory plan (memplan.h: the
 * fixed part plus the capped rows and scratch) is its reservation when that is smaller. On a
 * GPU each job also reserves CS_PACK_CONTEXT_BYTES for what the driver takes per process.
 * A job starts on the device with the fewest running jobs, then the most free memory, among
 * those where its reservation fits and that run fewer than their job limit: a CPU one job at
 * a time (the jobs would share its cores), a GPU K with --per-device K, else as many as fit. */
#ifndef CS_BATCH_PACK_H
#define CS_BATCH_PACK_H

#include <stddef.h>

#include "config.h"

/* Device memory a process takes beyond what clsplat allocates (context, kernels, driver
 * pools): 522 MiB on an H200 with NVIDIA's OpenCL 580 after the kernels are built, before the
 * first allocation (tools/MEASUREMENTS.md); with a margin. */
#define CS_PACK_CONTEXT_BYTES ((size_t)640 << 20)

typedef struct {
    char id[24];          /* "P:D" (device.id) */
    char name[256];
    int is_cpu;
    size_t mem;           /* global memory */
    size_t reserved;      /* by the jobs running on it */
    int running;
    int max_jobs;         /* 0: as many as fit */
} cs_pack_device;

/* What a job asks of a device. */
typedef struct {
    size_t reserve;       /* bytes held while it runs */
    double budget_mb;     /* memory.vram_budget_mb to give the job (0: keep its own setting) */
    const char *why;      /* "its budget", "1/K of the device", "its plan (max_gaussians)", "the device" */
} cs_pack_need;

/* The job with settings CFG on device D, with PER_DEVICE (0 or 1: a whole device per job
 * without a budget). PLAN_BYTES: its memory plan at the cap (0 when it has no cap). */
cs_pack_need cs_pack_need_of(const cs_config *cfg, const cs_pack_device *d, int per_device, size_t plan_bytes);
/* The device for a job that needs NEED (computed per device), or -1 when none has room now. */
int cs_pack_pick(const cs_pack_device *devs, const cs_pack_need *need, int n);
/* True when NEED could fit on D with nothing else running (else the job can never run there). */
int cs_pack_fits_alone(const cs_pack_device *d, const cs_pack_need *need);

#endif
