/* tile_choice: the faster of two rasterizer tiles, measured on the run's own views. */
#include "tile_choice.h"

#include <stdio.h>
#include <string.h>

#include "pass.h"
#include "util.h"

int cs_tile_choice_open(cs_tile_choice *tc, cs_cl *cl, const cs_kernels *main, int mode, bool reproducible)
{
    memset(tc, 0, sizeof *tc);
    tc->main = tc->cur = main;
    tc->last_iter = -1;
    bool want = mode == CS_TILES_MEASURE || (mode == CS_TILES_AUTO && !cl->is_cpu);
    if (!want || reproducible) return 0; /* a choice by timing would make the run's result depend on it */
    double t0 = cs_now();
    cs_kernel_opts o = main->opts;
    o.tile = main->opts.tile == 8 ? 16 : 8;
    o.pixels = 0; /* as many pixels a work-item as the device needs at this tile */
    size_t wg[CS_WG_COUNT];
    if (cs_kernels_build(cl, &o, &tc->alt)) {
        cs_kernels_release(&tc->alt);
        return cs_fail_prefix("device.tile_choice: the %dx%d kernels", o.tile, o.tile);
    }
    for (int g = 0; g < CS_WG_COUNT; g++) wg[g] = main->wg[g] < tc->alt.wg_max[g] ? main->wg[g] : tc->alt.wg_max[g];
    if (cs_kernels_set_wg(&tc->alt, wg)) {
        cs_kernels_release(&tc->alt);
        return -1;
    }
    tc->on = true;
    tc->alt_seconds = cs_now() - t0;
    return 0;
}

bool cs_tile_choice_due(const cs_tile_choice *tc, int iter, int factor)
{
    return tc->on && (tc->last_iter < 0 || factor != tc->last_factor || iter - tc->last_iter >= CS_TILE_CHOICE_EVERY);
}

/* The fastest of REPS passes with K's kernels after one that sizes the buffers (ms). */
static int time_pass(cs_renderer *r, const cs_kernels *k, cs_loss *l, cs_model *m, const cs_view *v, int deg,
                     const float bg[3], cs_buf *gt, unsigned goff, float lambda, double *best)
{
    const int reps = 2;
    *best = 1e30;
    if (cs_renderer_use_kernels(r, k)) return -1;
    for (int i = -1; i < reps; i++) {
        double t0 = cs_now();
        if (cs_train_pass(r, l, m, v, deg, bg, gt, goff, lambda, false) || cs_cl_finish(r->cl)) return -1;
        double ms = (cs_now() - t0) * 1e3;
        if (i >= 0 && ms < *best) *best = ms;
    }
    return 0;
}

#define TOO_BIG "the run holds more than half its memory budget"

/* 8x8 tiles need more pair scratch: the other tile is kept only while the run holds at most
   half its memory budget */
static bool over_half(const cs_cl *cl) { return cl->mem.cur_total > cl->mem.budget / 2; }

/* back on the run's own kernels for good, R with them */
static int drop_alt(cs_tile_choice *tc, cs_renderer *r, const char *why)
{
    printf("tiles: %dx%d no longer measured: %s\n", tc->alt.opts.tile, tc->alt.opts.tile, why);
    tc->on = false;
    tc->cur = tc->main;
    cs_renderer_trim(r);
    return cs_renderer_use_kernels(r, tc->main);
}

int cs_tile_choice_measure(cs_tile_choice *tc, cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v,
                           int active_degree, const float bg[3], cs_buf *gt, unsigned gt_off, float lambda, int iter,
                           int factor)
{
    bool first = tc->last_iter < 0;
    tc->last_iter = iter, tc->last_factor = factor;
    cs_cl *cl = r->cl;
    const cs_kernels *other = tc->cur == tc->main ? &tc->alt : tc->main;
    double t_cur, t_other;
    if (over_half(cl)) return drop_alt(tc, r, TOO_BIG);
    if (cs_cl_finish(cl)) return -1;
    /* a failure with the run's own kernels is the run's; with the other tile's, only the
       choice's (its larger scratch did not fit) */
    int e_cur = time_pass(r, tc->cur, l, m, v, active_degree, bg, gt, gt_off, lambda, &t_cur);
    if (e_cur && tc->cur == tc->main) return -1;
    int e_other = time_pass(r, other, l, m, v, active_degree, bg, gt, gt_off, lambda, &t_other);
    if (e_other && other == tc->main) return -1;
    bool alt_failed = e_cur || e_other;
    const cs_kernels *pick = !alt_failed && t_other < t_cur * 0.97 ? other : tc->cur;
    if (alt_failed || over_half(cl)) {
        pick = tc->main;
        if (drop_alt(tc, r, alt_failed ? cs_last_error() : TOO_BIG)) return -1;
    }
    if (!alt_failed && (pick != tc->cur || first)) {
        const cs_kernels *left = pick == other ? tc->cur : other;
        double t_pick = pick == other ? t_other : t_cur, t_left = pick == other ? t_cur : t_other;
        printf("tiles: %dx%d from iteration %d (a pass %.3f ms, %.3f with %dx%d)\n", pick->opts.tile, pick->opts.tile,
               iter, t_pick, t_left, left->opts.tile, left->opts.tile);
    }
    tc->cur = pick;
    return cs_renderer_use_kernels(r, pick);
}

int cs_tile_choice_pass(cs_tile_choice *tc, cs_renderer *r, cs_loss *l, cs_model *m, const cs_view *v,
                        int active_degree, const float bg[3], cs_buf *gt, unsigned gt_off, float lambda, bool want_loss)
{
    bool on_alt = tc->on && tc->cur != tc->main;
    if (on_alt && over_half(r->cl)) {
        if (drop_alt(tc, r, TOO_BIG)) return -1;
        on_alt = false;
    }
    if (!cs_train_pass(r, l, m, v, active_degree, bg, gt, gt_off, lambda, want_loss)) return 0;
    if (!on_alt) return -1;
    /* the other tile's pass failed (its larger scratch did not fit): the run's own kernels, again */
    return drop_alt(tc, r, cs_last_error()) ||
                   cs_train_pass(r, l, m, v, active_degree, bg, gt, gt_off, lambda, want_loss)
               ? -1
               : 0;
}

void cs_tile_choice_close(cs_tile_choice *tc)
{
    cs_kernels_release(&tc->alt);
    memset(tc, 0, sizeof *tc);
}
