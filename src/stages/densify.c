/* densify: launchers for densify_* and filter3d_* kernels, and the budget rule. */
#include "densify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sort.h"
#include "util.h"

int cs_densify_stats(cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_renderer *r, int W, int H)
{
    size_t g = (size_t)m->n, l = 256;
    return cs_cl_run(cl, k->densify_stats, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(m->n), CS_ARG(r->radii.mem),
                     CS_ARG(r->v_2d.mem), CS_ARG(W), CS_ARG(H), CS_ARG(m->stats.mem));
}

/* total of a uint array after an exclusive scan: last offset + last count */
static int scan_and_total(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_buf *src, int n, unsigned *total)
{
    CS_CHECK(clEnqueueCopyBuffer(cl->queue, src->mem, d->offsets.mem, 0, 0, (size_t)n * 4, 0, NULL, NULL));
    cs_sort_scratch sc = {0};
    int r = cs_scan(cl, k, &sc, &d->offsets, (unsigned)n, CS_STAGE_DENSIFY);
    cs_sort_scratch_free(cl, &sc);
    if (r) return -1;
    unsigned a = 0, b = 0;
    if (cs_buf_read(cl, &d->offsets, (size_t)(n - 1) * 4, 4, &a) || cs_buf_read(cl, src, (size_t)(n - 1) * 4, 4, &b)) return -1;
    *total = a + b;
    return 0;
}

int cs_error_score_view(cs_densifier *d, cs_renderer *r, const cs_model *m, const cs_view *v, int active_degree,
                        const float bg[3], cs_buf *gt, unsigned gt_off, int gt_channels, float threshold,
                        float pixel_area)
{
    cs_cl *cl = r->cl;
    const cs_kernels *k = r->k;
    int n = m->n, W = v->width, H = v->height;
    size_t N = (size_t)(m->capacity > 0 ? m->capacity : 1), px = (size_t)W * H, l = 256, g = (size_t)n;
    if (n == 0) return 0;
    if (!(pixel_area >= 1.f)) return cs_fail("error score: pixel area %g, not at least 1", pixel_area);
    if (cs_buf_reserve(cl, &d->score, N * 4, 0, "error scores") || cs_buf_reserve(cl, &d->mask, px * 12, 0, "error mask"))
        return -1;
    float zero = 0.f;
    if (d->score_views == 0 && cs_buf_fill(cl, &d->score, 0, (size_t)n * 4, &zero, 4)) return -1;
    for (;;) { /* as cs_train_pass: redone when the pairs overflowed the renderer's buffers */
        if (cs_render_forward(r, m, v, active_degree, bg) ||
            cs_cl_run(cl, k->error_mask, CS_STAGE_DENSIFY, 1, &px, &l, CS_ARG(r->img.mem), CS_ARG(gt->mem), CS_ARG(gt_off),
                      CS_ARG(gt_channels), CS_ARG(W), CS_ARG(H), CS_ARG(threshold), CS_ARG(d->mask.mem)) ||
            cs_render_backward_2d(r, m, v, bg, &d->mask))
            return -1;
        int over = cs_render_confirm(r);
        if (over < 0) return -1;
        if (over == 0) break;
    }
    if (cs_cl_run(cl, k->error_score_add, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(r->radii.mem),
                  CS_ARG(r->v_2d.mem), CS_ARG(d->score.mem)))
        return -1;
    if (d->score_views++ == 0) d->score_weight = 0.f;
    d->score_weight += 1.f / pixel_area;
    return 0;
}

int cs_densify_step(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_model *m, const cs_densify_cfg *cfg, double extent,
                    int check_size, int max_n, unsigned seed)
{
    int n = m->n;
    d->wanted = 0;
    if (n == 0) return 0;
    size_t cap = (size_t)n * 3 + 16;
    if (cs_buf_reserve(cl, &d->flags, cap * 4, 0, "densify flags") || cs_buf_reserve(cl, &d->counts, cap * 4, 0, "densify counts") ||
        cs_buf_reserve(cl, &d->offsets, cap * 4, 0, "densify offsets") || cs_buf_reserve(cl, &d->keep, cap * 4, 0, "prune flags"))
        return -1;
    float thr = (float)cfg->grad_threshold, clone_max = (float)(cfg->percent_dense * extent);
    size_t g = (size_t)n, l = 256;
    unsigned added = 0;
    float views = d->score_views > 0 ? d->score_weight : 0.f, score_thr = (float)cfg->error_score;
    d->score_views = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (cs_cl_run(cl, k->densify_classify, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(m->geo.mem),
                      CS_ARG(m->stats.mem), CS_ARG(thr), CS_ARG(clone_max), CS_ARG(d->flags.mem), CS_ARG(d->counts.mem)) ||
            (views > 0 && attempt == 0 &&
             cs_cl_run(cl, k->densify_score_flags, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(m->geo.mem),
                       CS_ARG(d->score.mem), CS_ARG(views), CS_ARG(score_thr), CS_ARG(clone_max), CS_ARG(d->flags.mem),
                       CS_ARG(d->counts.mem))) ||
            scan_and_total(cl, k, d, &d->counts, n, &added))
            return -1;
        if (attempt == 0) d->wanted = added;
        if ((long)n + added <= (long)max_n || attempt == 1) break;
        /* over budget: keep only the highest-gradient candidates by raising the threshold */
        float *st = malloc(sizeof(float) * 3 * n), *gr = malloc(sizeof(float) * n);
        if (!st || !gr) {
            free(st), free(gr);
            return cs_fail("out of host memory in densification");
        }
        if (cs_buf_read(cl, &m->stats, 0, sizeof(float) * 3 * n, st)) {
            free(st), free(gr);
            return -1;
        }
        int c = 0;
        for (int i = 0; i < n; i++) {
            float v = st[i * 3 + 1] > 0 ? st[i * 3] / st[i * 3 + 1] : 0.f;
            if (v >= thr) gr[c++] = v;
        }
        long room = (long)max_n - n; /* each candidate adds 1 or 2; assume 2 to stay under */
        long take = room / 2;
        if (take <= 0) thr = INFINITY;
        else if (take < c) {
            /* the take largest pass: just above the next one down, or at the least of them
               where it stands above that (ties with the next one down all fall out); found by
               a selection, where a sort of the candidates cost fast.json 0.2 s on lego */
            float next = cs_select_desc(gr, (size_t)c, (size_t)take), least = gr[0];
            for (long i = 1; i < take; i++) least = gr[i] < least ? gr[i] : least;
            thr = least > next ? least : nextafterf(next, INFINITY);
        }
        free(st), free(gr);
    }
    if (cs_model_reserve(cl, m, n + (int)added)) return -1;
    /* the new rows: each from its parent as the schema says, then the split rule; d->counts,
       consumed by the scan, lists each new row's parent */
    if (added && (cs_cl_run(cl, k->densify_list_new, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(d->flags.mem),
                            CS_ARG(d->offsets.mem), CS_ARG(d->counts.mem)) ||
                  cs_model_new_rows(cl, k, m, (int)added, &d->counts, &d->counts, n) ||
                  cs_cl_run(cl, k->densify_split, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(n), CS_ARG(m->geo.mem),
                            CS_ARG(d->flags.mem), CS_ARG(d->offsets.mem), CS_ARG(seed))))
        return -1;
    int total = n + (int)added;
    float minop = (float)cfg->min_opacity, maxs = (float)cfg->max_screen_size,
          maxw = (float)(0.1 * extent);
    size_t gt = (size_t)total;
    unsigned kept = 0;
    if (cs_cl_run(cl, k->densify_prune_flags, CS_STAGE_DENSIFY, 1, &gt, &l, CS_ARG(total), CS_ARG(n),
                  CS_ARG(m->geo.mem), CS_ARG(m->stats.mem), CS_ARG(d->flags.mem), CS_ARG(minop), CS_ARG(check_size),
                  CS_ARG(maxs), CS_ARG(maxw), CS_ARG(d->keep.mem)) ||
        scan_and_total(cl, k, d, &d->keep, total, &kept))
        return -1;
    m->n = total;
    if ((int)kept != total && cs_model_compact(cl, k, m, &d->keep, &d->offsets, (int)kept, &d->scratch)) return -1;
    float z = 0.f;
    return cs_buf_fill(cl, &m->stats, 0, (size_t)m->capacity * 12, &z, 4);
}

int cs_prune_keep_flags(const float *score, int n, int keep, cl_uint *flags, cl_uint *offsets)
{
    if (keep < 0 || keep > n) return cs_fail("importance prune: %d rows to keep of %d", keep, n);
    float *v = malloc(sizeof(float) * (size_t)n * 2 + 1);
    if (!v) return cs_fail("out of host memory in the importance prune (%d rows)", n);
    float *sel = v + n, cut = INFINITY; /* NaN counts as 0; SEL is reordered by the selection */
    for (int i = 0; i < n; i++) sel[i] = v[i] = isnan(score[i]) ? 0.f : score[i];
    /* the cut: the KEEP-th largest (none kept: above every score); every row above it stays,
       then rows equal to it in order */
    if (keep > 0) cut = cs_select_desc(sel, (size_t)n, (size_t)keep - 1);
    int ties = keep;
    for (int i = 0; i < n; i++) ties -= v[i] > cut;
    cl_uint at = 0;
    for (int i = 0; i < n; i++) {
        flags[i] = v[i] > cut || (v[i] == cut && ties-- > 0);
        if (offsets) offsets[i] = at;
        at += flags[i];
    }
    free(v);
    return 0;
}

int cs_importance_prune(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_model *m, double fraction)
{
    int n = m->n, keep = n - (int)(fraction * n);
    if (d->score_views == 0) return cs_fail("importance prune: no view scored");
    d->score_views = 0;
    cs_buf_free(cl, &d->mask); /* a full view's mask, not needed for the compaction */
    if (keep >= n || n == 0) return 0;
    float *score = malloc(sizeof(float) * (size_t)n);
    cl_uint *flags = malloc(sizeof(cl_uint) * (size_t)n * 2); /* the keep flags, then their offsets */
    int rc = !score || !flags ? cs_fail("out of host memory in the importance prune (%d rows)", n)
             : cs_buf_reserve(cl, &d->keep, (size_t)n * 4, 0, "prune flags") ||
                     cs_buf_reserve(cl, &d->offsets, (size_t)n * 4, 0, "densify offsets") ||
                     cs_buf_read(cl, &d->score, 0, sizeof(float) * (size_t)n, score) ||
                     cs_prune_keep_flags(score, n, keep, flags, flags + n) ||
                     cs_buf_write(cl, &d->keep, 0, sizeof(cl_uint) * (size_t)n, flags) ||
                     cs_buf_write(cl, &d->offsets, 0, sizeof(cl_uint) * (size_t)n, flags + n)
                 ? -1 : 0;
    free(score), free(flags);
    return rc ? -1 : cs_model_compact(cl, k, m, &d->keep, &d->offsets, keep, &d->scratch);
}

int cs_densify_reset_opacity(cs_cl *cl, const cs_kernels *k, cs_model *m, float decay)
{
    size_t g = (size_t)m->n, l = 256;
    cl_mem filt = m->layout.filter_3d ? m->filter3d.mem : m->geo.mem;
    if (cs_cl_run(cl, k->densify_reset_opacity, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(m->n), CS_ARG(m->geo.mem),
                  CS_ARG(filt), CS_ARG(decay)))
        return -1;
    return cs_model_zero_state_column(cl, k, m, CS_ARRAY_geo, CS_GEO_LOGIT_OPACITY);
}

int cs_filter3d_setup(cs_cl *cl, cs_densifier *d, const cs_scene *s)
{
    int n = 0;
    float *buf = calloc((size_t)s->n_cams * 20 + 20, sizeof(float));
    if (!buf) return cs_fail("out of host memory");
    d->max_focal = 0;
    for (int i = 0; i < s->n_cams; i++) {
        const cs_camera *c = &s->cams[i];
        if (c->is_test) continue;
        float *o = buf + n * 20;
        for (int j = 0; j < 9; j++) o[j] = (float)c->R[j];
        for (int j = 0; j < 3; j++) o[9 + j] = (float)c->t[j];
        o[12] = (float)c->fx, o[13] = (float)c->fy, o[14] = (float)c->cx, o[15] = (float)c->cy;
        o[16] = (float)c->width, o[17] = (float)c->height;
        if (c->fx > d->max_focal) d->max_focal = (float)c->fx;
        n++;
    }
    d->ncams = n;
    int r = cs_buf_alloc(cl, &d->cams, CS_MEM_OTHER, (size_t)(n ? n : 1) * 80, "3D filter cameras") ||
            cs_buf_write(cl, &d->cams, 0, (size_t)n * 80, buf);
    free(buf);
    return r ? -1 : 0;
}

int cs_filter3d_compute(cs_cl *cl, const cs_kernels *k, cs_densifier *d, cs_model *m)
{
    if (!m->layout.filter_3d || m->n == 0) return 0;
    if (cs_buf_reserve(cl, &d->dist, (size_t)m->n * 4, 0, "3D filter depths") ||
        cs_buf_reserve(cl, &d->maxbits, 16, 0, "3D filter max"))
        return -1;
    cl_uint zero = 0;
    size_t g = (size_t)m->n, l = 256;
    return cs_buf_fill(cl, &d->maxbits, 0, 4, &zero, 4) ||
           cs_cl_run(cl, k->filter3d_depth, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(m->n), CS_ARG(m->geo.mem),
                     CS_ARG(d->cams.mem), CS_ARG(d->ncams), CS_ARG(d->dist.mem), CS_ARG(d->maxbits.mem)) ||
           cs_cl_run(cl, k->filter3d_finish, CS_STAGE_DENSIFY, 1, &g, &l, CS_ARG(m->n), CS_ARG(d->dist.mem),
                     CS_ARG(d->maxbits.mem), CS_ARG(d->max_focal), CS_ARG(m->filter3d.mem));
}

void cs_densifier_trim(cs_cl *cl, cs_densifier *d)
{
    cs_buf_free(cl, &d->flags), cs_buf_free(cl, &d->counts), cs_buf_free(cl, &d->offsets);
    cs_buf_free(cl, &d->keep), cs_buf_free(cl, &d->scratch), cs_buf_free(cl, &d->dist), cs_buf_free(cl, &d->maxbits);
    cs_buf_free(cl, &d->score), cs_buf_free(cl, &d->mask);
}

void cs_densifier_free(cs_cl *cl, cs_densifier *d)
{
    cs_densifier_trim(cl, d);
    cs_buf_free(cl, &d->cams);
}
