/* #38's geometry stage: the connectivity, the reference's gradient against central differences
 * of the anti-aliased drawing, the device against the reference (mesh_geom.h, ref_mesh.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh_device.h"
#include "mesh_geom.h"
#include "mesh_raster.h"
#include "ref_mesh.h"
#include "test.h"
#include "util.h"

/* a scene to draw: PATCHES grids of G x G vertices (two triangles a cell, one winding), each a
   gently bent sheet at a random place and tilt, and LOOSE triangles of their own, all with
   random colours in [0, 1]; the camera at the origin looking down +z from 3 units before them */
typedef struct {
    cs_mesh m;
    float *col;
    cs_camera c;
} geom_scene;

static void scene_free(geom_scene *s)
{
    free(s->m.pos), free(s->m.rgb), free(s->m.tri), free(s->col);
}

static int make_scene(geom_scene *s, int patches, int G, int loose, uint64_t *rs)
{
    memset(s, 0, sizeof *s);
    cs_camera *c = &s->c;
    c->width = 64, c->height = 48, c->fx = c->fy = 60, c->cx = 32.3, c->cy = 23.8, c->R[0] = c->R[4] = c->R[8] = 1, c->t[2] = 3;
    size_t nv = (size_t)patches * G * G + 3 * (size_t)loose, nt = (size_t)patches * 2 * (G - 1) * (G - 1) + (size_t)loose;
    s->m.pos = malloc(12 * nv), s->m.rgb = malloc(3 * nv), s->m.tri = malloc(12 * nt), s->col = malloc(12 * nv);
    if (!s->m.pos || !s->m.rgb || !s->m.tri || !s->col) return -1;
    size_t v = 0, t = 0;
    for (int p = 0; p < patches; p++) {
        double cx = 1.6 * test_rand(rs) - 0.8, cy = 1.2 * test_rand(rs) - 0.6, cz = test_rand(rs) - 0.5;
        double size = 0.4 + 0.6 * test_rand(rs), tilt = 0.8 * test_rand(rs) - 0.4, bend = 0.3 * test_rand(rs);
        size_t base = v;
        for (int y = 0; y < G; y++)
            for (int x = 0; x < G; x++, v++) {
                double u = (double)x / (G - 1) - 0.5, w = (double)y / (G - 1) - 0.5;
                s->m.pos[3 * v] = (float)(cx + size * u), s->m.pos[3 * v + 1] = (float)(cy + size * w);
                s->m.pos[3 * v + 2] = (float)(cz + tilt * size * u + bend * size * (u * u + w * w));
            }
        for (int y = 0; y + 1 < G; y++)
            for (int x = 0; x + 1 < G; x++) {
                uint32_t a = (uint32_t)(base + (size_t)y * G + x), b = a + 1, d = a + (uint32_t)G, e = d + 1;
                uint32_t q[6] = {a, b, e, a, e, d};
                memcpy(s->m.tri + 3 * t, q, sizeof q), t += 2;
            }
    }
    for (int l = 0; l < loose; l++, t++) {
        double cx = 1.6 * test_rand(rs) - 0.8, cy = 1.2 * test_rand(rs) - 0.6, cz = test_rand(rs) - 0.5, sz = 0.1 + 0.3 * test_rand(rs);
        for (int k = 0; k < 3; k++, v++) {
            s->m.pos[3 * v] = (float)(cx + sz * test_randn(rs)), s->m.pos[3 * v + 1] = (float)(cy + sz * test_randn(rs));
            s->m.pos[3 * v + 2] = (float)(cz + sz * test_randn(rs));
            s->m.tri[3 * t + k] = (uint32_t)v;
        }
    }
    s->m.nv = nv, s->m.nt = nt;
    for (size_t i = 0; i < 3 * nv; i++) s->m.rgb[i] = (uint8_t)(255 * test_rand(rs)), s->col[i] = s->m.rgb[i] / 255.f;
    return 0;
}

/* buffers of one drawing */
typedef struct {
    int32_t *tri, *code;
    float *w, *uvz, *img, *depth;
    double *aa;
} drawing;

static int draw_open(drawing *d, size_t npx, size_t nv)
{
    d->tri = malloc(4 * npx), d->w = malloc(12 * npx), d->uvz = malloc(12 * nv), d->img = malloc(12 * npx);
    d->depth = malloc(4 * npx), d->aa = malloc(24 * npx), d->code = malloc(8 * npx);
    return d->tri && d->w && d->uvz && d->img && d->depth && d->aa && d->code ? 0 : -1;
}

static void draw_free(drawing *d)
{
    free(d->tri), free(d->w), free(d->uvz), free(d->img), free(d->depth), free(d->aa), free(d->code);
}

static const float BG[3] = {0.9f, 0.5f, 0.1f};

/* the anti-aliased drawing of S on the host, and R . it (R: (3, H, W)) */
static double draw_host(const geom_scene *s, const cs_mesh_topo *tp, drawing *d, const double *r)
{
    int npx = s->c.width * s->c.height;
    if (cs_mesh_visibility(&s->m, &s->c, 1, d->tri, d->w)) return NAN;
    ref_mesh_project(&s->m, &s->c, d->uvz);
    ref_mesh_draw(&s->m, s->col, d->tri, d->w, d->uvz, npx, BG, d->img, d->depth);
    ref_mesh_view v = {s->c.width, s->c.height, s->m.tri, tp->nbr, d->uvz, d->tri, d->depth};
    ref_mesh_aa_fwd(&v, d->img, d->aa, d->code);
    double l = 0;
    for (int i = 0; i < 3 * npx; i++) l += r[i] * d->aa[i];
    return l;
}

/* the reference's gradient of R . AA(drawing) to every position: GP (nv x 3) */
static void grad_host(const geom_scene *s, const cs_mesh_topo *tp, drawing *d, const double *r, double *gp)
{
    int npx = s->c.width * s->c.height;
    double *vin = malloc(24 * (size_t)npx), *g = calloc(3 * s->m.nv, sizeof(double));
    ref_mesh_view v = {s->c.width, s->c.height, s->m.tri, tp->nbr, d->uvz, d->tri, d->depth};
    ref_mesh_aa_bwd(&v, d->img, r, vin, g);
    ref_mesh_interior_bwd(&v, s->col, vin, g);
    ref_mesh_project_bwd(&s->c, &s->m, g, gp);
    free(vin), free(g);
}

/* Connectivity of a grid patch (every inner edge between two triangles, the rim's open), and
 * the anti-aliasing of one flat patch alone: no pixel pair inside it blends (its inner edges
 * are no silhouettes), pairs at its rim do. */
int test_mesh_topology(void)
{
    uint64_t rs = test_seed() ^ 0x70b0;
    geom_scene s;
    const int G = 6 + (int)(test_rand(&rs) * 5);
    CHECK_OK(make_scene(&s, 1, G, 0, &rs));
    for (size_t v = 0; v < s.m.nv; v++) { /* flat, facing the camera, inside its view */
        s.m.pos[3 * v] = (float)(1.6 * ((double)(v % G) / (G - 1) - 0.5));
        s.m.pos[3 * v + 1] = (float)(1.2 * ((double)(v / G) / (G - 1) - 0.5)), s.m.pos[3 * v + 2] = 0.2f;
    }
    cs_mesh_topo tp;
    CHECK_OK(cs_mesh_topology(&s.m, &tp));
    size_t inner = 0, open = 0, cells = (size_t)(G - 1) * (G - 1);
    for (size_t e = 0; e < tp.ne; e++) inner += tp.edges[4 * e + 3] >= 0, open += tp.edges[4 * e + 3] < 0;
    /* a G x G grid: (G - 1) G edges each way plus a diagonal a cell; 4 (G - 1) on the rim */
    CHECK(tp.ne == 2 * (size_t)(G - 1) * G + cells && open == 4 * (size_t)(G - 1), "%zu edges, %zu open (G %d)", tp.ne, open, G);
    size_t with_nbr = 0;
    for (size_t i = 0; i < 3 * s.m.nt; i++) with_nbr += tp.nbr[i] >= 0;
    CHECK(with_nbr == 2 * inner, "%zu neighbour links for %zu inner edges", with_nbr, inner);
    CHECK(fabsf(tp.inv_deg[(size_t)G + 1] - 1.f / 6) < 1e-6f && fabsf(tp.inv_deg[0] - 1.f / 3) < 1e-6f,
          "degrees: inner %g, corner %g", 1 / tp.inv_deg[G + 1], 1 / tp.inv_deg[0]);
    /* flipping one triangle's winding cuts its links */
    uint32_t keep = s.m.tri[4];
    s.m.tri[4] = s.m.tri[5], s.m.tri[5] = keep;
    cs_mesh_topo flip;
    CHECK_OK(cs_mesh_topology(&s.m, &flip));
    CHECK(flip.nbr[3] < 0 && flip.nbr[4] < 0 && flip.nbr[5] < 0, "a triangle of the other winding kept a neighbour");
    cs_mesh_topo_free(&flip);
    s.m.tri[5] = s.m.tri[4], s.m.tri[4] = keep;

    int npx = s.c.width * s.c.height;
    drawing d;
    double *r = calloc(3 * (size_t)npx, sizeof(double));
    CHECK(r && !draw_open(&d, (size_t)npx, s.m.nv), "out of memory");
    draw_host(&s, &tp, &d, r);
    long inside = 0, rim = 0, covered = 0;
    for (int i = 0; i < npx; i++) {
        int x = i % s.c.width, y = i / s.c.width, changed = 0;
        covered += d.tri[i] >= 0;
        for (int c = 0; c < 3; c++) changed |= d.aa[(size_t)c * npx + i] != d.img[(size_t)c * npx + i];
        if (!changed) continue;
        int all_covered = d.tri[i] >= 0;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int xx = x + dx, yy = y + dy;
                if ((dx && dy) || xx < 0 || yy < 0 || xx >= s.c.width || yy >= s.c.height) continue;
                all_covered &= d.tri[(size_t)yy * s.c.width + xx] >= 0;
            }
        inside += all_covered, rim += !all_covered;
    }
    printf("  %dx%d grid: %zu edges (%zu open); %ld pixels covered, %ld blended at the rim, %ld inside\n", G, G, tp.ne,
           open, covered, rim, inside);
    CHECK(covered > 100 && rim > 10 && inside == 0, "%ld blended pixels inside the patch, %ld at its rim", inside, rim);
    free(r), draw_free(&d), cs_mesh_topo_free(&tp), scene_free(&s);
    return 0;
}

/* The reference's gradient of R . AA(drawing) to the positions against central differences of
 * the host's drawing (at two steps, extrapolated), over patches that overlap and loose
 * triangles: at coordinates where the steps change no pixel's triangle and no blend (the
 * drawing is smooth there), at least 99% agree to 2% of the gradient plus a thousandth of the
 * largest. */
int test_mesh_geom_grad(void)
{
    uint64_t rs = test_seed() ^ 0x6e0d;
    geom_scene s;
    CHECK_OK(make_scene(&s, 3, 5, 12, &rs));
    cs_mesh_topo tp;
    CHECK_OK(cs_mesh_topology(&s.m, &tp));
    int npx = s.c.width * s.c.height;
    drawing d, e;
    double *r = malloc(24 * (size_t)npx), *gp = malloc(24 * s.m.nv);
    CHECK(r && gp && !draw_open(&d, (size_t)npx, s.m.nv) && !draw_open(&e, (size_t)npx, s.m.nv), "out of memory");
    for (int i = 0; i < 3 * npx; i++) r[i] = test_randn(&rs);
    draw_host(&s, &tp, &d, r);
    grad_host(&s, &tp, &d, r, gp);
    double gmax = 0;
    for (size_t i = 0; i < 3 * s.m.nv; i++) gmax = fmax(gmax, fabs(gp[i]));
    const float eps = 2e-4f;
    int checked = 0, good = 0, skipped = 0, shown = 0;
    for (size_t i = 0; i < 3 * s.m.nv; i++) {
        if (fabs(gp[i]) < 1e-3 * gmax && test_rand(&rs) > 0.1) continue; /* mostly coordinates that matter */
        float keep = s.m.pos[i];
        double l[4], h[2];
        int same = 1;
        for (int k = 0; k < 4; k++) { /* +-eps, then +-eps/2 */
            float step = k < 2 ? eps : eps / 2;
            s.m.pos[i] = keep + (k % 2 ? -step : step);
            if (k % 2 == 0) h[k / 2] = (double)s.m.pos[i] - keep; /* the step the float holds */
            l[k] = draw_host(&s, &tp, &e, r);
            same &= !memcmp(e.tri, d.tri, 4 * (size_t)npx) && !memcmp(e.code, d.code, 8 * (size_t)npx);
        }
        s.m.pos[i] = keep;
        if (!same) {
            skipped++;
            continue;
        }
        /* Richardson: the central differences at two steps, their h^2 error cancelled (a vertex
           near the camera bends the drawing enough that one step alone was 10% off) */
        double fd = (4 * (l[2] - l[3]) / (2 * h[1]) - (l[0] - l[1]) / (2 * h[0])) / 3;
        int ok = fabs(fd - gp[i]) <= 0.02 * fabs(gp[i]) + 1e-3 * gmax;
        checked++, good += ok;
        if (!ok && shown++ < 5) printf("  coordinate %zu: analytic %.6g, central difference %.6g\n", i, gp[i], fd);
    }
    printf("  %zu vertices: %d coordinates checked, %d agree, %d skipped (a pixel's triangle or blend changed); largest %.3g\n",
           s.m.nv, checked, good, skipped, gmax);
    CHECK(checked >= 60 && good >= 0.99 * checked, "%d of %d coordinates agree", good, checked);
    free(r), free(gp), draw_free(&d), draw_free(&e), cs_mesh_topo_free(&tp), scene_free(&s);
    return 0;
}

/* gradient buffers of the device read back as doubles: N rows of 4 floats, the first 3 kept */
static int read4(cs_cl *cl, const cs_buf *b, size_t n, double *out)
{
    float *f = malloc(16 * (n ? n : 1));
    if (!f || cs_buf_read(cl, b, 0, 16 * n, f)) return free(f), -1;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) out[3 * i + k] = f[4 * i + k];
    free(f);
    return 0;
}

/* whether A and B (N values) agree to TOL of B's largest; the count off into *BAD */
static int agree(const double *a, const double *b, size_t n, double tol, long *bad)
{
    double mx = 0;
    *bad = 0;
    for (size_t i = 0; i < n; i++) mx = fmax(mx, fabs(b[i]));
    for (size_t i = 0; i < n; i++) *bad += !(fabs(a[i] - b[i]) <= tol * mx);
    return *bad == 0 && mx > 0;
}

/* The device against the reference on the device's own visibility buffer: the anti-aliased
 * drawing, the gradient before the anti-aliasing and per vertex (du, dv, dz), the world
 * positions' gradient; the regularisers against central differences of their energy; then a
 * whole step: only the vertices the view gave a gradient move, each by the step. */
int test_mesh_geom_device(void)
{
    uint64_t rs = test_seed() ^ 0x67e0;
    geom_scene s;
    CHECK_OK(make_scene(&s, 3, 6, 10, &rs));
    cs_mesh_topo tp;
    CHECK_OK(cs_mesh_topology(&s.m, &tp));
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    size_t npx = (size_t)s.c.width * s.c.height, nv = s.m.nv;
    cs_mesh_dev d;
    CHECK_OK(cs_mesh_dev_open(&d, &cl, &s.m, npx, 1, BG));
    size_t nmove = nv - 3; /* the last loose triangle's last corner stays */
    CHECK_OK(cs_mesh_dev_geom_open(&d, &s.m, nmove));
    float nanv = NAN;
    CHECK_OK(cs_buf_fill(&cl, &d.img_aa, 0, d.img_aa.bytes, &nanv, 4));
    CHECK_OK(cs_mesh_dev_visibility(&d, &s.c));
    CHECK_OK(cs_mesh_dev_draw_aa(&d));
    drawing h;
    CHECK_OK(draw_open(&h, npx, nv));
    float *f4 = malloc(16 * (nv > npx ? nv : npx)), *aa = malloc(12 * npx);
    double *vout = malloc(24 * npx), *vin = malloc(24 * npx), *g = calloc(3 * nv, sizeof(double));
    double *dg = malloc(24 * nv), *gp = malloc(24 * nv), *dgp = malloc(24 * nv), *dvin = malloc(24 * npx);
    CHECK(f4 && aa && vout && vin && g && dg && gp && dgp && dvin, "out of memory");
    uint32_t *bits = (uint32_t *)f4;
    CHECK_OK(cs_mesh_dev_read_visibility(&d, h.tri, h.w));
    CHECK_OK(cs_buf_read(&cl, &d.depth, 0, 4 * npx, bits));
    for (size_t i = 0; i < npx; i++) memcpy(&h.depth[i], &bits[i], 4);
    CHECK_OK(cs_buf_read(&cl, &d.uvz, 0, 16 * nv, f4));
    for (size_t i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) h.uvz[3 * i + k] = f4[4 * i + k];
    CHECK_OK(cs_buf_read(&cl, &d.img, 0, 12 * npx, h.img));
    CHECK_OK(cs_buf_read(&cl, &d.img_aa, 0, 12 * npx, aa));
    ref_mesh_view v = {s.c.width, s.c.height, s.m.tri, tp.nbr, h.uvz, h.tri, h.depth};
    ref_mesh_aa_fwd(&v, h.img, h.aa, NULL);
    long bad = 0, blended = 0;
    for (size_t i = 0; i < 3 * npx; i++) bad += !(fabs(aa[i] - h.aa[i]) <= 1e-4), blended += h.aa[i] != h.img[i];
    printf("  anti-aliased drawing: %ld values blended, %ld off\n", blended, bad);
    CHECK(bad == 0 && blended > 50, "%ld values off, %ld blended", bad, blended);

    /* the backward, given a random image gradient */
    cs_buf vb = {0};
    float *vf = (float *)aa;
    for (size_t i = 0; i < 3 * npx; i++) vout[i] = vf[i] = (float)test_randn(&rs);
    CHECK_OK(cs_buf_alloc(&cl, &vb, CS_MEM_OTHER, 12 * npx, "test image gradient"));
    CHECK_OK(cs_buf_write(&cl, &vb, 0, 12 * npx, vf));
    CHECK_OK(cs_mesh_dev_aa_backward(&d, &vb));
    ref_mesh_aa_bwd(&v, h.img, vout, vin, g);
    ref_mesh_interior_bwd(&v, s.col, vin, g);
    CHECK_OK(cs_buf_read(&cl, &d.v_pre, 0, 12 * npx, vf));
    for (size_t i = 0; i < 3 * npx; i++) dvin[i] = vf[i];
    CHECK(agree(dvin, vin, 3 * npx, 1e-4, &bad), "gradient before the anti-aliasing: %ld values off", bad);
    CHECK_OK(read4(&cl, &d.gv, nv, dg));
    CHECK(agree(dg, g, 3 * nv, 1e-3, &bad), "per-vertex (du, dv, dz): %ld values off", bad);
    CHECK_OK(cs_mesh_dev_project_backward(&d, &s.c));
    ref_mesh_project_bwd(&s.c, &s.m, g, gp);
    for (size_t i = 3 * nmove; i < 3 * nv; i++) gp[i] = 0; /* the vertices that stay */
    CHECK_OK(read4(&cl, &d.gp, nv, dgp));
    CHECK(agree(dgp, gp, 3 * nv, 1e-3, &bad), "world gradient: %ld values off", bad);

    /* the regularisers: the device's added gradient against central differences of the energy */
    const double kl = 0.7, kn = 0.3;
    CHECK_OK(cs_mesh_dev_regularize(&d, (float)kl, (float)kn));
    double *after = malloc(24 * nv), *fd = malloc(24 * nv);
    CHECK(after && fd, "out of memory");
    CHECK_OK(read4(&cl, &d.gp, nv, after));
    for (size_t i = 0; i < 3 * nv; i++) {
        float keep = s.m.pos[i];
        s.m.pos[i] = keep + 1e-3f;
        double ep = ref_mesh_reg_energy(&s.m, &tp, kl, kn);
        s.m.pos[i] = keep - 1e-3f;
        double em = ref_mesh_reg_energy(&s.m, &tp, kl, kn);
        s.m.pos[i] = keep;
        fd[i] = (ep - em) / 2e-3, after[i] -= dgp[i];
    }
    CHECK(agree(after, fd, 3 * nv, 2e-3, &bad), "regularisers: %ld values off", bad);
    printf("  device: (du, dv, dz), world and regulariser gradients of %zu vertices match the reference\n", nv);

    /* a whole step: only the vertices this view gives a gradient move, each coordinate by the
       step (Adam's first) */
    float *p0 = malloc(12 * nv), *p1 = malloc(12 * nv);
    CHECK(p0 && p1, "out of memory");
    cs_image photo = {s.c.width, s.c.height, 3, malloc(3 * npx)};
    CHECK(photo.px, "out of memory");
    for (size_t i = 0; i < 3 * npx; i++) photo.px[i] = (uint8_t)(255 * test_rand(&rs));
    CHECK_OK(cs_mesh_dev_read_positions(&d, p0));
    CHECK_OK(cs_buf_fill(&cl, &d.gp, 0, d.gp.bytes, &(float){0.f}, 4));
    cs_mesh_geom_opts go = {0.01, 1, 0.1};
    CHECK_OK(cs_mesh_dev_visibility(&d, &s.c));
    CHECK_OK(cs_mesh_dev_geom_step(&d, &s.c, &photo, 0.2f, &go, 1, NULL));
    CHECK_OK(cs_mesh_dev_read_positions(&d, p1));
    double step = go.lr * d.edge_len;
    char *vis = calloc(nv, 1);
    CHECK(vis, "out of memory");
    for (size_t i = 0; i < npx; i++)
        for (int k = 0; h.tri[i] >= 0 && k < 3; k++) vis[s.m.tri[3 * (size_t)h.tri[i] + k]] = 1;
    long moved = 0, wrong = 0;
    for (size_t i = 0; i < nv; i++)
        for (int k = 0; k < 3; k++) {
            double dx = fabs((double)p1[3 * i + k] - p0[3 * i + k]);
            moved += dx > 0;
            if (i >= nmove || !vis[i]) wrong += dx != 0; /* not drawn, or kept: stays */
            else wrong += dx > 0 && fabs(dx - step) > 1e-3 * step + 1e-6;
        }
    free(vis);
    printf("  one step: %ld coordinates moved, %ld wrong (step %.4g)\n", moved, wrong, step);
    CHECK(moved > 30 && wrong == 0, "%ld coordinates moved, %ld wrong", moved, wrong);
    free(p0), free(p1), free(photo.px), free(after), free(fd);
    cs_buf_free(&cl, &vb);
    cs_mesh_dev_close(&d);
    cs_cl_close(&cl);
    free(f4), free(aa), free(vout), free(vin), free(g), free(dg), free(gp), free(dgp), free(dvin);
    draw_free(&h), cs_mesh_topo_free(&tp), scene_free(&s);
    return 0;
}
