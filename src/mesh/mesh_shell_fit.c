/* mesh_shell_fit: the background shell fitted to the background the views see (mesh_shell_fit.h). */
#include "mesh_shell_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define CELLS (6 * CS_SHELL_FIT_RES * CS_SHELL_FIT_RES)

/* the cube-map cell of direction D (need not be unit; -1 for the zero vector) */
static int cell_of(const double d[3])
{
    double a[3] = {fabs(d[0]), fabs(d[1]), fabs(d[2])};
    int axis = a[0] >= a[1] && a[0] >= a[2] ? 0 : a[1] >= a[2] ? 1 : 2;
    if (!(a[axis] > 0)) return -1;
    int face = 2 * axis + (d[axis] < 0);
    double s = d[(axis + 1) % 3] / a[axis], t = d[(axis + 2) % 3] / a[axis];
    int i = (int)((s + 1) * 0.5 * CS_SHELL_FIT_RES), j = (int)((t + 1) * 0.5 * CS_SHELL_FIT_RES);
    i = i < 0 ? 0 : i >= CS_SHELL_FIT_RES ? CS_SHELL_FIT_RES - 1 : i;
    j = j < 0 ? 0 : j >= CS_SHELL_FIT_RES ? CS_SHELL_FIT_RES - 1 : j;
    return (face * CS_SHELL_FIT_RES + j) * CS_SHELL_FIT_RES + i;
}

static double bin_step(void)
{
    return log(CS_SHELL_FIT_RANGE) / CS_SHELL_FIT_BINS;
}

/* the bin of radius R (clamped to the range) */
static int bin_of(const cs_shell_fit *f, double r)
{
    double x = (log(r > 0 ? r : 1e-30) - log(f->far / CS_SHELL_FIT_RANGE)) / bin_step();
    return x < 0 ? 0 : x >= CS_SHELL_FIT_BINS ? CS_SHELL_FIT_BINS - 1 : (int)x;
}

/* the radius at the fraction X of bin B's width */
static double bin_radius(const cs_shell_fit *f, int b, double x)
{
    return f->far / CS_SHELL_FIT_RANGE * exp((b + x) * bin_step());
}

int cs_shell_fit_init(cs_shell_fit *f, const double centre[3], double far, const double *cams, int ncams)
{
    memset(f, 0, sizeof *f);
    memcpy(f->centre, centre, sizeof f->centre);
    f->far = far, f->ncams = ncams > 0 ? ncams : 0;
    size_t n = (size_t)CELLS * CS_SHELL_FIT_BINS;
    f->bg = calloc(n, sizeof(uint32_t)), f->kept = calloc(n, sizeof(uint32_t));
    f->cams = malloc(sizeof(double) * 3 * (size_t)(f->ncams ? f->ncams : 1));
    if (f->cams && f->ncams) memcpy(f->cams, cams, sizeof(double) * 3 * (size_t)f->ncams);
    if (!f->bg || !f->kept || !f->cams) {
        cs_shell_fit_free(f);
        return cs_fail("out of host memory (the background shell's fit)");
    }
    return 0;
}

/* adds the world point P to histogram H */
static void add(const cs_shell_fit *f, uint32_t *h, const double p[3])
{
    double d[3] = {p[0] - f->centre[0], p[1] - f->centre[1], p[2] - f->centre[2]};
    int c = cell_of(d);
    if (c < 0) return;
    uint32_t *x = h + (size_t)c * CS_SHELL_FIT_BINS + bin_of(f, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    if (*x < UINT32_MAX) (*x)++;
}

void cs_shell_fit_surface(cs_shell_fit *f, const float p[3], int background)
{
    double q[3] = {p[0], p[1], p[2]};
    add(f, background ? f->bg : f->kept, q);
}

/* the radius at quantile Q of H's row (a cell's bins), at fraction X of its bin; -1 when empty */
static double quantile(const cs_shell_fit *f, const uint32_t *h, double q, double x)
{
    double total = 0, run = 0;
    for (int b = 0; b < CS_SHELL_FIT_BINS; b++) total += h[b];
    if (!(total > 0)) return -1;
    for (int b = 0; b < CS_SHELL_FIT_BINS; b++)
        if ((run += h[b]) >= q * total) return bin_radius(f, b, x);
    return f->far;
}

/* the unit direction of cell C's centre */
static void cell_dir(int c, double d[3])
{
    int face = c / (CS_SHELL_FIT_RES * CS_SHELL_FIT_RES), r = c % (CS_SHELL_FIT_RES * CS_SHELL_FIT_RES);
    int axis = face / 2;
    double s = ((r % CS_SHELL_FIT_RES) + 0.5) / CS_SHELL_FIT_RES * 2 - 1, t = ((r / CS_SHELL_FIT_RES) + 0.5) / CS_SHELL_FIT_RES * 2 - 1;
    d[axis] = face % 2 ? -1 : 1, d[(axis + 1) % 3] = s, d[(axis + 2) % 3] = t;
    double n = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    for (int k = 0; k < 3; k++) d[k] /= n;
}

/* the angle from the centre between directions A and B (unit) */
static double angle(const double a[3], const double b[3])
{
    double dot = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    return acos(dot > 1 ? 1 : dot < -1 ? -1 : dot);
}

/* BOUND of each cell raised to keep the cameras inside the shell: a camera's distance (plus
   CAM_MARGIN) over the directions within the median angle between neighbouring cameras (and
   half a cell) of its own, so a view between two training views is inside too (without it, test
   views of the plush dog stood outside and saw the shell's back across the toy) */
#define CAM_MARGIN 0.02
static int camera_bounds(const cs_shell_fit *f, double *bound)
{
    int n = f->ncams;
    double (*u)[3] = malloc(sizeof(double[3]) * (n ? n : 1)), *r = malloc(sizeof(double) * (n ? n : 1));
    double *near = malloc(sizeof(double) * (n ? n : 1));
    if (!u || !r || !near) {
        free(u), free(r), free(near);
        return cs_fail("out of host memory (the background shell's fit)");
    }
    for (int i = 0; i < n; i++) {
        double d[3] = {f->cams[3 * i] - f->centre[0], f->cams[3 * i + 1] - f->centre[1], f->cams[3 * i + 2] - f->centre[2]};
        r[i] = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        for (int k = 0; k < 3; k++) u[i][k] = r[i] > 0 ? d[k] / r[i] : 0;
    }
    for (int i = 0; i < n; i++) {
        near[i] = M_PI;
        for (int j = 0; j < n; j++)
            if (j != i) near[i] = fmin(near[i], angle(u[i], u[j]));
    }
    double theta = n > 1 ? cs_median(near, n) : M_PI; /* near is reordered */
    theta += M_PI / 2 / CS_SHELL_FIT_RES;
    for (int c = 0; c < CELLS; c++) {
        double d[3];
        cell_dir(c, d);
        for (int i = 0; i < n; i++)
            if (angle(d, u[i]) < theta) bound[c] = fmax(bound[c], r[i] * (1 + CAM_MARGIN));
    }
    free(u), free(r), free(near);
    return 0;
}

/* each cell's radius (-1: not fitted), at least its BOUND */
static void cell_radii(const cs_shell_fit *f, const double *bound, double *radius)
{
    for (int c = 0; c < CELLS; c++) {
        const size_t o = (size_t)c * CS_SHELL_FIT_BINS;
        double bg = 0, kept = 0;
        for (int b = 0; b < CS_SHELL_FIT_BINS; b++) bg += f->bg[o + b], kept += f->kept[o + b];
        radius[c] = -1;
        if (bg >= CS_SHELL_FIT_MIN_SAMPLES && bg >= kept)
            radius[c] = fmin(f->far, fmax(quantile(f, f->bg + o, 0.5, 0.5), bound[c]));
    }
}

/* smooths the log radii LR of the shell's N vertices over its triangles T (NT) */
static int smooth(double *lr, size_t n, const uint32_t *t, size_t nt, size_t first)
{
    double *sum = malloc(sizeof(double) * n), *cnt = malloc(sizeof(double) * n);
    if (!sum || !cnt) {
        free(sum), free(cnt);
        return cs_fail("out of host memory (the background shell's fit)");
    }
    for (int pass = 0; pass < CS_SHELL_FIT_SMOOTH; pass++) {
        for (size_t i = 0; i < n; i++) sum[i] = lr[i], cnt[i] = 1;
        for (size_t k = 0; k < nt; k++)
            for (int e = 0; e < 3; e++) {
                size_t a = t[3 * k + e] - first, b = t[3 * k + (e + 1) % 3] - first;
                if (a >= n || b >= n) continue;
                sum[a] += lr[b], cnt[a] += 1, sum[b] += lr[a], cnt[b] += 1;
            }
        for (size_t i = 0; i < n; i++) lr[i] = sum[i] / cnt[i];
    }
    free(sum), free(cnt);
    return 0;
}

int cs_shell_fit_apply(const cs_shell_fit *f, cs_mesh *m, size_t first, size_t n, size_t first_tri, size_t *fitted)
{
    double *radius = malloc(sizeof(double) * CELLS), *bound = malloc(sizeof(double) * CELLS);
    double *lr = malloc(sizeof(double) * (n ? n : 1)), (*dir)[3] = malloc(sizeof(double[3]) * (n ? n : 1));
    int *cell = malloc(sizeof(int) * (n ? n : 1));
    int rc = radius && bound && lr && dir && cell ? 0 : cs_fail("out of host memory (the background shell's fit)");
    *fitted = 0;
    for (int c = 0; !rc && c < CELLS; c++) bound[c] = 0;
    if (!rc) rc = camera_bounds(f, bound);
    if (!rc) cell_radii(f, bound, radius);
    for (size_t i = 0; !rc && i < n; i++) {
        const float *p = m->pos + 3 * (first + i);
        double len = 0;
        for (int k = 0; k < 3; k++) dir[i][k] = p[k] - f->centre[k], len += dir[i][k] * dir[i][k];
        len = sqrt(len);
        for (int k = 0; k < 3; k++) dir[i][k] = len > 0 ? dir[i][k] / len : 0;
        cell[i] = cell_of(dir[i]);
        lr[i] = log(cell[i] >= 0 && radius[cell[i]] > 0 ? radius[cell[i]] : f->far);
    }
    if (!rc) rc = smooth(lr, n, m->tri + 3 * first_tri, m->nt - first_tri, first);
    for (size_t i = 0; !rc && i < n; i++) {
        double r = fmin(f->far, fmax(exp(lr[i]), cell[i] >= 0 ? bound[cell[i]] : f->far));
        for (int k = 0; k < 3; k++) m->pos[3 * (first + i) + k] = (float)(f->centre[k] + r * dir[i][k]);
        *fitted += cell[i] >= 0 && radius[cell[i]] > 0;
    }
    free(radius), free(bound), free(lr), free(dir), free(cell);
    return rc;
}

void cs_shell_fit_free(cs_shell_fit *f)
{
    free(f->bg), free(f->kept), free(f->cams);
    memset(f, 0, sizeof *f);
}
