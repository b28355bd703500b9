/* batch_pack: devices and reservations of batch jobs (batch_pack.h). */
#include "batch_pack.h"

/* the share of a device's memory clsplat uses by default (memplan.c's budget) */
#define DEVICE_SHARE 0.97

cs_pack_need cs_pack_need_of(const cs_config *cfg, const cs_pack_device *d, int per_device, size_t plan_bytes)
{
    cs_pack_need n = {0, 0, "the device"};
    double own = cfg->memory.vram_budget_mb;
    size_t budget;
    if (own > 0) {
        budget = (size_t)(own * 1048576.0);
        n.why = "its budget";
    } else if (per_device > 1 && !d->is_cpu) {
        /* K jobs and their contexts in the 97% a single job would have */
        double share = (d->mem * DEVICE_SHARE - (double)per_device * CS_PACK_CONTEXT_BYTES) / per_device;
        n.budget_mb = (share > 0 ? share : 0) / 1048576.0;
        budget = (size_t)(n.budget_mb * 1048576.0);
        n.why = "a share of the device";
    } else {
        budget = (size_t)(d->mem * DEVICE_SHARE);
    }
    if (plan_bytes && plan_bytes < budget) {
        budget = plan_bytes;
        n.why = "its plan (memory.max_gaussians)";
    }
    n.reserve = budget + (d->is_cpu ? 0 : CS_PACK_CONTEXT_BYTES);
    return n;
}

int cs_pack_fits_alone(const cs_pack_device *d, const cs_pack_need *need)
{
    return need->reserve <= d->mem + (d->is_cpu ? 0 : CS_PACK_CONTEXT_BYTES);
}

int cs_pack_pick(const cs_pack_device *devs, const cs_pack_need *need, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        const cs_pack_device *d = &devs[i];
        int limit = d->is_cpu ? 1 : d->max_jobs;
        /* the first job on a device always fits when it fits alone (the 97% share plus the
           context may exceed the device's nominal size) */
        size_t free_b = d->mem > d->reserved ? d->mem - d->reserved : 0;
        int fits = d->running == 0 ? cs_pack_fits_alone(d, &need[i]) : need[i].reserve <= free_b;
        if ((limit && d->running >= limit) || !fits) continue;
        if (best < 0 || d->running < devs[best].running ||
            (d->running == devs[best].running && free_b > devs[best].mem - devs[best].reserved))
            best = i;
    }
    return best;
}
