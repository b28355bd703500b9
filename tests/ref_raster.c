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
    int edge; /* some pixel decides this Gaussian's part on a threshold float may cross either way */
    int id;
    /* intermediates kept for the backward */
    double pc[3], s2raw[3], s2[3], c3, c2, sig;
    double zmag; /* the sum of the magnitudes of the depth's terms: its float rounding scales with it */
    double qn, qu[4], Q[9], S[9], T0[3], T1[3], a0, b0, c0, a, b, c, det;
    double txc, tyc, limx, limy; /* lim*: the clamp bound when x/z or y/z was clamped, else 0 */
    double dir[3], dl, bs[16], col_raw[3];
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
    for (int k = 0; k < 3; k++) g->pc[k] = pc[k];
    g->zmag = fabs(R[6] * p[0]) + fabs(R[7] * p[1]) + fabs(R[8] * p[2]) + fabs(t[2]);
    if (pc[2] <= 0.2) return;
    double *s2 = g->s2, *s2raw = g->s2raw;
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
    g->qn = qn, g->qu[0] = w, g->qu[1] = x, g->qu[2] = y, g->qu[3] = z;
    double *Q = g->Q;
    double Qv[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                   2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    memcpy(Q, Qv, sizeof Qv);
    double *S = g->S;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) S[a * 3 + b] = Q[a * 3] * Q[b * 3] * s2[0] + Q[a * 3 + 1] * Q[b * 3 + 1] * s2[1] +
                                                 Q[a * 3 + 2] * Q[b * 3 + 2] * s2[2];
    double fx = v->intr.s[0], fy = v->intr.s[1], cx = v->intr.s[2], cy = v->intr.s[3];
    int W = v->width, H = v->height;
    double tz = pc[2];
    double lxp = 1.3 * (W - cx) / fx, lxn = -1.3 * cx / fx, lyp = 1.3 * (H - cy) / fy, lyn = -1.3 * cy / fy;
    double ux = pc[0] / tz, uy = pc[1] / tz;
    double txc = (ux > lxp ? lxp : ux < lxn ? lxn : ux) * tz, tyc = (uy > lyp ? lyp : uy < lyn ? lyn : uy) * tz;
    g->limx = ux > lxp ? lxp : ux < lxn ? lxn : 0;
    g->limy = uy > lyp ? lyp : uy < lyn ? lyn : 0;
    g->txc = txc, g->tyc = tyc;
    double J00 = fx / tz, J02 = -fx * txc / (tz * tz), J11 = fy / tz, J12 = -fy * tyc / (tz * tz);
    double *T0 = g->T0, *T1 = g->T1;
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
    g->a0 = a0, g->b0 = b0, g->c0 = c0, g->a = a, g->b = b, g->c = cc, g->det = det, g->c2 = c2, g->c3 = c3;
    double mid = 0.5 * (a + cc);
    double l1 = mid + sqrt(fmax(0.1, mid * mid - det));
    double rr = 3.0 * sqrt(l1);
    if (!isfinite(rr)) return; /* an infinite or NaN scale: culled */
    if (near_int(rr, 1e-4)) g->ambiguous = 1; /* float radius error is ~1e-5 */
    int radius = (int)ceil(fmin(rr, 1e7)); /* clamped where the int tile arithmetic holds it */
    double mx = fx * pc[0] / tz + cx - 0.5, my = fy * pc[1] / tz + cy - 0.5;
    int T = TILE_OF(o);
    double e[4] = {(mx - radius) / T, (my - radius) / T, (mx + radius + T - 1) / T, (my + radius + T - 1) / T};
    for (int k = 0; k < 4; k++)
        if (near_int(e[k], 2e-5)) g->ambiguous = 1;
    /* C (int) truncation toward zero, as in the kernel */
    g->rx0 = (int)fmin(tiles_x, fmax(0, (int)((mx - radius) / T)));
    g->ry0 = (int)fmin(tiles_y, fmax(0, (int)((my - radius) / T)));
    g->rx1 = (int)fmin(tiles_x, fmax(0, (int)((mx + radius + T - 1) / T)));
    g->ry1 = (int)fmin(tiles_y, fmax(0, (int)((my + radius + T - 1) / T)));
    g->x = mx;
    g->y = my;
    g->ca = cc / det;
    g->cb = -b / det;
    g->cc = a / det;
    g->sig = 1.0 / (1.0 + exp(-(double)s->logit_opacity[i]));
    g->op = g->sig * c3 * c2;
    if ((g->rx1 - g->rx0) * (g->ry1 - g->ry0) == 0) return;
    double dv[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    double dl = sqrt(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2]);
    for (int k = 0; k < 3; k++) dv[k] /= dl, g->dir[k] = dv[k];
    g->dl = dl;
    double *bs = g->bs;
    basis(dv, o->active_degree, bs);
    int K = CS_SH_COEFFS(s->sh_degree), nk = (o->active_degree + 1) * (o->active_degree + 1);
    for (int ch = 0; ch < 3; ch++) {
        double col = 0.5;
        for (int k = 0; k < nk && k < K; k++) {
            float sv = s->sh[((size_t)i * K + k) * 3 + ch];
            if (o->sh_half) sv = cs_half_to_float(cs_float_to_half(sv));
            col += bs[k] * sv;
        }
        g->col_raw[ch] = col;
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

/* The tile walk of the forward; with DEPTH (2, H, W), the expected and median depths too; with
   v_img, also the per-Gaussian gradients of the 2D quantities, g2d (N, 9): x, y, conic a, b, c,
   opacity, rgb. Per pixel the contributors are kept with their transmittance, so the backward
   needs no T recovery. */
static void raster(const cs_splats *s, const cs_view *v, const ref_opts *o, ref_g *gs, double *img, double *depth,
                   unsigned char *amb, const double *v_img, double *g2d)
{
    int W = v->width, H = v->height, T = TILE_OF(o), tx = (W + T - 1) / T, ty = (H + T - 1) / T;
    size_t np = s->n ? (size_t)s->n : 1;
    ref_g **list = calloc(np, sizeof *list), **cg = calloc(np, sizeof *cg);
    double *calpha = calloc(np, sizeof *calpha), *cT = calloc(np, sizeof *cT), *craw = calloc(np, sizeof *craw);
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
            for (int py = tyi * T; py < tyi * T + T && py < H; py++)
                for (int px = txi * T; px < txi * T + T && px < W; px++) {
                    double T = 1, C[3] = {0, 0, 0}, dsum = 0, dmed = 0;
                    int a = 0, nc = 0;
                    for (int j = 0; j < namb; j++) {
                        double dx = ambs[j]->x - px, dy = ambs[j]->y - py;
                        double pw = -0.5 * (ambs[j]->ca * dx * dx + ambs[j]->cc * dy * dy) - ambs[j]->cb * dx * dy;
                        if (ambs[j]->op * exp(pw) >= 0.5 / 255) a = 1, ambs[j]->edge = 1;
                    }
                    for (int j = 0; j < n; j++) {
                        ref_g *g = list[j];
                        double dx = g->x - px, dy = g->y - py;
                        double power = -0.5 * (g->ca * dx * dx + g->cc * dy * dy) - g->cb * dx * dy;
                        if (fabs(power) < 1e-5) a = 1, g->edge = 1;
                        if (power > 0) continue;
                        double raw = g->op * exp(power);
                        if (fabs(raw - CS_ALPHA_MAX) < 1e-5 || fabs(raw - CS_ALPHA_MIN) < 1e-5) a = 1;
                        /* the float power's rounding is ~1e-6 of it, a few units: 2e-4 of raw is ample */
                        if (fabs(raw / CS_ALPHA_MAX - 1) < 2e-4 || fabs(raw / CS_ALPHA_MIN - 1) < 2e-4) a = 1, g->edge = 1;
                        double alpha = raw < CS_ALPHA_MAX ? raw : CS_ALPHA_MAX;
                        if (alpha < CS_ALPHA_MIN) continue;
                        double tt = T * (1 - alpha);
                        if (fabs(tt - CS_T_MIN) < 1e-7) a = 1;
                        if (fabs(tt / CS_T_MIN - 1) < 2e-4) a = 1, g->edge = 1;
                        if (tt < CS_T_MIN) break;
                        for (int c = 0; c < 3; c++) C[c] += g->rgb[c] * alpha * T;
                        dsum += g->depth * alpha * T;
                        if (T >= 0.5 && tt < 0.5) dmed = g->depth;
                        if (depth && fabs(tt - 0.5) < 1e-6) a = 1; /* the median's crossing */
                        /* two blended Gaussians whose depths the device's float may order
                           either way (seed 4767175977216331517: equal float depths, 9e-8 apart;
                           seed 4768179040710566318: 2.3e-7 apart at depth 0.23, where the
                           terms the depth sums are about 8: the rounding follows them) */
                        if (nc && fabs(g->pc[2] - cg[nc - 1]->pc[2]) <= 1e-6 * fmax(g->zmag, cg[nc - 1]->zmag))
                            a = 1, g->edge = 1, cg[nc - 1]->edge = 1;
                        cg[nc] = g, calpha[nc] = alpha, cT[nc] = T, craw[nc] = raw, nc++;
                        T = tt;
                    }
                    size_t pix = (size_t)py * W + px, WH = (size_t)W * H;
                    if (img)
                        for (int c = 0; c < 3; c++) img[c * WH + pix] = C[c] + T * o->bg[c];
                    if (amb) amb[pix] = (unsigned char)a;
                    if (depth) depth[pix] = T < 1 ? dsum / (1 - T) : 0, depth[WH + pix] = dmed;
                    if (!v_img) continue;
                    double vi[3] = {v_img[pix], v_img[WH + pix], v_img[2 * WH + pix]};
                    double behind[3] = {T * o->bg[0], T * o->bg[1], T * o->bg[2]};
                    for (int j = nc - 1; j >= 0; j--) {
                        ref_g *g = cg[j];
                        double *gg = g2d + (size_t)g->id * 9, al = calpha[j], Tj = cT[j], v_alpha = 0;
                        for (int c = 0; c < 3; c++) {
                            gg[6 + c] += vi[c] * al * Tj;
                            v_alpha += vi[c] * (g->rgb[c] * Tj - behind[c] / (1 - al));
                            behind[c] += g->rgb[c] * al * Tj;
                        }
                        if (craw[j] >= CS_ALPHA_MAX) continue; /* the clamp has zero gradient */
                        double dx = g->x - px, dy = g->y - py, e = craw[j] / g->op;
                        double v_pow = v_alpha * craw[j];
                        gg[5] += v_alpha * e;
                        gg[0] += -v_pow * (g->ca * dx + g->cb * dy);
                        gg[1] += -v_pow * (g->cc * dy + g->cb * dx);
                        gg[2] += -0.5 * v_pow * dx * dx;
                        gg[3] += -v_pow * dx * dy;
                        gg[4] += -0.5 * v_pow * dy * dy;
                    }
                }
        }
    free(list), free(cg), free(calpha), free(cT), free(craw);
}

void ref_render(const cs_splats *s, const cs_view *v, const ref_opts *o, double *img, unsigned char *amb)
{
    ref_render_depth(s, v, o, img, NULL, amb);
}

void ref_render_depth(const cs_splats *s, const cs_view *v, const ref_opts *o, double *img, double *depth,
                      unsigned char *amb)
{
    int T = TILE_OF(o), tx = (v->width + T - 1) / T, ty = (v->height + T - 1) / T;
    ref_g *gs = calloc(s->n ? s->n : 1, sizeof *gs);
    for (int i = 0; i < s->n; i++) project(s, i, v, o, tx, ty, &gs[i]);
    raster(s, v, o, gs, img, depth, amb, NULL, NULL);
    free(gs);
}

/* d(basis k)/d(direction), k >= 1 */
static void basis_grad(const double d[3], int k, double out[3])
{
    double x = d[0], y = d[1], z = d[2], xx = x * x, yy = y * y, zz = z * z;
    double r[16][3] = {
        {0, 0, 0},
        {0, -C1, 0},
        {0, 0, C1},
        {-C1, 0, 0},
        {C2[0] * y, C2[0] * x, 0},
        {0, C2[1] * z, C2[1] * y},
        {-2 * C2[2] * x, -2 * C2[2] * y, 4 * C2[2] * z},
        {C2[3] * z, 0, C2[3] * x},
        {2 * C2[4] * x, -2 * C2[4] * y, 0},
        {6 * C3[0] * x * y, C3[0] * (3 * xx - 3 * yy), 0},
        {C3[1] * y * z, C3[1] * x * z, C3[1] * x * y},
        {-2 * C3[2] * x * y, C3[2] * (4 * zz - xx - 3 * yy), 8 * C3[2] * y * z},
        {-6 * C3[3] * x * z, -6 * C3[3] * y * z, C3[3] * (6 * zz - 3 * xx - 3 * yy)},
        {C3[4] * (4 * zz - 3 * xx - yy), -2 * C3[4] * x * y, 8 * C3[4] * x * z},
        {2 * C3[5] * x * z, -2 * C3[5] * y * z, C3[5] * (xx - yy)},
        {C3[6] * (3 * xx - 3 * yy), -6 * C3[6] * x * y, 0},
    };
    for (int c = 0; c < 3; c++) out[c] = r[k][c];
}

/* Projection backward of one Gaussian: from g2d (x, y, conic a b c, opacity, rgb) to geo
   (means 3, log-scales 3, quaternion 4, logit 1) and SH (K, 3). */
static void project_bwd(const cs_splats *s, int i, const cs_view *v, const ref_opts *o, const ref_g *g,
                        const double *g2d, double *ggeo, double *gsh)
{
    const float *cm = v->cam.s;
    double R[9];
    for (int k = 0; k < 9; k++) R[k] = cm[k];
    double fx = v->intr.s[0], fy = v->intr.s[1], tz = g->pc[2];
    double g_p[3] = {0, 0, 0}, g_pc[3] = {0, 0, 0};
    /* colour */
    int K = CS_SH_COEFFS(s->sh_degree), nk = (o->active_degree + 1) * (o->active_degree + 1);
    double g_rgb[3], g_dir[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++) g_rgb[c] = g->col_raw[c] < 0 ? 0 : g2d[6 + c];
    for (int k = 0; k < nk && k < K; k++) {
        double coef_dot = 0;
        for (int c = 0; c < 3; c++) {
            gsh[k * 3 + c] = g->bs[k] * g_rgb[c];
            float sv = s->sh[((size_t)i * K + k) * 3 + c];
            if (o->sh_half) sv = cs_half_to_float(cs_float_to_half(sv));
            coef_dot += sv * g_rgb[c];
        }
        if (k == 0) continue;
        double bg3[3];
        basis_grad(g->dir, k, bg3);
        for (int c = 0; c < 3; c++) g_dir[c] += coef_dot * bg3[c];
    }
    double dd = g->dir[0] * g_dir[0] + g->dir[1] * g_dir[1] + g->dir[2] * g_dir[2];
    for (int c = 0; c < 3; c++) g_p[c] += (g_dir[c] - g->dir[c] * dd) / g->dl;
    /* opacity = sigmoid * c3 * c2 */
    double g_op = g2d[5];
    ggeo[10] = g_op * g->c3 * g->c2 * g->sig * (1 - g->sig);
    double g_c3 = g_op * g->sig * g->c2, g_c2 = g_op * g->sig * g->c3;
    /* conic = inverse of (a b; b c) */
    double a = g->a, b = g->b, c = g->c, det = g->det;
    double g_det = -(g2d[2] * c - g2d[3] * b + g2d[4] * a) / (det * det);
    double g_a = g2d[4] / det + g_det * c, g_c = g2d[2] / det + g_det * a, g_b = -g2d[3] / det - 2 * b * g_det;
    if (o->antialias == 1) { /* c2 = sqrt(det0 / det) */
        double det0 = g->a0 * g->c0 - g->b0 * g->b0;
        double g_det0 = g_c2 * 0.5 * g->c2 / det0, g_detc = -g_c2 * 0.5 * g->c2 / det;
        g_a += g_detc * c + g_det0 * g->c0;
        g_c += g_detc * a + g_det0 * g->a0;
        g_b += -2 * b * g_detc - 2 * g->b0 * g_det0;
    }
    /* (a0 b0 c0) = (T0 S T0, T0 S T1, T1 S T1) */
    double ST0[3], ST1[3], g_T0[3], g_T1[3], g_S[9];
    for (int r = 0; r < 3; r++) {
        ST0[r] = g->S[r * 3] * g->T0[0] + g->S[r * 3 + 1] * g->T0[1] + g->S[r * 3 + 2] * g->T0[2];
        ST1[r] = g->S[r * 3] * g->T1[0] + g->S[r * 3 + 1] * g->T1[1] + g->S[r * 3 + 2] * g->T1[2];
    }
    for (int r = 0; r < 3; r++) {
        g_T0[r] = 2 * g_a * ST0[r] + g_b * ST1[r];
        g_T1[r] = 2 * g_c * ST1[r] + g_b * ST0[r];
        for (int q = 0; q < 3; q++)
            g_S[r * 3 + q] = g_a * g->T0[r] * g->T0[q] + g_b * g->T0[r] * g->T1[q] + g_c * g->T1[r] * g->T1[q];
    }
    /* S = Q diag(s2) Q^T */
    double g_Q[9] = {0}, g_s2[3] = {0, 0, 0};
    for (int r = 0; r < 3; r++)
        for (int q = 0; q < 3; q++)
            for (int k = 0; k < 3; k++) {
                g_Q[r * 3 + k] += (g_S[r * 3 + q] + g_S[q * 3 + r]) * g->Q[q * 3 + k] * g->s2[k];
                g_s2[k] += g_S[r * 3 + q] * g->Q[r * 3 + k] * g->Q[q * 3 + k];
            }
    /* scales (and the 3D filter's opacity factor c3) */
    for (int k = 0; k < 3; k++) {
        double g_raw = g_s2[k];
        if (o->filter_3d) g_raw += g_c3 * 0.5 * g->c3 * (1 / g->s2raw[k] - 1 / g->s2[k]);
        ggeo[3 + k] = g_raw * 2 * g->s2raw[k];
    }
    /* rotation from the unit quaternion (w x y z), then through the normalisation */
    const double *G = g_Q, w = g->qu[0], x = g->qu[1], y = g->qu[2], z = g->qu[3];
    double gu[4] = {
        2 * (-z * G[1] + y * G[2] + z * G[3] - x * G[5] - y * G[6] + x * G[7]),
        2 * (y * G[1] + z * G[2] + y * G[3] - 2 * x * G[4] - w * G[5] + z * G[6] + w * G[7] - 2 * x * G[8]),
        2 * (-2 * y * G[0] + x * G[1] + w * G[2] + x * G[3] + z * G[5] - w * G[6] + z * G[7] - 2 * y * G[8]),
        2 * (-2 * z * G[0] - w * G[1] + x * G[2] + w * G[3] - 2 * z * G[4] + y * G[5] + x * G[6] + y * G[7])};
    double ud = gu[0] * w + gu[1] * x + gu[2] * y + gu[3] * z;
    for (int k = 0; k < 4; k++) ggeo[6 + k] = (gu[k] - g->qu[k] * ud) / g->qn;
    /* T0 = J00 R0 + J02 R2, T1 = J11 R1 + J12 R2 */
    double g_J00 = 0, g_J02 = 0, g_J11 = 0, g_J12 = 0;
    for (int k = 0; k < 3; k++) {
        g_J00 += g_T0[k] * R[k];
        g_J02 += g_T0[k] * R[6 + k];
        g_J11 += g_T1[k] * R[3 + k];
        g_J12 += g_T1[k] * R[6 + k];
    }
    double tz2 = tz * tz, tz3 = tz2 * tz;
    g_pc[2] += -fx / tz2 * g_J00 - fy / tz2 * g_J11 + 2 * fx * g->txc / tz3 * g_J02 + 2 * fy * g->tyc / tz3 * g_J12;
    double g_txc = -fx / tz2 * g_J02, g_tyc = -fy / tz2 * g_J12;
    if (g->limx != 0) g_pc[2] += g->limx * g_txc; else g_pc[0] += g_txc;
    if (g->limy != 0) g_pc[2] += g->limy * g_tyc; else g_pc[1] += g_tyc;
    /* pixel mean */
    g_pc[0] += g2d[0] * fx / tz;
    g_pc[1] += g2d[1] * fy / tz;
    g_pc[2] += -g2d[0] * fx * g->pc[0] / tz2 - g2d[1] * fy * g->pc[1] / tz2;
    for (int k = 0; k < 3; k++) ggeo[k] = g_p[k] + R[k] * g_pc[0] + R[3 + k] * g_pc[1] + R[6 + k] * g_pc[2];
}

void ref_backward(const cs_splats *s, const cs_view *v, const ref_opts *o, const double *v_img, double *grad_geo,
                  double *grad_sh, unsigned char *edge)
{
    int T = TILE_OF(o), tx = (v->width + T - 1) / T, ty = (v->height + T - 1) / T, K = CS_SH_COEFFS(s->sh_degree);
    size_t np = s->n ? (size_t)s->n : 1;
    ref_g *gs = calloc(np, sizeof *gs);
    double *g2d = calloc(np * 9, sizeof *g2d);
    for (int i = 0; i < s->n; i++) project(s, i, v, o, tx, ty, &gs[i]);
    raster(s, v, o, gs, NULL, NULL, NULL, v_img, g2d);
    memset(grad_geo, 0, sizeof(double) * CS_GEO_W * s->n);
    memset(grad_sh, 0, sizeof(double) * K * 3 * s->n);
    for (int i = 0; i < s->n; i++)
        if (gs[i].visible) project_bwd(s, i, v, o, &gs[i], g2d + (size_t)i * 9, grad_geo + (size_t)i * CS_GEO_W, grad_sh + (size_t)i * K * 3);
    if (edge)
        for (int i = 0; i < s->n; i++) edge[i] = (unsigned char)gs[i].edge;
    free(gs), free(g2d);
}
