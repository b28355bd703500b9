/* tune: times training iterations (cs_time_iterations: forward, loss, backward, densification
 * statistics, Adam at zero learning rates) on a synthetic view through a profiling queue, first
 * for each tile size, then with the chosen tile for each work-group size, and keeps per group the
 * fastest; a size other than the default must win by MARGIN. The choice is stored through
 * tuning.c beside the kernel binaries. */
#include "tune.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"
#include "util.h"

#define MARGIN 0.02
static const int TILES[CS_TUNE_TILES] = {16, 8};
static const size_t WGS[CS_TUNE_WGS] = {64, 128, 256, 512};
/* the stage each work-group group's kernels are timed in */
static const int WG_STAGE[CS_WG_COUNT] = {CS_STAGE_PROJECT, CS_STAGE_PROJECT_BWD, CS_STAGE_SORT, CS_STAGE_ADAM};

/* ---- the synthetic view ----------------------------------------------------------------- */

typedef struct {
    cs_splats s;
    cs_view v;
    cs_buf gt;
} workload;

/* Gaussians spread over the frustum of a camera at the origin looking down +z, 2 to 8 units
 * away, with screen radii of 0.5 to 12 pixels (log-uniform), mild anisotropy, random
 * rotations and opacities: a pair count per Gaussian like a trained scene's. Fixed seed. */
static int workload_make(cs_cl *cl, const cs_kernel_opts *o, cs_tuning *t, workload *w)
{
    memset(w, 0, sizeof *w);
    int n = t->n_gaussians, W = t->width, H = t->height, K = CS_SH_COEFFS(o->layout.sh_degree);
    if (cs_splats_alloc(&w->s, n, o->layout.sh_degree, o->layout.filter_3d)) return -1;
    const uint64_t seed = 0x74756e65ull;
    float f = 0.9f * (float)W;
    for (int i = 0; i < n; i++) {
        uint64_t c = (uint64_t)i * 32;
#define U(j) cs_rand_uniform(seed, c + (j))
        float z = 2.f + 6.f * U(0);
        w->s.means[i * 3 + 0] = (U(1) - 0.5f) * 1.2f * z * (float)W / f;
        w->s.means[i * 3 + 1] = (U(2) - 0.5f) * 1.2f * z * (float)H / f;
        w->s.means[i * 3 + 2] = z;
        float sigma = expf(logf(0.5f) + U(3) * (logf(12.f) - logf(0.5f))) * z / f;
        for (int k = 0; k < 3; k++) w->s.log_scales[i * 3 + k] = logf(sigma) + 0.6f * (U(4 + k) - 0.5f);
        for (int k = 0; k < 4; k++) w->s.quats[i * 4 + k] = 2.f * U(7 + k) - 1.f;
        float op = 0.05f + 0.9f * U(11);
        w->s.logit_opacity[i] = logf(op / (1.f - op));
        for (int k = 0; k < K * 3 && k < 20; k++) w->s.sh[(size_t)i * K * 3 + k] = (U(12 + k) - 0.5f) * (k < 3 ? 2.f : 0.1f);
        if (w->s.filter_3d) w->s.filter_3d[i] = 0.1f * sigma;
#undef U
    }
    w->v.cam.s[0] = w->v.cam.s[4] = w->v.cam.s[8] = 1.f;
    w->v.intr.s[0] = w->v.intr.s[1] = f;
    w->v.intr.s[2] = 0.5f * (float)W;
    w->v.intr.s[3] = 0.5f * (float)H;
    w->v.width = W;
    w->v.height = H;
    size_t bytes = (size_t)W * H * 3;
    unsigned char *px = malloc(bytes);
    if (!px) return cs_fail("out of host memory (tuning image)");
    for (size_t i = 0; i < bytes; i++) px[i] = (unsigned char)((i * 37u + (i / 3 / (size_t)W) * 11u) & 255u);
    int r = cs_buf_alloc(cl, &w->gt, CS_MEM_SCRATCH, bytes, "tuning ground truth") || cs_buf_write(cl, &w->gt, 0, bytes, px);
    free(px);
    return r ? -1 : 0;
}

static void workload_free(cs_cl *cl, workload *w)
{
    cs_buf_free(cl, &w->gt);
    cs_splats_free(&w->s);
}

/* Medians per stage of training iterations with K's current sizes. */
static int time_passes(cs_cl *cl, cs_kernels *k, workload *w, int reps, double med[CS_STAGE_COUNT])
{
    cs_model m;
    cs_renderer r;
    cs_loss l;
    cs_config cfg;
    cs_config_defaults(&cfg);
    if (cs_model_create(cl, &m, &w->s, &k->opts.layout, w->s.n)) return -1;
    cs_renderer_init(&r, cl, k, (float)cfg.model.kernel_size);
    cs_loss_init(&l, cl, k);
    const float bg[3] = {0.f, 0.f, 0.f};
    int rc = cs_time_iterations(&r, &l, &m, &w->v, w->s.sh_degree, bg, &w->gt, 0, (float)cfg.optim.lambda_dssim, false, reps, med, NULL);
    cs_renderer_free(&r);
    cs_loss_free(&l);
    cs_model_free(cl, &m);
    return rc;
}

static double pass_total(const double med[CS_STAGE_COUNT])
{
    double s = 0;
    for (int st = 0; st < CS_STAGE_COUNT; st++) s += med[st];
    return s;
}

/* Index of the smallest of V[0..n) (entries < 0 cannot run); the default's index DEF unless
 * the best beats it by MARGIN. */
static int pick(const double *v, int n, int def)
{
    int best = -1;
    for (int i = 0; i < n; i++)
        if (v[i] >= 0 && (best < 0 || v[i] < v[best])) best = i;
    if (def >= 0 && v[def] >= 0 && best >= 0 && v[best] > v[def] * (1.0 - MARGIN)) return def;
    return best;
}

/* Measures into T and leaves the kernels of the chosen tile (and sizes) in K. */
static int measure(cs_cl *cl, const cs_kernel_opts *o, cs_tuning *t, cs_kernels *k)
{
    double t0 = cs_now();
    t->n_gaussians = cl->is_cpu ? 4000 : 300000;
    t->width = cl->is_cpu ? 160 : 800;
    t->height = cl->is_cpu ? 120 : 800;
    t->reps = cl->is_cpu ? 3 : 9;
    workload w;
    cs_prof_saved ps;
    if (workload_make(cl, o, t, &w)) {
        workload_free(cl, &w);
        return -1;
    }
    if (cs_cl_profile_begin(cl, &ps)) {
        workload_free(cl, &w);
        return -1;
    }
    int rc = 0, best = -1;
    cs_kernels built[CS_TUNE_TILES];
    memset(built, 0, sizeof built);
    char why[CS_TUNE_TILES][512] = {{0}};
    for (int i = 0; i < CS_TUNE_TILES; i++) {
        cs_kernel_opts ot = *o;
        ot.tile = t->tiles[i] = TILES[i];
        double med[CS_STAGE_COUNT];
        t->tile_ms[i] = -1;
        if (cs_kernels_build(cl, &ot, &built[i])) {
            snprintf(why[i], sizeof why[i], "%s", cs_last_error());
            cs_kernels_release(&built[i]);
            continue;
        }
        if (time_passes(cl, &built[i], &w, t->reps, med)) {
            rc = -1;
            break;
        }
        t->tile_ms[i] = pass_total(med);
        if (t->tile_ms[i] < 1e-3) { /* a training pass under a microsecond: placeholder timestamps */
            rc = cs_fail("%s reports no kernel times through profiling events (a training pass took %.6f ms; Mesa "
                         "22.3's rusticl returns placeholders, tools/rusticl_repro/profiling.c): nothing to choose "
                         "sizes by", cl->name, t->tile_ms[i]);
            break;
        }
    }
    if (!rc) {
        best = pick(t->tile_ms, CS_TUNE_TILES, 0);
        if (best < 0) rc = cs_fail("no rasterizer tile size runs on %s: %s", cl->name, why[0]);
    }
    for (int i = 0; i < CS_TUNE_TILES; i++)
        if (i != best) cs_kernels_release(&built[i]);
    if (!rc) {
        *k = built[best];
        t->tile = TILES[best];
        for (int c = 0; c < CS_TUNE_WGS && !rc; c++) {
            size_t wg[CS_WG_COUNT];
            t->wgs[c] = WGS[c];
            for (int g = 0; g < CS_WG_COUNT; g++) wg[g] = WGS[c] <= k->wg_max[g] ? WGS[c] : k->wg_max[g];
            double med[CS_STAGE_COUNT];
            rc = cs_kernels_set_wg(k, wg) || time_passes(cl, k, &w, t->reps, med);
            for (int g = 0; g < CS_WG_COUNT && !rc; g++)
                t->wg_ms[g][c] = WGS[c] <= k->wg_max[g] ? med[WG_STAGE[g]] : -1;
        }
        size_t wg[CS_WG_COUNT];
        for (int g = 0; g < CS_WG_COUNT && !rc; g++) {
            int def = 0;
            while (def < CS_TUNE_WGS - 1 && WGS[def] < CS_WG_DEFAULT) def++;
            int c = pick(t->wg_ms[g], CS_TUNE_WGS, def);
            wg[g] = c >= 0 ? WGS[c] : k->wg_max[g];
        }
        if (!rc) rc = cs_kernels_set_wg(k, wg);
        if (!rc) memcpy(t->wg, wg, sizeof wg);
        if (rc) cs_kernels_release(k);
    }
    int e = cs_cl_profile_end(cl, &ps);
    workload_free(cl, &w);
    /* the measurement's buffers are gone: they do not count towards the run's peak */
    cl->mem.peak_total = cl->mem.cur_total;
    memcpy(cl->mem.peak, cl->mem.cur, sizeof cl->mem.peak);
    t->seconds = cs_now() - t0;
    if (!rc && e) cs_kernels_release(k);
    return rc || e ? -1 : 0;
}

int cs_kernels_build_tuned(cs_cl *cl, const cs_kernel_opts *o, int policy, cs_kernels *k, cs_tuning *out)
{
    cs_tuning local, *t = out ? out : &local;
    memset(t, 0, sizeof *t);
    if (policy != CS_TUNE_OFF && cs_tuning_path(cl, o, t->path, sizeof t->path)) return -1;
    if (policy == CS_TUNE_OFF || policy == CS_TUNE_CACHED) return cs_kernels_build_stored(cl, o, policy, k, t);
    if (policy == CS_TUNE_AUTO && cs_tuning_load(t->path, t) == 0) {
        t->source = CS_TUNED_CACHE;
        return cs_kernels_build_with(cl, o, t, k);
    }
    t->source = CS_TUNED_MEASURED;
    if (measure(cl, o, t, k) == 0) {
        cs_tuning_store(cl, t);
        return 0;
    }
    if (policy == CS_TUNE_FORCE) return -1;
    /* auto: a measurement that cannot run (e.g. a tight memory budget) costs only speed */
    fprintf(stderr, "warning: tuning failed (%s); using the default tiles and work-groups\n", cs_last_error());
    memset(t, 0, sizeof *t);
    t->source = CS_TUNED_DEFAULT;
    return cs_kernels_build_with(cl, o, t, k);
}

