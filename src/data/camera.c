/* camera: pinhole camera helpers (resolution rule, rotations, centre, output stem). */
#include "camera.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

void cs_camera_stem(const cs_camera *c, char *out, size_t n)
{
    snprintf(out, n, "%s", c->name);
    char *dot = strrchr(out, '.');
    if (dot) *dot = '\0';
}

/* graphdeco's rule: 1,2,4,8 divide and round; -1 caps the width at 1600; else a target width. */
int cs_camera_apply_resolution(cs_camera *c, int res)
{
    int w0 = c->file_width, h0 = c->file_height, w, h;
    if (res == 1 || res == 2 || res == 4 || res == 8) {
        w = (int)lround((double)w0 / res);
        h = (int)lround((double)h0 / res);
    } else {
        double down = res == -1 ? (w0 > 1600 ? w0 / 1600.0 : 1.0) : (double)w0 / res;
        w = (int)(w0 / down);
        h = (int)(h0 / down);
    }
    if (w < 1 || h < 1) return cs_fail("image %s: resolution %d gives an empty image", c->name, res);
    double sx = (double)w / w0, sy = (double)h / h0;
    c->fx *= sx;
    c->cx *= sx;
    c->fy *= sy;
    c->cy *= sy;
    c->width = w;
    c->height = h;
    return 0;
}

void cs_quat_to_rot(const double q[4], double R[9])
{
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double n = sqrt(w * w + x * x + y * y + z * z);
    if (n > 0) w /= n, x /= n, y /= n, z /= n;
    R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);     R[2] = 2 * (x * z + w * y);
    R[3] = 2 * (x * y + w * z);     R[4] = 1 - 2 * (x * x + z * z); R[5] = 2 * (y * z - w * x);
    R[6] = 2 * (x * z - w * y);     R[7] = 2 * (y * z + w * x);     R[8] = 1 - 2 * (x * x + y * y);
}

void cs_camera_from_gl_c2w(cs_camera *c, const double m[16])
{
    /* flip the y and z camera axes (OpenGL -> OpenCV), then invert the rigid transform */
    double Rc[9], tc[3];
    for (int r = 0; r < 3; r++) {
        Rc[r * 3 + 0] = m[r * 4 + 0];
        Rc[r * 3 + 1] = -m[r * 4 + 1];
        Rc[r * 3 + 2] = -m[r * 4 + 2];
        tc[r] = m[r * 4 + 3];
    }
    for (int r = 0; r < 3; r++)
        for (int k = 0; k < 3; k++) c->R[r * 3 + k] = Rc[k * 3 + r];
    cs_camera_place(c, tc);
}

void cs_camera_place(cs_camera *c, const double centre[3])
{
    for (int r = 0; r < 3; r++)
        c->t[r] = -(c->R[r * 3] * centre[0] + c->R[r * 3 + 1] * centre[1] + c->R[r * 3 + 2] * centre[2]);
}

void cs_camera_center(const cs_camera *c, double o[3])
{
    for (int k = 0; k < 3; k++) o[k] = -(c->R[0 * 3 + k] * c->t[0] + c->R[1 * 3 + k] * c->t[1] + c->R[2 * 3 + k] * c->t[2]);
}

int cs_camera_project(const cs_camera *c, const float x[3], double *u, double *v, double *z)
{
    double q[3];
    for (int r = 0; r < 3; r++) q[r] = c->R[3 * r] * x[0] + c->R[3 * r + 1] * x[1] + c->R[3 * r + 2] * x[2] + c->t[r];
    *z = q[2];
    if (!(q[2] > 1e-6)) return 0;
    *u = c->fx * q[0] / q[2] + c->cx, *v = c->fy * q[1] / q[2] + c->cy;
    return 1;
}
