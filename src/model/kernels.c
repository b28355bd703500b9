/* kernels: builds the program for one configuration and creates every kernel. */
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_mem.h"
#include "cl_program.h"
#include "util.h"

const char *const cs_program_names[CS_PROG_COUNT] = {
#define NAME(name, files) #name,
    CS_PROGRAM_LIST(NAME)
#undef NAME
};

const char *const cs_program_files[CS_PROG_COUNT] = {
#define FILES(name, files) files,
    CS_PROGRAM_LIST(FILES)
#undef FILES
};

const char *const cs_wg_names[CS_WG_COUNT] = {"project", "project_bwd", "bin", "adam"};

const char *const cs_stage_names[CS_STAGE_COUNT] = {"project", "bin+sort", "rasterize fwd", "loss+ssim",
                                                    "rasterize bwd", "project bwd", "adam", "densify"};

/* Runs 4096 float atomic adds on one address; 0 when the sum is exact. */
static int atomics_work(cs_cl *cl, cl_program prog)
{
    cl_kernel kt;
    if (cs_cl_kernel(cl, prog, "atomics_selftest", &kt)) return -1;
    cs_buf b;
    float zero = 0.f, got = -1.f;
    size_t g = 4096, l = 64;
    int r = cs_buf_alloc(cl, &b, CS_MEM_OTHER, 16, "atomics self-test");
    if (!r) {
        r = cs_buf_fill(cl, &b, 0, 4, &zero, 4) || cs_cl_run(cl, kt, -1, 1, &g, &l, CS_ARG(b.mem)) ||
            cs_buf_read(cl, &b, 0, 4, &got);
        cs_buf_free(cl, &b);
    }
    clReleaseKernel(kt);
    if (r) return -1;
    return got == 4096.f ? 0 : 1;
}

void cs_kernel_opts_string(const cs_kernel_opts *o, int key_only, char *out, size_t n)
{
    size_t used = 0;
    out[0] = 0;
#define CS_OPT_STRING(def, value, role)                                                                  \
    if (!key_only || CS_OPT_##role) used += (size_t)snprintf(out + used, used < n ? n - used : 0, "-D%s=%d ", #def, (int)(value));
    enum { CS_OPT_KEY = 1, CS_OPT_TUNED = 0 };
    CS_KERNEL_OPTIONS(CS_OPT_STRING, o)
#undef CS_OPT_STRING
    /* CLSPLAT_CL_OPTS: extra build options for A/B measurements of kernel variants */
    const char *extra = getenv("CLSPLAT_CL_OPTS");
    if (used < n) snprintf(out + used, n - used, "%s", extra ? extra : "");
}

void cs_kernel_opts_of(const cs_config *cfg, cs_kernel_opts *o)
{
    memset(o, 0, sizeof *o); /* programs 0: all, unless the caller narrows it */
    o->layout.sh_degree = cfg->model.sh_degree;
    o->layout.sh_half = cfg->memory.sh_dtype == CS_DTYPE_FP16;
    o->layout.filter_3d = cfg->model.filter_3d;
    o->layout.opt_half = cfg->memory.optimizer_dtype == CS_DTYPE_FP16;
    o->antialias = cfg->model.antialias;
    o->deterministic = cfg->optim.deterministic;
    o->tile = 0;
    o->pixels = cfg->device.pixels_per_item;
}

static int build_once(cs_cl *cl, const cs_kernel_opts *o, cs_kernels *k);

/* Builds with the pixels a rasterizer work-item covers resolved: asked for, or 1 and then,
   while the tile's group does not fit the device, the pixels that fit its limit. */
static int build_fitting(cs_cl *cl, const cs_kernel_opts *o, cs_kernels *k)
{
    cs_kernel_opts b = *o;
    if (!b.tile) b.tile = 16;
    if (b.tile != 8 && b.tile != 16) return cs_fail("tile size %d: must be 8 or 16", b.tile);
    if (b.pixels < 0 || b.pixels > b.tile || (b.pixels & (b.pixels - 1)))
        return cs_fail("device.pixels_per_item %d: must be 0 (auto) or a power of two up to the tile side %d", b.pixels,
                       b.tile);
    int fit = !b.pixels;
    if (fit) b.pixels = 1;
    for (;;) {
        int r = build_once(cl, &b, k);
        if (r <= 0) return r;
        /* r == 1: the group does not fit (message set); k->tile_fit: the work-items that would */
        size_t items = k->tile_fit;
        cs_kernels_release(k);
        if (!fit || b.pixels >= b.tile) return -1;
        int p = b.pixels * 2;
        while (p < b.tile && (size_t)b.tile * (size_t)(b.tile / p) > items) p *= 2;
        b.pixels = p;
    }
}

int cs_kernels_build(cs_cl *cl, const cs_kernel_opts *o, cs_kernels *k)
{
    cs_kernel_opts lo = *o;
    if (cl->loop_limited && !lo.deterministic) {
        /* the other paths loop over compare-and-swap retries for every staged Gaussian */
        lo.deterministic = 1;
        if (!cl->loop_limit_told)
            fprintf(stderr, "warning: %s stops loops after 65535 iterations a work-item (Mesa llvmpipe's loop limiter, "
                            "tools/rusticl_repro/loop_limit.c): the backward runs the deterministic path\n",
                    cl->name);
        cl->loop_limit_told = 1;
    }
    o = &lo;
    if (build_fitting(cl, o, k)) return -1;
    /* the float atomics are the rasterizer backward's */
    if (cl->atomics == CS_ATOMIC_CAS || !k->prog[CS_PROG_render]) return 0;
    int w = atomics_work(cl, k->prog[CS_PROG_render]);
    if (w < 0) return -1;
    if (w == 0) return 0;
    if (cl->atomics_forced)
        return cs_fail("device.float_atomics %s: its self-test gave a wrong sum on %s", cs_atomic_path_names[cl->atomics],
                       cl->name);
    fprintf(stderr, "warning: the %s float-atomics path gave a wrong sum on %s; using the compare-and-swap loop\n",
            cs_atomic_path_names[cl->atomics], cl->name);
    cs_kernel_opts b = k->opts;
    cs_kernels_release(k);
    cl->atomics = CS_ATOMIC_CAS;
    return build_once(cl, &b, k) ? -1 : 0;
}

/* The largest work-group K may run with on this device. */
static int kernel_limit(cs_cl *cl, cl_kernel k, const char *name, size_t *wg, cl_ulong *local)
{
    cl_int e = clGetKernelWorkGroupInfo(k, cl->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof *wg, wg, NULL);
    if (e == CL_SUCCESS) e = clGetKernelWorkGroupInfo(k, cl->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof *local, local, NULL);
    if (e != CL_SUCCESS)
        return cs_fail("clGetKernelWorkGroupInfo for kernel %s failed: %s (%s:%d)", name, cs_cl_strerror(e), __FILE__,
                       __LINE__);
    if (*wg > cl->max_wg) *wg = cl->max_wg;
    return 0;
}

/* Work-group limits of each group and the tile check: 1 (message set, k->tile_fit the
   work-items a group the device allows) when the tile's group does not fit. */
static int limits(cs_cl *cl, cs_kernels *k)
{
#define ROW(name, group, program) {k->name, #name, group},
    struct { cl_kernel kern; const char *name; int group; } all[] = {CS_KERNEL_LIST(ROW)};
#undef ROW
    for (int g = 0; g < CS_WG_COUNT; g++) k->wg_max[g] = (size_t)1 << 30;
    size_t per_tile = (size_t)k->opts.tile * (size_t)(k->opts.tile / k->opts.pixels);
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        size_t wg;
        cl_ulong local;
        if (all[i].group == CS_WG_FIXED || !all[i].kern) continue;
        if (kernel_limit(cl, all[i].kern, all[i].name, &wg, &local)) return -1;
        if (all[i].group >= 0) {
            /* project_bwd's stage grows with its group: the largest that fits beside its own */
            if (all[i].group == CS_WG_PROJECT_BWD && local < cl->local_mem) {
                size_t fit = (size_t)(cl->local_mem - local) / cs_stage_bytes(1);
                if (fit < wg) wg = fit;
            }
            if (wg < k->wg_max[all[i].group]) k->wg_max[all[i].group] = wg;
        } else if (wg < per_tile || local > cl->local_mem) {
            /* local memory scales with the group (one staged Gaussian a work-item) */
            k->tile_fit = local > cl->local_mem ? per_tile * cl->local_mem / local : per_tile;
            if (wg < k->tile_fit) k->tile_fit = wg;
            cs_fail("kernel %s with %dx%d tiles, %d pixel%s a work-item, needs %zu work-items and %llu bytes of local "
                    "memory a group; %s allows %zu and %llu (try another tile size or device.pixels_per_item)",
                    all[i].name, k->opts.tile, k->opts.tile, k->opts.pixels, k->opts.pixels > 1 ? "s" : "", per_tile,
                    (unsigned long long)local, cl->name, wg, (unsigned long long)cl->local_mem);
            return 1;
        }
    }
    for (int g = 0; g < CS_WG_COUNT; g++) {
        /* largest power of two within the limit */
        size_t p = 1;
        while (p * 2 <= k->wg_max[g]) p *= 2;
        k->wg_max[g] = p;
        k->wg[g] = CS_WG_DEFAULT < p ? CS_WG_DEFAULT : p;
    }
    return 0;
}

int cs_kernels_set_wg(cs_kernels *k, const size_t wg[CS_WG_COUNT])
{
    for (int g = 0; g < CS_WG_COUNT; g++)
        if (wg[g] == 0 || (wg[g] & (wg[g] - 1)) || wg[g] > k->wg_max[g])
            return cs_fail("work-group size %zu for the %s kernels: must be a power of two up to %zu on this device", wg[g],
                           cs_wg_names[g], k->wg_max[g]);
    memcpy(k->wg, wg, sizeof k->wg);
    return 0;
}

static int build_once(cs_cl *cl, const cs_kernel_opts *o, cs_kernels *k)
{
    memset(k, 0, sizeof *k);
    k->opts = *o;
    k->opts.cpu = cl->is_cpu;
    if (!k->opts.programs) k->opts.programs = CS_PROGS_ALL;
    char opts[1024];
    cs_kernel_opts_string(o, 0, opts, sizeof opts);
    cl->last_build_cached = 1;
    for (int p = 0; p < CS_PROG_COUNT; p++)
        if ((k->opts.programs & (1u << p)) && cs_cl_build(cl, cs_program_files[p], opts, &k->prog[p])) return -1;
#define CREATE(name, group, program)                                                                              \
    if (k->prog[CS_PROG_##program] && cs_cl_kernel(cl, k->prog[CS_PROG_##program], #name, &k->name)) return -1;
    CS_KERNEL_LIST(CREATE)
#undef CREATE
    return limits(cl, k);
}

void cs_kernels_release(cs_kernels *k)
{
#define PTR(name, group, program) &k->name,
    cl_kernel *all[] = {CS_KERNEL_LIST(PTR)};
#undef PTR
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (*all[i]) clReleaseKernel(*all[i]), *all[i] = NULL;
    for (int p = 0; p < CS_PROG_COUNT; p++)
        if (k->prog[p]) clReleaseProgram(k->prog[p]), k->prog[p] = NULL;
}
