/* test_schema: the model's one description is the seam. A made-up per-Gaussian array ("tag",
 * two floats a row, copied into the rows a strategy makes) is declared through the schema
 * alone, and without any other module knowing of it, it is allocated and accounted, costs its
 * bytes in the row total the memory plan uses, survives growth, compaction and a checkpoint,
 * is exported (the host copy, PLY properties tag_0 and tag_1, and back into a model), and follows every row that densification (clone, split, prune) and MCMC (relocation,
 * growth) make: each row's tag names the row it came from, and that row's parameters match. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "densify.h"
#include "kernels.h"
#include "mcmc.h"
#include "model.h"
#include "outputs.h"
#include "ply.h"
#include "test.h"
#include "util.h"

typedef struct {
    cs_cl cl;
    cs_kernels k;
    cs_model_layout lay;
    int tag; /* the declared array's index */
} ctx;

/* N rows of SH degree 1 with opacity OP(i), scale SCALE(i), random means, rotations and SH;
   the tag of row i is (i, -i); every moment 1 */
static int make(ctx *c, cs_model *m, int n, int cap, const float *logit_op, const float *log_scale, uint64_t *rs)
{
    cs_splats s;
    if (cs_splats_alloc(&s, n, 1, 0)) return -1;
    for (int i = 0; i < n; i++) {
        for (int a = 0; a < 3; a++) s.means[i * 3 + a] = (float)test_randn(rs), s.log_scales[i * 3 + a] = log_scale[i];
        for (int a = 0; a < 4; a++) s.quats[i * 4 + a] = (float)test_randn(rs);
        s.logit_opacity[i] = logit_op[i];
        for (int a = 0; a < 12; a++) s.sh[i * 12 + a] = (float)test_randn(rs);
    }
    int r = cs_model_create(&c->cl, m, &s, &c->lay, cap);
    cs_splats_free(&s);
    float *tag = malloc(sizeof(float) * 2 * n), one = 1.f;
    for (int i = 0; tag && i < n; i++) tag[i * 2] = (float)i, tag[i * 2 + 1] = (float)-i;
    r = r || !tag || cs_buf_write(&c->cl, &m->array[c->tag], 0, sizeof(float) * 2 * n, tag) ||
        cs_buf_fill(&c->cl, &m->m_geo, 0, m->m_geo.bytes, &one, 4) || cs_buf_fill(&c->cl, &m->v2_geo, 0, m->v2_geo.bytes, &one, 4);
    free(tag);
    return r ? -1 : 0;
}

typedef struct {
    float *geo, *tag, *mom;
} host_rows;

static int download(ctx *c, cs_model *m, host_rows *h)
{
    size_t n = (size_t)m->n;
    h->geo = malloc(sizeof(float) * n * CS_GEO_W), h->tag = malloc(sizeof(float) * n * 2);
    h->mom = malloc(sizeof(float) * n * CS_GEO_W);
    return !h->geo || !h->tag || !h->mom || cs_buf_read(&c->cl, &m->geo, 0, sizeof(float) * n * CS_GEO_W, h->geo) ||
                   cs_buf_read(&c->cl, &m->array[c->tag], 0, sizeof(float) * n * 2, h->tag) ||
                   cs_buf_read(&c->cl, &m->m_geo, 0, sizeof(float) * n * CS_GEO_W, h->mom)
               ? -1
               : 0;
}

static void host_free(host_rows *h) { free(h->geo), free(h->tag), free(h->mom); }

static int zero_moments(const host_rows *h, int j)
{
    for (int k = 0; k < CS_GEO_W; k++)
        if (h->mom[j * CS_GEO_W + k] != 0.f) return 0;
    return 1;
}

/* Densification of N rows: i % 8 == 1 clones (small, high gradient), i % 8 == 5 splits (large,
   high gradient), the rest stay. Each row's tag must name its parent. */
static int check_densify(ctx *c, uint64_t *rs)
{
    enum { N = 1000 };
    float op[N], sc[N];
    for (int i = 0; i < N; i++) op[i] = 0.f, sc[i] = i % 8 == 5 ? -2.f : -6.f;
    cs_model m;
    CHECK_OK(make(c, &m, N, N, op, sc, rs));
    host_rows b;
    CHECK_OK(download(c, &m, &b));
    float *st = calloc((size_t)N * 3, sizeof(float));
    for (int i = 0; i < N; i++) st[i * 3] = i % 4 == 1 ? 1.f : 0.f, st[i * 3 + 1] = 1.f, st[i * 3 + 2] = 3.f;
    CHECK_OK(cs_buf_write(&c->cl, &m.stats, 0, sizeof(float) * N * 3, st));
    free(st);
    cs_densify_cfg cfg = {0};
    cfg.grad_threshold = 0.0002, cfg.percent_dense = 0.01, cfg.min_opacity = 0.005, cfg.max_screen_size = 20;
    cs_densifier d;
    memset(&d, 0, sizeof d);
    CHECK_OK(cs_densify_step(&c->cl, &c->k, &d, &m, &cfg, 1.0, 0, 1 << 20, (unsigned)*rs));
    int clones = N / 8, splits = N / 8;
    CHECK(m.n == N + clones + splits, "%d rows after densification, want %d", m.n, N + clones + splits);
    CHECK(m.array[c->tag].bytes >= (size_t)m.capacity * 8, "the tag array did not grow with the model");
    host_rows a;
    CHECK_OK(download(c, &m, &a));
    int *seen = calloc(N, sizeof(int)), fresh = 0;
    for (int j = 0; j < m.n; j++) {
        int t = (int)a.tag[j * 2];
        CHECK(t >= 0 && t < N && a.tag[j * 2 + 1] == -(float)t, "row %d: tag (%g, %g) names no row", j, a.tag[j * 2],
              a.tag[j * 2 + 1]);
        seen[t]++;
        fresh += zero_moments(&a, j);
        const float *g = &a.geo[j * CS_GEO_W], *p = &b.geo[t * CS_GEO_W];
        if (t % 8 == 5) { /* a split child: the parent's row, scale / 1.6, a new mean */
            for (int k = 0; k < 3; k++)
                CHECK(g[CS_GEO_LOG_SCALE + k] == p[CS_GEO_LOG_SCALE + k] - 0.47000362924573558f,
                      "row %d (split from %d): log scale %g, parent %g", j, t, g[CS_GEO_LOG_SCALE + k], p[CS_GEO_LOG_SCALE + k]);
            CHECK(!memcmp(g + CS_GEO_QUAT, p + CS_GEO_QUAT, sizeof(float) * (CS_GEO_W - CS_GEO_QUAT)),
                  "row %d (split from %d): rotation or opacity differ from the parent", j, t);
        } else {
            CHECK(!memcmp(g, p, sizeof(float) * CS_GEO_W), "row %d (tag %d): not a copy of its source row", j, t);
        }
    }
    for (int i = 0; i < N; i++)
        CHECK(seen[i] == (i % 8 == 1 || i % 8 == 5 ? 2 : 1), "row %d has %d rows after densification", i, seen[i]);
    CHECK(fresh == clones + 2 * splits, "%d rows with zero moments, want the %d new ones", fresh, clones + 2 * splits);
    printf("  densify: %d rows -> %d (%d clones, %d splits), every tag followed its parent\n", N, m.n, clones, splits);
    free(seen), host_free(&a), host_free(&b);
    cs_densifier_free(&c->cl, &d);
    cs_model_free(&c->cl, &m);
    return 0;
}

/* Over the row budget the highest gradients densify: N small rows, each a clone candidate, with
   gradients from a few hundred values (so ties straddle the cut), and room for TAKE clones. The
   rows cloned are exactly those graphdeco's sorted rule picks: the TAKE largest gradients, a
   tie across the cut left out whole. */
static int check_densify_budget(ctx *c, uint64_t *rs)
{
    enum { N = 2000 };
    float op[N], sc[N], *st = calloc((size_t)N * 3, sizeof(float)), *gr = malloc(sizeof(float) * N);
    CHECK(st && gr, "out of memory");
    for (int i = 0; i < N; i++) {
        op[i] = 0.f, sc[i] = -6.f;
        st[i * 3] = (1 + (int)(test_rand(rs) * 300)) * 1e-3f, st[i * 3 + 1] = 1.f, st[i * 3 + 2] = 3.f;
        gr[i] = st[i * 3];
    }
    int take = 1 + (int)(test_rand(rs) * 700), max_n = N + 2 * take + (test_rand(rs) < 0.5);
    qsort(gr, N, sizeof(float), test_cmp_float_desc);
    float thr = gr[take - 1] > gr[take] ? gr[take - 1] : nextafterf(gr[take], INFINITY);
    int want = 0;
    for (int i = 0; i < N; i++) want += st[i * 3] >= thr;
    cs_model m;
    CHECK_OK(make(c, &m, N, N, op, sc, rs));
    CHECK_OK(cs_buf_write(&c->cl, &m.stats, 0, sizeof(float) * N * 3, st));
    cs_densify_cfg cfg = {0};
    cfg.grad_threshold = 0.0002, cfg.percent_dense = 0.01, cfg.min_opacity = 0.005, cfg.max_screen_size = 20;
    cs_densifier d;
    memset(&d, 0, sizeof d);
    CHECK_OK(cs_densify_step(&c->cl, &c->k, &d, &m, &cfg, 1.0, 0, max_n, (unsigned)*rs));
    CHECK(m.n == N + want && want <= take, "%d rows after densification with room for %d clones, want %d (%d gradients "
          "at or above %g)", m.n, take, N + want, want, thr);
    CHECK(d.wanted == N, "the candidates asked for %ld rows, every one of the %d is a clone candidate", d.wanted, N);
    host_rows a;
    CHECK_OK(download(c, &m, &a));
    int *seen = calloc(N, sizeof(int));
    CHECK(seen, "out of memory");
    for (int j = 0; j < m.n; j++) seen[(int)a.tag[j * 2]]++;
    for (int i = 0; i < N; i++)
        CHECK(seen[i] == (st[i * 3] >= thr ? 2 : 1), "row %d (gradient %g, cut at %g) has %d rows", i, st[i * 3], thr,
              seen[i]);
    printf("  densify over the budget: room for %d clones, the %d largest gradients cloned (cut at %g)\n", take, want, thr);
    free(seen), free(st), free(gr), host_free(&a);
    cs_densifier_free(&c->cl, &d);
    cs_model_free(&c->cl, &m);
    return 0;
}

/* MCMC on N rows, every third dead: relocation and growth to 1.05 N. Each row's tag names the
   live row it is a copy of (its own index when untouched). */
static int check_mcmc(ctx *c, uint64_t *rs, const char *ckpt)
{
    enum { N = 1200, CAP = 1260 };
    float op[N], sc[N];
    for (int i = 0; i < N; i++) op[i] = i % 3 ? 0.5f : -7.f, sc[i] = -3.f;
    cs_model m, back;
    cs_mcmc mc;
    CHECK_OK(make(c, &m, N, CAP, op, sc, rs));
    CHECK_OK(cs_mcmc_init(&c->cl, &mc, CAP));
    int rel, add;
    /* relocation alone (cap N): each dead row becomes a copy of a drawn live row */
    CHECK_OK(cs_mcmc_refine(&c->cl, &c->k, &mc, &m, N, 0.005, (unsigned)*rs, &rel, &add));
    CHECK(rel == N / 3 && m.n == N, "relocated %d of %d dead rows, %d rows of %d", rel, N / 3, m.n, N);
    host_rows a;
    CHECK_OK(download(c, &m, &a));
    int moved = 0;
    for (int j = 0; j < m.n; j++) {
        int t = (int)a.tag[j * 2];
        CHECK(t >= 0 && t < N && t % 3 && (int)a.tag[t * 2] == t, "row %d: tag %d is not a live row", j, t);
        CHECK(!memcmp(&a.geo[j * CS_GEO_W], &a.geo[t * CS_GEO_W], sizeof(float) * CS_GEO_W),
              "row %d: not a copy of row %d its tag names", j, t);
        if (t == j) continue;
        moved++;
        CHECK(zero_moments(&a, j), "row %d made from %d kept moments", j, t);
    }
    CHECK(moved == rel, "%d rows carry another row's tag, want the %d relocated", moved, rel);
    host_free(&a);
    /* growth to the cap: each new row is a copy of some row, its tag included */
    CHECK_OK(cs_mcmc_refine(&c->cl, &c->k, &mc, &m, CAP, 0.005, (unsigned)*rs + 1, &rel, &add));
    CHECK(m.n == CAP && add == CAP - N, "grew to %d rows (added %d), want %d", m.n, add, CAP);
    CHECK_OK(download(c, &m, &a));
    for (int j = N; j < m.n; j++) {
        int src = -1;
        for (int i = 0; i < N && src < 0; i++)
            if (!memcmp(&a.geo[i * CS_GEO_W], &a.geo[j * CS_GEO_W], sizeof(float) * CS_GEO_W) &&
                !memcmp(&a.tag[i * 2], &a.tag[j * 2], sizeof(float) * 2))
                src = i;
        CHECK(src >= 0 && zero_moments(&a, j), "new row %d: no row has its parameters and tag (or moments kept)", j);
    }
    printf("  mcmc: %d relocated, then %d added, every tag followed its source\n", N / 3, add);
    /* checkpoint: the tag is kept, and the file has its bytes */
    m.target = 1 + (int)(test_rand(rs) * 1e6);
    CHECK_OK(cs_checkpoint_save(&c->cl, &m, 7, ckpt));
    size_t len = 0, want = sizeof(cs_ckpt_header);
    free(cs_read_file(ckpt, &len));
    cs_model_array d[CS_SCHEMA_MAX];
    int na = cs_model_arrays(&m, d);
    for (int i = 0; i < na; i++) want += d[i].desc->checkpointed ? d[i].row_bytes * (size_t)m.n : 0;
    CHECK(len == want, "checkpoint of %zu bytes, the schema says %zu", len, want);
    int iter;
    CHECK_OK(cs_checkpoint_load(&c->cl, &back, &iter, ckpt, &c->lay));
    host_rows r;
    CHECK_OK(download(c, &back, &r));
    CHECK(iter == 7 && back.n == m.n && !memcmp(r.tag, a.tag, sizeof(float) * 2 * m.n), "the tag did not survive the checkpoint");
    CHECK(back.target == m.target, "the Gaussian target %d came back as %d", m.target, back.target);
    host_free(&a), host_free(&r);
    cs_mcmc_free(&c->cl, &mc);
    cs_model_free(&c->cl, &m), cs_model_free(&c->cl, &back);
    return 0;
}

/* the model's host copy, its PLY export and a model made from that copy carry the tag */
static int check_export(ctx *c, cs_model *m)
{
    cs_splats s;
    CHECK_OK(cs_model_download(&c->cl, m, &s));
    CHECK(s.n_extra == 1 && !strcmp(s.extra[0].name, "tag") && s.extra[0].width == 2, "the host copy has %d extra "
          "columns (%s), want the tag", s.n_extra, s.n_extra ? s.extra[0].name : "none");
    for (int i = 0; i < s.n; i++)
        CHECK(s.extra[0].values[i * 2] == (float)i && s.extra[0].values[i * 2 + 1] == (float)-i,
              "row %d: tag (%g, %g) in the host copy", i, s.extra[0].values[i * 2], s.extra[0].values[i * 2 + 1]);
    char ply[1200];
    snprintf(ply, sizeof ply, "%s/schema_tag.ply", test_tmpdir());
    CHECK_OK(cs_ply_write(ply, &s, 0));
    size_t len = 0;
    char *d = cs_read_file(ply, &len);
    CHECK(d, "%s", cs_last_error());
    char *end = strstr(d, "end_header\n");
    CHECK(end && strstr(d, "property float tag_0\nproperty float tag_1\nend_header"), "the PLY header lacks tag_0, tag_1");
    size_t body = (size_t)(end + 11 - d), row = (len - body) / (size_t)s.n;
    for (int i = 0; i < s.n; i++) {
        float t[2];
        memcpy(t, d + body + row * (size_t)(i + 1) - 8, 8);
        CHECK(t[0] == (float)i && t[1] == (float)-i, "PLY row %d: tag (%g, %g)", i, t[0], t[1]);
    }
    free(d);
    /* and back: a model made from the host copy has the same tag rows */
    cs_model back;
    CHECK_OK(cs_model_create(&c->cl, &back, &s, &c->lay, s.n));
    float *t = malloc(sizeof(float) * 2 * (size_t)s.n);
    CHECK_OK(cs_buf_read(&c->cl, &back.array[c->tag], 0, sizeof(float) * 2 * (size_t)s.n, t));
    CHECK(!memcmp(t, s.extra[0].values, sizeof(float) * 2 * (size_t)s.n), "a model made from the host copy lost the tag");
    printf("  export: the host copy, the PLY (tag_0, tag_1) and a model made from the copy carry the tag\n");
    free(t);
    cs_model_free(&c->cl, &back);
    cs_splats_free(&s);
    return 0;
}

static int with_tag(ctx *c)
{
    uint64_t rs = test_seed() ^ 0x736368656d61ull;
    cs_row_bytes before = cs_model_row_bytes(&c->lay);
    cs_array_desc tag = {"tag", "test: the row each row came from", 2, CS_ST_F32, CS_IF_ALWAYS, CS_MEM_PARAMS, 1,
                         CS_ARRAY_NONE, CS_NEW_COPY};
    c->tag = cs_schema_extend(&tag);
    CHECK(c->tag >= CS_ARRAY_BUILTIN, "%s", cs_last_error());
    CHECK(cs_schema_extend(&tag) < 0, "the same name was declared twice");
    cs_row_bytes after = cs_model_row_bytes(&c->lay);
    CHECK(after.params == before.params + 8 && cs_row_bytes_total(&after) == cs_row_bytes_total(&before) + 8,
          "a row costs %zu bytes with the tag, %zu without", cs_row_bytes_total(&after), cs_row_bytes_total(&before));
    /* allocated and accounted */
    size_t params0 = c->cl.mem.cur[CS_MEM_PARAMS];
    cs_model m;
    float op[64], sc[64];
    for (int i = 0; i < 64; i++) op[i] = 0.f, sc[i] = -3.f;
    CHECK_OK(make(c, &m, 64, 100, op, sc, &rs));
    CHECK(m.array[c->tag].bytes == 100 * 8 && c->cl.mem.cur[CS_MEM_PARAMS] - params0 == 100 * after.params,
          "tag buffer %zu bytes, parameters accounted %zu, want %d and %zu", m.array[c->tag].bytes,
          c->cl.mem.cur[CS_MEM_PARAMS] - params0, 100 * 8, 100 * after.params);
    CHECK_OK(check_export(c, &m));
    cs_model_free(&c->cl, &m);
    char ckpt[1200];
    snprintf(ckpt, sizeof ckpt, "%s/schema_tag.ckpt", test_tmpdir());
    return check_densify(c, &rs) || check_densify_budget(c, &rs) || check_mcmc(c, &rs, ckpt);
}

int test_schema_extra_array(void)
{
    ctx c;
    memset(&c, 0, sizeof c);
    cs_kernel_opts ko = {{1, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    c.lay = ko.layout;
    CHECK_OK(test_open_cl(&c.cl));
    CHECK_OK(cs_kernels_build(&c.cl, &ko, &c.k));
    int r = with_tag(&c);
    cs_schema_drop_extras(); /* the other tests see the built-in schema */
    cs_kernels_release(&c.k);
    cs_cl_close(&c.cl);
    return r;
}

/* graphdeco's opacity reset against a CPU reference: opacity <- min(opacity, 0.01) (with the
   3D filter, of the filtered opacity), and the schema's optimizer state of that column (m and v
   of the geometry, in fp32 or 16 bits) zeroed, every other bit of the model untouched. The
   moments are poisoned with a non-zero pattern first. */
static int reset_check(int filter_3d, int opt_half, float decay)
{
    uint64_t rs = test_seed() ^ (0x0ac1 + (unsigned)(2 * filter_3d + opt_half) + (decay > 0 ? 16u : 0u));
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_kernel_opts ko = {{1, 0, filter_3d, opt_half}, 0, 0, 0, 0, CS_PROGS(density), 0};
    cs_kernels k;
    CHECK_OK(cs_kernels_build(&cl, &ko, &k));
    enum { N = 777 };
    cs_splats s;
    CHECK_OK(cs_splats_alloc(&s, N, 1, 0));
    for (int i = 0; i < N; i++) {
        for (int a = 0; a < 3; a++) s.means[i * 3 + a] = (float)test_randn(&rs), s.log_scales[i * 3 + a] = (float)(-6 + 5 * test_rand(&rs));
        for (int a = 0; a < 4; a++) s.quats[i * 4 + a] = (float)test_randn(&rs);
        s.logit_opacity[i] = (float)(12 * test_rand(&rs) - 6);
        for (int a = 0; a < 12; a++) s.sh[i * 12 + a] = (float)test_randn(&rs);
    }
    cs_model m;
    CHECK_OK(cs_model_create(&cl, &m, &s, &ko.layout, N));
    float *f3 = malloc(sizeof(float) * N);
    for (int i = 0; i < N; i++) f3[i] = (float)(0.001 + 0.1 * test_rand(&rs));
    if (filter_3d) CHECK_OK(cs_buf_write(&cl, &m.filter3d, 0, sizeof(float) * N, f3));
    cs_buf *state[4] = {&m.m_geo, &m.v2_geo, &m.m_sh, &m.v2_sh};
    unsigned char *before[4], *after[4];
    uint32_t poison = 0x3c013c02u;
    for (int a = 0; a < 4; a++) {
        CHECK_OK(cs_buf_fill(&cl, state[a], 0, state[a]->bytes, &poison, 4));
        before[a] = malloc(state[a]->bytes), after[a] = malloc(state[a]->bytes);
        CHECK_OK(cs_buf_read(&cl, state[a], 0, state[a]->bytes, before[a]));
    }
    float *g0 = malloc(sizeof(float) * N * CS_GEO_W), *g1 = malloc(sizeof(float) * N * CS_GEO_W);
    CHECK_OK(cs_buf_read(&cl, &m.geo, 0, sizeof(float) * N * CS_GEO_W, g0));
    CHECK_OK(cs_densify_reset_opacity(&cl, &k, &m, decay));
    CHECK_OK(cs_buf_read(&cl, &m.geo, 0, sizeof(float) * N * CS_GEO_W, g1));
    for (int a = 0; a < 4; a++) CHECK_OK(cs_buf_read(&cl, state[a], 0, state[a]->bytes, after[a]));
    double worst = 0;
    int lowered = 0;
    for (int i = 0; i < N; i++) {
        const float *r0 = g0 + i * CS_GEO_W, *r1 = g1 + i * CS_GEO_W;
        double op = 1 / (1 + exp(-(double)r0[CS_GEO_LOGIT_OPACITY])), c3 = 1;
        if (filter_3d) {
            double f2 = (double)f3[i] * f3[i], p = 1;
            for (int a = 0; a < 3; a++) {
                double s2 = exp(2.0 * r0[CS_GEO_LOG_SCALE + a]);
                p *= s2 / (s2 + f2);
            }
            c3 = sqrt(p);
        }
        double eff = op * c3;
        /* graphdeco's reset, or LiteGS's decay (kept where it would fall under 1/255) */
        double t = (decay > 0 ? (eff * decay >= 1.0 / 255 ? eff * decay : eff) : fmin(eff, 0.01)) / c3;
        t = fmin(fmax(t, 1e-7), 1 - 1e-7);
        double got = 1 / (1 + exp(-(double)r1[CS_GEO_LOGIT_OPACITY])), err = fabs(got - t) / t;
        worst = err > worst ? err : worst;
        lowered += t < op;
        /* the kernel's float test of eff * decay against 1/255 may go the other way at the edge */
        if (decay > 0 && fabs(eff * decay - 1.0 / 255) < 1e-5) continue;
        CHECK(err < 1e-4, "row %d: opacity %.7g after the reset, the reference %.7g (before %.7g, 3D filter factor %.4g)",
              i, got, t, op, c3);
        CHECK(!memcmp(r0, r1, sizeof(float) * CS_GEO_LOGIT_OPACITY), "row %d: the reset changed more than the opacity", i);
    }
    /* the state of the opacity column is zero bits, everything else the poison */
    size_t elem = opt_half ? 2 : 4;
    for (int a = 0; a < 4; a++) {
        for (size_t b = 0; b < state[a]->bytes && b < (size_t)N * CS_GEO_W * elem; b++) {
            int col = (int)(b / elem % CS_GEO_W);
            int zero = a < 2 && col == CS_GEO_LOGIT_OPACITY;
            CHECK(after[a][b] == (zero ? 0 : before[a][b]), "optimizer state %d, byte %zu (row %zu, column %d): %u, want %u",
                  a, b, b / elem / CS_GEO_W, col, after[a][b], zero ? 0 : before[a][b]);
        }
        if (a >= 2) CHECK(!memcmp(before[a], after[a], state[a]->bytes), "the reset touched the SH optimizer state");
        free(before[a]), free(after[a]);
    }
    printf("  opacity %s (3D filter %d, %s moments): %d of %d lowered, worst relative error %.2g; the moments of "
           "the column zeroed\n", decay > 0 ? "decay" : "reset", filter_3d, opt_half ? "16-bit" : "fp32", lowered, N, worst);
    free(f3), free(g0), free(g1);
    cs_splats_free(&s);
    cs_model_free(&cl, &m);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}

int test_opacity_reset(void)
{
    for (int f = 0; f < 2; f++)
        for (int h = 0; h < 2; h++) {
            CHECK_OK(reset_check(f, h, 0.f));
            CHECK_OK(reset_check(f, h, f ? 0.5f : 0.7f));
        }
    return 0;
}
