/* orbit: cameras circling a dataset's scene (orbit.h). */
#include "orbit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cross3(const double *a, const double *b, double *o)
{
    o[0] = a[1] * b[2] - a[2] * b[1], o[1] = a[2] * b[0] - a[0] * b[2], o[2] = a[0] * b[1] - a[1] * b[0];
}

static int normalize3(double *v)
{
    double n = sqrt(dot3(v, v));
    if (!(n > 1e-12)) return -1;
    for (int k = 0; k < 3; k++) v[k] /= n;
    return 0;
}

/* Solves the 3x3 system A x = b (Cramer); -1 when (nearly) singular. */
static int solve3(const double A[9], const double b[3], double x[3])
{
    double c0[3] = {A[0], A[3], A[6]}, c1[3] = {A[1], A[4], A[7]}, c2[3] = {A[2], A[5], A[8]}, t[3];
    cross3(c1, c2, t);
    double det = dot3(c0, t), scale = fabs(A[0]) + fabs(A[4]) + fabs(A[8]);
    if (!(fabs(det) > 1e-9 * scale * scale * scale)) return -1;
    double cb1[3], cb2[3];
    cross3(c1, c2, t), x[0] = dot3(b, t) / det;
    cross3(b, c2, cb1), x[1] = dot3(c0, cb1) / det;
    cross3(c1, b, cb2), x[2] = dot3(c0, cb2) / det;
    return 0;
}

int cs_orbit_frame(const cs_scene *scene, double centre[3], double up[3])
{
    double A[9] = {0}, b[3] = {0}, mean[3] = {0};
    int n = 0;
    up[0] = up[1] = up[2] = 0;
    for (int i = 0; i < scene->n_cams; i++) {
        const cs_camera *c = &scene->cams[i];
        if (c->is_test) continue;
        double p[3], d[3] = {c->R[6], c->R[7], c->R[8]}; /* forward: camera z in the world */
        cs_camera_center(c, p);
        for (int k = 0; k < 3; k++) up[k] -= c->R[3 + k], mean[k] += p[k]; /* up: minus camera y */
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++) {
                double m = (r == q) - d[r] * d[q];
                A[r * 3 + q] += m, b[r] += m * p[q];
            }
        n++;
    }
    if (!n) return cs_fail("the dataset has no training camera to orbit around");
    for (int k = 0; k < 3; k++) mean[k] /= n;
    if (solve3(A, b, centre)) memcpy(centre, mean, sizeof mean);
    if (normalize3(up)) up[0] = 0, up[1] = -1, up[2] = 0;
    return 0;
}

int cs_orbit_cameras(const cs_scene *scene, int n, cs_camera *out)
{
    double centre[3], up[3], h = 0, r = 0, e1[3] = {0, 0, 0}, e2[3];
    if (cs_orbit_frame(scene, centre, up)) return -1;
    const cs_camera *first = NULL;
    int m = 0;
    for (int i = 0; i < scene->n_cams; i++) {
        const cs_camera *c = &scene->cams[i];
        if (c->is_test) continue;
        double p[3], o[3];
        cs_camera_center(c, p);
        for (int k = 0; k < 3; k++) o[k] = p[k] - centre[k];
        double hi = dot3(o, up);
        for (int k = 0; k < 3; k++) o[k] -= hi * up[k];
        h += hi, r += sqrt(dot3(o, o)), m++;
        if (!first) first = c, memcpy(e1, o, sizeof o);
    }
    h /= m, r /= m;
    if (normalize3(e1)) { /* the first camera sits on the axis: any horizontal direction */
        double any[3] = {fabs(up[0]) < 0.9 ? 1 : 0, fabs(up[0]) < 0.9 ? 0 : 1, 0};
        cross3(up, any, e1);
        normalize3(e1);
    }
    cross3(up, e1, e2);
    if (!(r > 1e-9)) r = 1;
    for (int j = 0; j < n; j++) {
        cs_camera *c = &out[j];
        *c = *first;
        double a = 2 * M_PI * j / n, pos[3], f[3], x[3], y[3];
        for (int k = 0; k < 3; k++) pos[k] = centre[k] + h * up[k] + r * (cos(a) * e1[k] + sin(a) * e2[k]);
        for (int k = 0; k < 3; k++) f[k] = centre[k] - pos[k];
        normalize3(f);
        cross3(f, up, x); /* right = forward x up (up is minus camera y) */
        if (normalize3(x)) x[0] = 1, x[1] = x[2] = 0;
        cross3(f, x, y); /* down = forward x right */
        for (int k = 0; k < 3; k++) c->R[k] = x[k], c->R[3 + k] = y[k], c->R[6 + k] = f[k];
        cs_camera_place(c, pos);
        snprintf(c->name, sizeof c->name, "orbit_%03d.png", j);
        c->path[0] = '\0';
        c->is_test = 0;
    }
    return 0;
}
