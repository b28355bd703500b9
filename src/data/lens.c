/* lens: COLMAP camera models, distortion and its inverse (lens.h). */
#include "lens.h"

#include <math.h>
#include <string.h>

#include "util.h"

static const struct {
    const char *name;
    int nparams;
    int nfocal; /* 1: one focal length (f cx cy ...), 2: fx fy cx cy ... */
} MODELS[CS_LENS_NMODELS] = {
    {"SIMPLE_PINHOLE", 3, 1}, {"PINHOLE", 4, 2}, {"SIMPLE_RADIAL", 4, 1}, {"RADIAL", 5, 1}, {"OPENCV", 8, 2},
    {"OPENCV_FISHEYE", 8, 2}, {"FULL_OPENCV", 12, 2}, {"FOV", 5, 2}, {"SIMPLE_RADIAL_FISHEYE", 4, 1},
    {"RADIAL_FISHEYE", 5, 1}, {"THIN_PRISM_FISHEYE", 12, 2},
};

const char *cs_lens_model_name(cs_lens_model m) { return m >= 0 && m < CS_LENS_NMODELS ? MODELS[m].name : "unknown"; }
int cs_lens_model_params(cs_lens_model m) { return m >= 0 && m < CS_LENS_NMODELS ? MODELS[m].nparams : 0; }

int cs_lens_model_by_name(const char *name)
{
    for (int m = 0; m < CS_LENS_NMODELS; m++)
        if (!strcmp(MODELS[m].name, name)) return m;
    return -1;
}

int cs_lens_supported(cs_lens_model m) { return m >= 0 && m < CS_LENS_NMODELS && m != CS_LENS_FOV && m != CS_LENS_THIN_PRISM_FISHEYE; }

void cs_lens_from_params(cs_lens *l, cs_lens_model model, const double *p)
{
    memset(l, 0, sizeof *l);
    l->model = model;
    int nf = MODELS[model].nfocal;
    l->fx = p[0], l->fy = nf == 2 ? p[1] : p[0], l->cx = p[nf], l->cy = p[nf + 1];
    for (int i = nf + 2; i < MODELS[model].nparams; i++) l->k[i - nf - 2] = p[i];
}

static int is_fisheye(cs_lens_model m);

int cs_lens_is_pinhole(const cs_lens *l)
{
    /* the fisheyes project by angle (equidistant) even with every coefficient 0 */
    if (is_fisheye(l->model) || l->model == CS_LENS_THIN_PRISM_FISHEYE) return 0;
    for (int i = 0; i < CS_LENS_MAX_PARAMS; i++)
        if (l->k[i] != 0) return 0;
    return 1;
}

static int is_fisheye(cs_lens_model m)
{
    return m == CS_LENS_OPENCV_FISHEYE || m == CS_LENS_SIMPLE_RADIAL_FISHEYE || m == CS_LENS_RADIAL_FISHEYE;
}

void cs_lens_distort(const cs_lens *l, double u, double v, double *ud, double *vd)
{
    const double *k = l->k;
    double r2 = u * u + v * v;
    if (is_fisheye(l->model)) {
        double r = sqrt(r2), s = 1;
        if (r > 1e-12) {
            double t = atan(r), t2 = t * t, poly;
            if (l->model == CS_LENS_OPENCV_FISHEYE) poly = 1 + t2 * (k[0] + t2 * (k[1] + t2 * (k[2] + t2 * k[3])));
            else if (l->model == CS_LENS_RADIAL_FISHEYE) poly = 1 + t2 * (k[0] + t2 * k[1]);
            else poly = 1 + t2 * k[0];
            s = t * poly / r;
        }
        *ud = u * s, *vd = v * s;
        return;
    }
    double radial = 1, p1 = 0, p2 = 0;
    switch (l->model) {
    case CS_LENS_SIMPLE_RADIAL: radial = 1 + k[0] * r2; break;
    case CS_LENS_RADIAL: radial = 1 + r2 * (k[0] + r2 * k[1]); break;
    case CS_LENS_OPENCV: radial = 1 + r2 * (k[0] + r2 * k[1]), p1 = k[2], p2 = k[3]; break;
    case CS_LENS_FULL_OPENCV:
        radial = (1 + r2 * (k[0] + r2 * (k[1] + r2 * k[4]))) / (1 + r2 * (k[5] + r2 * (k[6] + r2 * k[7])));
        p1 = k[2], p2 = k[3];
        break;
    default: break; /* pinholes */
    }
    *ud = u * radial + 2 * p1 * u * v + p2 * (r2 + 2 * u * u);
    *vd = v * radial + 2 * p2 * u * v + p1 * (r2 + 2 * v * v);
}

int cs_lens_undistort(const cs_lens *l, double ud, double vd, double *u, double *v)
{
    double x = ud, y = vd;
    for (int it = 0; it < 100; it++) {
        double fx, fy, ax, ay, bx, by, h = 1e-7 * (1 + fabs(x) + fabs(y));
        cs_lens_distort(l, x, y, &fx, &fy);
        double ex = fx - ud, ey = fy - vd;
        if (fabs(ex) < 1e-12 && fabs(ey) < 1e-12) {
            *u = x, *v = y;
            return 0;
        }
        /* Jacobian by central differences */
        cs_lens_distort(l, x + h, y, &ax, &ay);
        cs_lens_distort(l, x - h, y, &bx, &by);
        double j00 = (ax - bx) / (2 * h), j10 = (ay - by) / (2 * h);
        cs_lens_distort(l, x, y + h, &ax, &ay);
        cs_lens_distort(l, x, y - h, &bx, &by);
        double j01 = (ax - bx) / (2 * h), j11 = (ay - by) / (2 * h);
        double det = j00 * j11 - j01 * j10;
        if (!(fabs(det) > 1e-15) || !isfinite(det)) break;
        double dx = (j11 * ex - j01 * ey) / det, dy = (j00 * ey - j10 * ex) / det;
        x -= dx, y -= dy;
        if (!isfinite(x) || !isfinite(y)) break;
    }
    *u = x, *v = y;
    return -1;
}

/* Undistorts the image-border pixel (X, Y) (pixel coordinates); -1 when it does not converge. */
static int border_point(const cs_lens *l, double x, double y, double *u, double *v)
{
    return cs_lens_undistort(l, (x - l->cx) / l->fx, (y - l->cy) / l->fy, u, v);
}

int cs_lens_ideal(const cs_lens *l, int w, int h, int crop_full, double *fx, double *fy, double *cx, double *cy,
                  int *out_w, int *out_h)
{
    /* innermost (crop 0) or outermost (crop 1) extent of each border after undistortion */
    double left = crop_full ? INFINITY : -INFINITY, right = crop_full ? -INFINITY : INFINITY;
    double top = left, bottom = right;
    int steps = 4 * (w > h ? w : h);
    for (int i = 0; i <= steps; i++) {
        double t = (double)i / steps, u, v;
        double xs[2] = {0, (double)w}, ys[2] = {0, (double)h};
        for (int side = 0; side < 2; side++) {
            if (border_point(l, xs[side], t * h, &u, &v))
                return cs_fail("the %s lens does not undistort at the %s border (%.1f, %.1f): check its parameters",
                               cs_lens_model_name(l->model), side ? "right" : "left", xs[side], t * h);
            if (side == 0) left = crop_full ? fmin(left, u) : fmax(left, u);
            else right = crop_full ? fmax(right, u) : fmin(right, u);
            if (border_point(l, t * w, ys[side], &u, &v))
                return cs_fail("the %s lens does not undistort at the %s border (%.1f, %.1f): check its parameters",
                               cs_lens_model_name(l->model), side ? "bottom" : "top", t * w, ys[side]);
            if (side == 0) top = crop_full ? fmin(top, v) : fmax(top, v);
            else bottom = crop_full ? fmax(bottom, v) : fmin(bottom, v);
        }
    }
    /* symmetric about the optical axis: the principal point in the centre */
    double hu = crop_full ? fmax(-left, right) : fmin(-left, right);
    double hv = crop_full ? fmax(-top, bottom) : fmin(-top, bottom);
    if (!(hu > 0 && hv > 0))
        return cs_fail("the %s lens leaves no valid image around the principal point", cs_lens_model_name(l->model));
    *fx = l->fx, *fy = l->fy;
    /* whole pixels: down for the valid crop, up for the full one (1e-6 for rounding noise) */
    *out_w = (int)fmax(1, crop_full ? ceil(2 * hu * l->fx - 1e-6) : floor(2 * hu * l->fx + 1e-6));
    *out_h = (int)fmax(1, crop_full ? ceil(2 * hv * l->fy - 1e-6) : floor(2 * hv * l->fy + 1e-6));
    *cx = *out_w / 2.0, *cy = *out_h / 2.0;
    /* a field of view near 180 degrees has no bounded pinhole image: past four times the photo's
       sides the full crop is refused instead of growing the views (one fisheye line turned
       64x48 photos into 12016x9012 views) */
    if (crop_full && (*out_w > CS_UNDISTORT_MAX_GROWTH * w || *out_h > CS_UNDISTORT_MAX_GROWTH * h))
        return cs_fail("data.undistort_crop full: the %s lens would make the %dx%d photo a %dx%d pinhole view (more "
                       "than %d times its sides: a field of view a pinhole cannot hold); use undistort_crop valid",
                       cs_lens_model_name(l->model), w, h, *out_w, *out_h, CS_UNDISTORT_MAX_GROWTH);
    return 0;
}

void cs_lens_map(const cs_lens *l, double fx, double fy, double cx, double cy, int w, int h, float *map)
{
    for (int j = 0; j < h; j++)
        for (int i = 0; i < w; i++) {
            double ud, vd;
            cs_lens_distort(l, (i + 0.5 - cx) / fx, (j + 0.5 - cy) / fy, &ud, &vd);
            map[((size_t)j * w + i) * 2] = (float)(ud * l->fx + l->cx);
            map[((size_t)j * w + i) * 2 + 1] = (float)(vd * l->fy + l->cy);
        }
}
