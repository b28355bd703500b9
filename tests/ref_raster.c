/* ref_raster: the double reference forward (see ref_raster.h). */
#include "ref_raster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

typedef struct {
    int visible;
    double x, y, depth;
    double ca, cb, cc, op;
    double rgb[3];
    int rx0, ry0, rx1, ry1;
    int ambiguous;
    int id;
} ref_g;

static const double C0 = 0.28209479177387814, C1 = 0.4886025119029199;
static const double C2[5] = {1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792,
                             0.5462742152960396};
static const double C3[7] = {-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154,
                             -0.4570457994644658, 1.445305721320277, -0.5900435899266435};

static void basis(const double d[3], int deg, double b[16])
{
    double x = d[0], y = d[1], z = d[2], xx = x * x, yy = y * y, zz = z * z;
    memset(b, 0, sizeof(double) * 16);
    b[0] = C0;
    if (deg < 1) return;
    b[1] = -C1 * y; b[2] = C1 * z; b[3] = -C1 * x;
    if (deg < 2) return;
    b[4] = C2[0] * x * y; b[5] = C2[1] * y * z; b[6] = C2[2] * (2 * zz - xx - yy); b[7] = C2[3] * x * z;
    b[8] = C2[4] * (xx - yy);
    if (deg < 3) return;
    b[9] = C3[0] * y * (3 * xx - yy); b[10] = C3[1] * x * y * z; b[11] = C3[2] * y * (4 * zz - xx - yy);
    b[12] = C3[3] * z * (2 * zz - 3 * xx - 3 * yy); b[13] = C3[4] * x * (4 * zz - xx - yy);
    b[14] = C3[5] * z * (xx - yy); b[15] = C3[6] * x * (xx - 3 * yy);
}

static int near_int(double v, double tol) { return fabs(v - floor(v + 0.5)) < tol; }

static void project(const cs_splats *s, int i, const cs_view *v, const ref_opts *o, int tiles_x, int tiles_y, ref_g *g)
{
    memset(g, 0, sizeof *g);
    g->id = i;
    const float *cm = v->cam.s;
    double R[9], t[3], c[3];
    for (int k = 0; k < 9; k++) R[k] = cm[k];
    for (int k = 0; k < 3; k++) t[k] = cm[9 + k], c[k] = cm[12 + k];
    double p[3] = {s->means[i * 3], s->means[i * 3 + 1], s->means[i * 3 + 2]};
    double pc[3];
    for (int r = 0; r < 3; r++) pc[r] = R[r * 3] * p[0] + R[r * 3 + 1] * p[1] + R[r * 3 + 2] * p[2] + t[r];
    if (pc[2] <= 0.2) return;
    double s2[3], s2raw[3];
    for (int k = 0; k < 3; k++) s2raw[k] = s2[k] = exp(2.0 * s->log_scales[i * 3 + k]);
    double c3 = 1.0;
    if (o->filter_3d) {
        double f2 = (double)s->filter_3d[i] * s->filter_3d[i];
        for (int k = 0; k < 3; k++) s2[k] += f2;
        c3 = sqrt(s2raw[0] * s2raw[1] * s2raw[2] / (s2[0] * s2[1] * s2[2]));
    }
    double q[4] = {s->quats[i * 4], s->quats[i * 4 + 1], s->quats[i * 4 + 2], s->quats[i * 4 + 3]};
    double qn = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (qn < 1e-12) qn = 1e-12;
    double w = q[0] / qn, x = q[1] / qn, y = q[2] / qn, z = q[3] / qn;
    double Q[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                   2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    double S[9];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) S[a * 3 + b] = Q[a * 3] * Q[b * 3] * s2[0] + Q[a * 3 + 1] * Q[b * 3 + 1] * s2[1] +
                                                 Q[a * 3 + 2] * Q[b * 3 + 2] * s2[2];
    double fx = v->intr.s[0], fy = v->intr.s[1], cx = v->intr.s[2], cy = v->intr.s[3];
    int W = v->width, H = v->height;
    double tz = pc[2];
    double lxp = 1.3 * (W - cx) / fx, lxn = -1.3 * cx / fx, lyp = 1.3 * (H - cy) / fy, lyn = -1.3 * cy / fy;
    double ux = pc[0] / tz, uy = pc[1] / tz;
    double txc = (ux > lxp ? lxp : ux < lxn ? lxn : ux) * tz, tyc = (uy > lyp ? lyp : uy < lyn ? lyn : uy) * tz;
    double J00 = fx / tz, J02 = -fx * txc / (tz * tz), J11 = fy / tz, J12 = -fy * tyc / (tz * tz);
    double T0[3], T1[3];
    for (int k = 0; k < 3; k++) {
        T0[k] = J00 * R[k] + J02 * R[6 + k];
        T1[k] = J11 * R[3 + k] + J12 * R[6 + k];
    }
    double a0 = 0, b0 = 0, c0 = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            a0 += T0[a] * S[a * 3 + b] * T0[b];
            b0 += T0[a] * S[a * 3 + b] * T1[b];
            c0 += T1[a] * S[a * 3 + b] * T1[b];
        }
    double a, b, cc, det, c2 = 1.0;
    if (o->antialias == 1) {
        double det0 = a0 * c0 - b0 * b0;
        a = a0 + o->kernel_size;
        cc = c0 + o->kernel_size;
        b = b0;
        det = a * cc - b * b;
        if (det0 <= 1e-6 || det <= 1e-6) return;
        c2 = sqrt(det0 / det);
    } else {
        a = a0 + 0.3;
        cc = c0 + 0.3;
        b = b0;
        det = a * cc - b * b;
        if (det <= 0) return;
    }
    double mid = 0.5 * (a + cc);
    double l1 = mid + sqrt(fmax(0.1, mid * mid - det));
    double rr = 3.0 * sqrt(l1);
    if (near_int(rr, 1e-4)) g->ambiguous = 1; /* float radius error is ~1e-5 */
    int radius = (int)ceil(rr);
    double mx = fx * pc[0] / tz + cx - 0.5, my = fy * pc[1] / tz + cy - 0.5;
    double e[4] = {(mx - radius) / 16, (my - radius) / 16, (mx + radius + 15) / 16, (my + radius + 15) / 16};
    for (int k = 0; k < 4; k++)
        if (near_int(e[k], 2e-5)) g->ambiguous = 1;
    /* C (int) truncation toward zero, as in the kernel */
    g->rx0 = (int)fmin(tiles_x, fmax(0, (int)((mx - radius) / 16)));
    g->ry0 = (int)fmin(tiles_y, fmax(0, (int)((my - radius) / 16)));
    g->rx1 = (int)fmin(tiles_x, fmax(0, (int)((mx + radius + 15) / 16)));
    g->ry1 = (int)fmin(tiles_y, fmax(0, (int)((my + radius + 15) / 16)));
    g->x = mx;
    g->y = my;
    g->ca = cc / det;
    g->cb = -b / det;
    g->cc = a / det;
    g->op = 1.0 / (1.0 + exp(-(double)s->logit_opacity[i])) * c3 * c2;
    if ((g->rx1 - g->rx0) * (g->ry1 - g->ry0) == 0) return;
    double dv[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    double dl = sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
    for (int k = 0; k < 3; k++) dv[k] /= dl;
    double bs[16];
    basis(dv, o->active_degree, bs);
    int K = CS_SH_COEFFS(s->sh_degree), nk = (o->active_degree + 1) * (o->active_degree + 1);
    for (int ch = 0; ch < 3; ch++) {
        double col = 0.5;
        for (int k = 0; k < nk && k < K; k++) {
            float sv = s->sh[((size_t)i * K + k) * 3 + ch];
            if (o->sh_half) sv = cs_half_to_float(cs_float_to_half(sv));
            col += bs[k] * sv;
        }
        g->rgb[ch] = col < 0 ? 0 : col;
    }
    g->visible = 1;
    g->depth = (float)tz; /* the device sorts by the float depth */
}

static int cmp_depth(const void *pa, const void *pb)
{
    const ref_g *a = *(ref_g *const *)pa, *b = *(ref_g *const *)pb;
    if (a->depth != b->depth) return a->depth < b->depth ? -1 : 1;
    return a->id - b->id;
}

void ref_render(const cs_splats *s, const cs_view *v, const ref_opts *o, double *img, unsigned char *amb)
{
    int W = v->width, H = v->height, tx = (W + 15) / 16, ty = (H + 15) / 16;
    ref_g *gs = calloc(s->n ? s->n : 1, sizeof *gs);
    ref_g **list = calloc(s->n ? s->n : 1, sizeof *list);
    for (int i = 0; i < s->n; i++) project(s, i, v, o, tx, ty, &gs[i]);
    if (amb) memset(amb, 0, (size_t)W * H);
    for (int tyi = 0; tyi < ty; tyi++)
        for (int txi = 0; txi < tx; txi++) {
            int n = 0, namb = 0;
            ref_g *ambs[64];
            for (int i = 0; i < s->n; i++) {
                ref_g *g = &gs[i];
                /* a Gaussian whose radius or rectangle sits on a rounding edge may or may not
                   reach the tiles around its rectangle */
                if (g->ambiguous && namb < 64 && txi >= g->rx0 - 1 && txi <= g->rx1 && tyi >= g->ry0 - 1 && tyi <= g->ry1)
                    ambs[namb++] = g;
                if (g->visible && txi >= g->rx0 && txi < g->rx1 && tyi >= g->ry0 && tyi < g->ry1) list[n++] = g;
            }
            qsort(list, n, sizeof *list, cmp_depth);
            for (int py = tyi * 16; py < tyi * 16 + 16 && py < H; py++)
                for (int px = tx * 0 + txi * 16; px < txi * 16 + 16 && px < W; px++) {
                    double T = 1, C[3] = {0, 0, 0};
                    int a = 0;
                    for (int j = 0; j < namb; j++) {
                        double dx = ambs[j]->x - px, dy = ambs[j]->y - py;
                        double pw = -0.5 * (ambs[j]->ca * dx * dx + ambs[j]->cc * dy * dy) - ambs[j]->cb * dx * dy;
                        if (ambs[j]->op * exp(pw) >= 0.5 / 255) a = 1;
                    }
                    for (int j = 0; j < n; j++) {
                        ref_g *g = list[j];
                        double dx = g->x - px, dy = g->y - py;
                        double power = -0.5 * (g->ca * dx * dx + g->cc * dy * dy) - g->cb * dx * dy;
                        if (fabs(power) < 1e-5) a = 1;
                        if (power > 0) continue;
                        double raw = g->op * exp(power);
                        if (fabs(raw - 0.99) < 1e-5 || fabs(raw - 1.0 / 255) < 1e-5) a = 1;
                        double alpha = raw < 0.99 ? raw : 0.99;
                        if (alpha < 1.0 / 255) continue;
                        double tt = T * (1 - alpha);
                        if (fabs(tt - 1e-4) < 1e-7) a = 1;
                        if (tt < 1e-4) break;
                        for (int c = 0; c < 3; c++) C[c] += g->rgb[c] * alpha * T;
                        T = tt;
                    }
                    for (int c = 0; c < 3; c++) img[(size_t)c * W * H + (size_t)py * W + px] = C[c] + T * o->bg[c];
                    if (amb) amb[(size_t)py * W + px] = (unsigned char)a;
                }
        }
    free(gs);
    free(list);
}
