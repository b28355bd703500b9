/* ref_mesh: the CPU reference of cl/mesh_geom.cl (ref_mesh.h), written from the rules in
   mesh_geom.cl's header, in double. */
#include "ref_mesh.h"

#include <math.h>
#include <string.h>

#include "test.h"

#define NEAR 1e-4

/* twice the signed area of (a, b, p) */
static double edge(const double *a, const double *b, double px, double py)
{
    return (b[0] - a[0]) * (py - a[1]) - (b[1] - a[1]) * (px - a[0]);
}

void ref_mesh_project(const cs_mesh *m, const cs_camera *c, float *uvz)
{
    for (size_t i = 0; i < m->nv; i++) {
        const float *p = m->pos + 3 * i;
        double x[3];
        for (int r = 0; r < 3; r++) x[r] = c->R[3 * r] * p[0] + c->R[3 * r + 1] * p[1] + c->R[3 * r + 2] * p[2] + c->t[r];
        int front = x[2] > 1e-6;
        uvz[3 * i] = front ? (float)(c->fx * x[0] / x[2] + c->cx) : NAN;
        uvz[3 * i + 1] = front ? (float)(c->fy * x[1] / x[2] + c->cy) : NAN;
        uvz[3 * i + 2] = (float)x[2];
    }
}

void ref_mesh_draw(const cs_mesh *m, const float *col, const int32_t *tri, const float *w, const float *uvz, int npx,
                   const float bg[3], float *img, float *depth)
{
    for (int i = 0; i < npx; i++) {
        depth[i] = INFINITY;
        for (int c = 0; c < 3; c++) img[(size_t)c * npx + i] = bg[c];
        if (tri[i] < 0) continue;
        const uint32_t *v = m->tri + 3 * (size_t)tri[i];
        double z = 0;
        for (int k = 0; k < 3; k++) z += w[3 * i + k] * uvz[3 * v[k] + 2];
        depth[i] = (float)z;
        for (int c = 0; c < 3; c++)
            img[(size_t)c * npx + i] = w[3 * i] * col[3 * v[0] + c] + w[3 * i + 1] * col[3 * v[1] + c] + w[3 * i + 2] * col[3 * v[2] + c];
    }
}

/* corner K of triangle T in pixels */
static void corner(const ref_mesh_view *v, int t, int k, double p[2])
{
    const float *q = v->uvz + 3 * v->tris[3 * t + k];
    p[0] = q[0], p[1] = q[1];
}

static int silhouette(const ref_mesh_view *v, int t, int k, double area)
{
    int n = v->nbr[3 * t + k];
    if (n < 0) return 1;
    double p[3][2];
    for (int j = 0; j < 3; j++) {
        if (v->uvz[3 * v->tris[3 * n + j] + 2] <= NEAR) return 1;
        corner(v, n, j, p[j]);
    }
    return !(edge(p[0], p[1], p[2][0], p[2][1]) * area > 0);
}

typedef struct {
    int m, s, va, vb, code;
    double a, sgn, pf[2], po[2];
} blend;

static int pair(const ref_mesh_view *v, int i, int j, blend *b)
{
    int ti = v->tri[i], tj = v->tri[j];
    if (ti == tj) return 0;
    int f = ti < 0 ? j : tj < 0 ? i : v->depth[i] <= v->depth[j] ? i : j, o = f == i ? j : i, t = v->tri[f];
    double p[3][2], pf[2] = {f % v->W + 0.5, f / v->W + 0.5}, po[2] = {o % v->W + 0.5, o / v->W + 0.5};
    for (int k = 0; k < 3; k++) corner(v, t, k, p[k]);
    double area = edge(p[0], p[1], p[2][0], p[2][1]), best = 2;
    int kb = -1;
    for (int k = 0; k < 3; k++) {
        const double *a = p[(k + 1) % 3], *c = p[(k + 2) % 3];
        double ef = edge(a, c, pf[0], pf[1]) * area, eo = edge(a, c, po[0], po[1]) * area;
        if (!(ef >= 0 && eo < 0) || !silhouette(v, t, k, area)) continue;
        if (ef / (ef - eo) < best) best = ef / (ef - eo), kb = k;
    }
    if (kb < 0) return 0;
    double al = best - 0.5;
    b->m = al > 0 ? o : f, b->s = al > 0 ? f : o, b->a = fabs(al), b->sgn = al > 0 ? 1 : -1;
    b->va = (int)v->tris[3 * t + (kb + 1) % 3], b->vb = (int)v->tris[3 * t + (kb + 2) % 3];
    b->code = 2 * kb + (b->m == f);
    memcpy(b->pf, pf, sizeof pf), memcpy(b->po, po, sizeof po);
    return 1;
}

/* the pairs of pixel I with its right and lower neighbours that blend: 0, 1 or 2 into B;
   CODE (or NULL) gets theirs */
static int pairs_of(const ref_mesh_view *v, int i, blend b[2], int *code)
{
    int n = 0;
    for (int d = 0; d < 2; d++) {
        int ok = (d ? i / v->W + 1 < v->H : i % v->W + 1 < v->W) && pair(v, i, d ? i + v->W : i + 1, &b[n]);
        if (code) code[2 * i + d] = ok ? b[n].code : -1;
        n += ok;
    }
    return n;
}

void ref_mesh_aa_fwd(const ref_mesh_view *v, const float *in, double *out, int *code)
{
    size_t n = (size_t)v->W * v->H;
    for (size_t i = 0; i < 3 * n; i++) out[i] = in[i];
    for (size_t i = 0; i < n; i++) {
        blend b[2];
        int nb = pairs_of(v, (int)i, b, code);
        for (int q = 0; q < nb; q++)
            for (int c = 0; c < 3; c++) out[c * n + b[q].m] += b[q].a * (in[c * n + b[q].s] - in[c * n + b[q].m]);
    }
}

void ref_mesh_aa_bwd(const ref_mesh_view *v, const float *in, const double *v_out, double *v_in, double *g)
{
    size_t n = (size_t)v->W * v->H;
    for (size_t i = 0; i < 3 * n; i++) v_in[i] = v_out[i];
    for (size_t i = 0; i < n; i++) {
        blend b[2];
        int nb = pairs_of(v, (int)i, b, NULL);
        for (int q = 0; q < nb; q++) {
            double da = 0;
            for (int c = 0; c < 3; c++) {
                double vm = v_out[c * n + b[q].m];
                v_in[c * n + b[q].s] += b[q].a * vm, v_in[c * n + b[q].m] -= b[q].a * vm;
                da += vm * (in[c * n + b[q].s] - in[c * n + b[q].m]);
            }
            /* s = e(F) / (e(F) - e(O)) of the edge (A, C): ds = (-e(O) de(F) + e(F) de(O)) / (e(F) - e(O))^2 */
            const float *qa = v->uvz + 3 * b[q].va, *qc = v->uvz + 3 * b[q].vb;
            double A[2] = {qa[0], qa[1]}, C[2] = {qc[0], qc[1]};
            double ef = edge(A, C, b[q].pf[0], b[q].pf[1]), eo = edge(A, C, b[q].po[0], b[q].po[1]), d = ef - eo;
            if (d == 0) continue;
            double gs = da * b[q].sgn, kf = -eo / (d * d) * gs, ko = ef / (d * d) * gs;
            const double *P[2] = {b[q].pf, b[q].po};
            double k2[2] = {kf, ko};
            for (int w = 0; w < 2; w++) {
                g[3 * b[q].va] += k2[w] * (C[1] - P[w][1]), g[3 * b[q].va + 1] += k2[w] * (P[w][0] - C[0]);
                g[3 * b[q].vb] += k2[w] * (P[w][1] - A[1]), g[3 * b[q].vb + 1] += k2[w] * (A[0] - P[w][0]);
            }
        }
    }
}

void ref_mesh_interior_bwd(const ref_mesh_view *v, const float *col, const double *vimg, double *g)
{
    size_t n = (size_t)v->W * v->H;
    for (size_t i = 0; i < n; i++) {
        int t = v->tri[i];
        if (t < 0) continue;
        double p[3][2], iz[3], e[3], b[3], G[3], gw = 0, S = 0, px = (double)(i % v->W) + 0.5, py = (double)(i / v->W) + 0.5;
        const uint32_t *vt = v->tris + 3 * t;
        for (int k = 0; k < 3; k++) corner(v, t, k, p[k]), iz[k] = 1.0 / v->uvz[3 * vt[k] + 2];
        double area = edge(p[0], p[1], p[2][0], p[2][1]);
        for (int k = 0; k < 3; k++) e[k] = edge(p[(k + 1) % 3], p[(k + 2) % 3], px, py), b[k] = e[k] / area, S += b[k] * iz[k];
        for (int k = 0; k < 3; k++) {
            G[k] = 0;
            for (int c = 0; c < 3; c++) G[k] += vimg[c * n + i] * col[3 * vt[k] + c];
            gw += G[k] * b[k] * iz[k] / S;
        }
        double gb[3], hb = 0;
        for (int k = 0; k < 3; k++) {
            gb[k] = iz[k] / S * (G[k] - gw), hb += gb[k] * b[k];
            g[3 * vt[k] + 2] -= b[k] / S * (G[k] - gw) * iz[k] * iz[k];
        }
        for (int m = 0; m < 3; m++) {
            double h = (gb[m] - hb) / area;
            const double *a = p[(m + 1) % 3], *c = p[(m + 2) % 3];
            uint32_t va = vt[(m + 1) % 3], vc = vt[(m + 2) % 3];
            g[3 * va] += h * (c[1] - py), g[3 * va + 1] += h * (px - c[0]);
            g[3 * vc] += h * (py - a[1]), g[3 * vc + 1] += h * (a[0] - px);
        }
    }
}

void ref_mesh_project_bwd(const cs_camera *c, const cs_mesh *m, const double *g, double *gp)
{
    for (size_t i = 0; i < m->nv; i++) {
        const float *p = m->pos + 3 * i;
        double x[3];
        for (int r = 0; r < 3; r++) x[r] = c->R[3 * r] * p[0] + c->R[3 * r + 1] * p[1] + c->R[3 * r + 2] * p[2] + c->t[r];
        double gu = g[3 * i], gv = g[3 * i + 1], gz = g[3 * i + 2], z = x[2];
        gp[3 * i] = gp[3 * i + 1] = gp[3 * i + 2] = 0;
        if (!(z > 1e-6)) continue;
        double gc[3] = {gu * c->fx / z, gv * c->fy / z, gz - (gu * c->fx * x[0] + gv * c->fy * x[1]) / (z * z)};
        for (int k = 0; k < 3; k++) gp[3 * i + k] = c->R[k] * gc[0] + c->R[3 + k] * gc[1] + c->R[6 + k] * gc[2];
    }
}

static void unit_normal(const cs_mesh *m, int t, double n[3])
{
    const float *p0 = m->pos + 3 * m->tri[3 * t], *p1 = m->pos + 3 * m->tri[3 * t + 1], *p2 = m->pos + 3 * m->tri[3 * t + 2];
    double a[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]}, b[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
    n[0] = a[1] * b[2] - a[2] * b[1], n[1] = a[2] * b[0] - a[0] * b[2], n[2] = a[0] * b[1] - a[1] * b[0];
    double l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    for (int k = 0; k < 3; k++) n[k] = l > 0 ? n[k] / l : 0;
}

double ref_mesh_reg_energy(const cs_mesh *m, const cs_mesh_topo *t, double kl, double kn)
{
    double e = 0;
    for (size_t v = 0; v < m->nv && kl != 0; v++) {
        double s[3] = {0, 0, 0};
        int deg = 0;
        for (size_t k = 0; k < t->ne; k++) {
            int a = t->edges[4 * k], b = t->edges[4 * k + 1], o = a == (int)v ? b : b == (int)v ? a : -1;
            if (o < 0) continue;
            deg++;
            for (int c = 0; c < 3; c++) s[c] += m->pos[3 * o + c];
        }
        for (int c = 0; c < 3 && deg; c++) {
            double d = m->pos[3 * v + c] - s[c] / deg;
            e += kl * d * d;
        }
    }
    for (size_t k = 0; k < t->ne && kn != 0; k++) {
        if (t->edges[4 * k + 3] < 0) continue;
        double na[3], nb[3];
        unit_normal(m, t->edges[4 * k + 2], na), unit_normal(m, t->edges[4 * k + 3], nb);
        e += kn * (1 - (na[0] * nb[0] + na[1] * nb[1] + na[2] * nb[2]));
    }
    return e;
}

void ref_mesh_test_camera(cs_camera *c)
{
    memset(c, 0, sizeof *c);
    c->width = 96, c->height = 72, c->fx = c->fy = 80, c->cx = 48.5, c->cy = 35.25;
    c->R[0] = c->R[4] = c->R[8] = 1, c->t[2] = 3;
}

/* a camera at C looking at the origin (96x72, 62 degrees across) */
void ref_mesh_ring_camera(cs_camera *c, const double C[3])
{
    ref_mesh_test_camera(c);
    double n = sqrt(C[0] * C[0] + C[1] * C[1] + C[2] * C[2]), f[3] = {-C[0] / n, -C[1] / n, -C[2] / n};
    double x[3] = {-f[1], f[0], 0}, xn = hypot(x[0], x[1]);
    x[0] /= xn, x[1] /= xn;
    double y[3] = {f[1] * x[2] - f[2] * x[1], f[2] * x[0] - f[0] * x[2], f[0] * x[1] - f[1] * x[0]};
    const double *rows[3] = {x, y, f};
    for (int r = 0; r < 3; r++) {
        c->t[r] = 0;
        for (int k = 0; k < 3; k++) c->R[3 * r + k] = rows[r][k], c->t[r] -= rows[r][k] * C[k];
    }
}

void ref_mesh_random_soup(float *pos, int nt, uint64_t *rs)
{
    for (int t = 0; t < nt; t++) {
        float cx = (float)(2.4 * test_rand(rs) - 1.2), cy = (float)(1.8 * test_rand(rs) - 0.9),
              cz = (float)(2 * test_rand(rs) - 1), size = (float)(0.05 + 0.5 * test_rand(rs));
        for (int k = 0; k < 3; k++) {
            float *p = pos + 9 * t + 3 * k;
            p[0] = cx + size * (float)test_randn(rs), p[1] = cy + size * (float)test_randn(rs);
            p[2] = t % 37 == 0 && k == 0 ? -3.5f : cz + size * (float)test_randn(rs); /* a corner behind */
        }
    }
}

void ref_mesh_random_mesh(cs_mesh *m, float *pos, float *col, uint8_t *rgb, uint32_t *tri, int nt, uint64_t *rs)
{
    ref_mesh_random_soup(pos, nt, rs);
    for (int i = 0; i < 9 * nt; i++) rgb[i] = (uint8_t)(255 * test_rand(rs)), col[i] = rgb[i] / 255.f;
    for (int i = 0; i < 3 * nt; i++) tri[i] = (uint32_t)i;
    *m = (cs_mesh){.pos = pos, .rgb = rgb, .tri = tri, .nv = 3 * (size_t)nt, .nt = (size_t)nt};
}
