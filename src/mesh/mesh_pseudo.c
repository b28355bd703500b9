#include "mesh_pseudo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "util.h"

/* row-major rotation to a unit quaternion (w, x, y, z), from its largest component */
static void rot_to_quat(const double R[9], double q[4])
{
    double tr = R[0] + R[4] + R[8];
    if (tr > 0) {
        double s = 2 * sqrt(1 + tr);
        q[0] = s / 4, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s, q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
        q[0] = (R[7] - R[5]) / s, q[1] = s / 4, q[2] = (R[1] + R[3]) / s, q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = s / 4, q[3] = (R[5] + R[7]) / s;
    } else {
        double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s, q[3] = s / 4;
    }
}

/* spherical interpolation of unit quaternions on the shorter arc, normalised */
static void slerp(const double a[4], const double b0[4], double f, double out[4])
{
    double b[4], d = 0;
    for (int i = 0; i < 4; i++) d += a[i] * b0[i];
    for (int i = 0; i < 4; i++) b[i] = d < 0 ? -b0[i] : b0[i];
    d = fabs(d);
    double wa = 1 - f, wb = f;
    if (d < 0.9995) {
        double th = acos(d), s = sin(th);
        wa = sin((1 - f) * th) / s, wb = sin(f * th) / s;
    }
    double n = 0;
    for (int i = 0; i < 4; i++) out[i] = wa * a[i] + wb * b[i], n += out[i] * out[i];
    n = sqrt(n);
    for (int i = 0; i < 4; i++) out[i] /= n;
}

void cs_mesh_pseudo_between(const cs_camera *a, const cs_camera *b, double f, cs_camera *out)
{
    double qa[4], qb[4], q[4], ca[3], cb[3], c[3];
    rot_to_quat(a->R, qa), rot_to_quat(b->R, qb), slerp(qa, qb, f, q);
    cs_camera_center(a, ca), cs_camera_center(b, cb);
    memset(out, 0, sizeof *out);
    out->width = a->width, out->height = a->height, out->file_width = a->width, out->file_height = a->height;
    out->fx = a->fx, out->fy = a->fy, out->cx = a->cx, out->cy = a->cy;
    out->photo_width = a->width, out->photo_height = a->height, out->map = -1;
    cs_quat_to_rot(q, out->R);
    for (int i = 0; i < 3; i++) c[i] = ca[i] + f * (cb[i] - ca[i]);
    cs_camera_place(out, c);
    snprintf(out->name, sizeof out->name, "between %.200s", a->name);
}

/* the K training views nearest camera I by centre (I excluded) into NEAR, nearest first; how many */
static int nearest(const cs_scene *scene, int i, int k, int *near, double *dist)
{
    double ci[3], cj[3];
    int n = 0;
    cs_camera_center(&scene->cams[i], ci);
    for (int j = 0; j < scene->n_cams; j++) {
        if (j == i || scene->cams[j].is_test) continue;
        cs_camera_center(&scene->cams[j], cj);
        double d = (ci[0] - cj[0]) * (ci[0] - cj[0]) + (ci[1] - cj[1]) * (ci[1] - cj[1]) + (ci[2] - cj[2]) * (ci[2] - cj[2]);
        n = cs_nearest_insert(dist, near, n, k, d, j);
    }
    return n;
}

int cs_mesh_pseudo_cameras(const cs_scene *scene, int n, double max_bytes, cs_mesh_pseudo *p)
{
    memset(p, 0, sizeof *p);
    int train = cs_scene_count(scene, 0);
    double bytes = 0; /* a drawing (RGB + weight) of each training view */
    for (int i = 0; i < scene->n_cams; i++)
        if (!scene->cams[i].is_test) bytes += 4.0 * scene->cams[i].width * scene->cams[i].height;
    if (n > train - 1) n = train - 1;
    if (bytes > 0 && n * bytes > max_bytes) n = (int)(max_bytes / bytes), p->capped = 1;
    if (n <= 0) return 0;
    p->per_view = n;
    p->cams = malloc(sizeof(cs_camera) * (size_t)train * (size_t)n);
    int *near = malloc(sizeof(int) * (size_t)n);
    double *dist = malloc(sizeof(double) * (size_t)n);
    if (!p->cams || !near || !dist) {
        free(near), free(dist), cs_mesh_pseudo_free(p);
        return cs_fail("out of host memory (%d pseudo-views)", train * n);
    }
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) continue;
        int got = nearest(scene, i, n, near, dist);
        for (int k = 0; k < got; k++) cs_mesh_pseudo_between(&scene->cams[i], &scene->cams[near[k]], 0.5, &p->cams[p->n++]);
    }
    free(near), free(dist);
    return 0;
}

/* the last drawing of R as RGB + weight: the model's opacity, so what it leaves see-through (the
   background colour, not the scene) is no target */
static int draw_weighted(cs_renderer *r, int W, int H, cs_image *out)
{
    size_t n = (size_t)W * H;
    cs_image rgb;
    float *alpha = malloc(sizeof(float) * (n ? n : 1));
    uint8_t *px = malloc(4 * (n ? n : 1));
    if (!alpha || !px) {
        free(alpha), free(px);
        return cs_fail("out of host memory (a %dx%d drawing)", W, H);
    }
    int rc = cs_render_read_image(r, W, H, &rgb); /* on failure it holds nothing */
    if (!rc) {
        rc = cs_render_read_alpha(r, W, H, alpha);
        for (size_t i = 0; i < n && !rc; i++) {
            float a = alpha[i] * 255.f + 0.5f;
            memcpy(px + 4 * i, rgb.px + 3 * i, 3);
            px[4 * i + 3] = (uint8_t)(a < 0 ? 0 : a > 255 ? 255 : a);
        }
        cs_image_free(&rgb);
    }
    free(alpha);
    if (rc) free(px);
    else *out = (cs_image){W, H, 4, px};
    return rc;
}

int cs_mesh_pseudo_draw(cs_viewer *w, const cs_scene *scene, int degree, cs_mesh_pseudo *p)
{
    if (!p->n) return 0;
    p->imgs = calloc((size_t)p->n, sizeof(cs_image));
    if (!p->imgs) return cs_fail("out of host memory (%d pseudo-views)", p->n);
    for (int i = 0; i < p->n; i++) {
        cs_view v;
        cs_view_from_camera(&p->cams[i], &v);
        if (cs_render_forward_sync(&w->r, &w->m, &v, degree, scene->background) ||
            draw_weighted(&w->r, p->cams[i].width, p->cams[i].height, &p->imgs[i]))
            return cs_fail_prefix("pseudo-view %d (%s)", i, p->cams[i].name);
    }
    return 0;
}

void cs_mesh_pseudo_free(cs_mesh_pseudo *p)
{
    for (int i = 0; p->imgs && i < p->n; i++) cs_image_free(&p->imgs[i]);
    free(p->imgs), free(p->cams);
    memset(p, 0, sizeof *p);
}
