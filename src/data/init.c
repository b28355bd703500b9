/* init: initial Gaussians (graphdeco create_from_pcd): colour -> SH DC, scale from the mean
 * squared distance to the 3 nearest neighbours (uniform grid, not O(N^2)), opacity 0.1; the
 * MCMC strategy's opacity and scale factor as configured. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "init.h"
#include "util.h"


typedef struct {
    int cells[3];
    double lo[3], cell;
    int *start, *items;
} grid3;

static int cell_of(const grid3 *g, const float *p, int k)
{
    int c = (int)((p[k] - g->lo[k]) / g->cell);
    return c < 0 ? 0 : c >= g->cells[k] ? g->cells[k] - 1 : c;
}

/* mean squared distance to the 3 nearest other points, for each point */
static int knn3_mean_sq(const float *pts, int n, float *out)
{
    if (n < 2) {
        for (int i = 0; i < n; i++) out[i] = 1e-2f;
        return 0;
    }
    grid3 g;
    double hi[3];
    for (int k = 0; k < 3; k++) g.lo[k] = hi[k] = pts[k];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) g.lo[k] = fmin(g.lo[k], pts[i * 3 + k]), hi[k] = fmax(hi[k], pts[i * 3 + k]);
    double vol = 1;
    for (int k = 0; k < 3; k++) vol *= fmax(hi[k] - g.lo[k], 1e-6);
    g.cell = fmax(cbrt(vol / n) * 1.5, 1e-6);
    long total = 1;
    for (int k = 0; k < 3; k++) {
        g.cells[k] = (int)fmin(fmax(ceil((hi[k] - g.lo[k]) / g.cell), 1), 512);
        total *= g.cells[k];
    }
    g.start = calloc(total + 1, sizeof(int));
    g.items = malloc(sizeof(int) * n);
    int *cid = malloc(sizeof(int) * n);
    if (!g.start || !g.items || !cid) {
        free(g.start), free(g.items), free(cid);
        return cs_fail("out of host memory in nearest-neighbour search");
    }
    for (int i = 0; i < n; i++) {
        const float *p = pts + i * 3;
        cid[i] = (cell_of(&g, p, 2) * g.cells[1] + cell_of(&g, p, 1)) * g.cells[0] + cell_of(&g, p, 0);
        g.start[cid[i] + 1]++;
    }
    for (long c = 0; c < total; c++) g.start[c + 1] += g.start[c];
    int *fill = calloc(total, sizeof(int));
    for (int i = 0; i < n; i++) g.items[g.start[cid[i]] + fill[cid[i]]++] = i;
    free(fill);
    for (int i = 0; i < n; i++) {
        const float *p = pts + i * 3;
        double best[3] = {INFINITY, INFINITY, INFINITY};
        int c0[3] = {cell_of(&g, p, 0), cell_of(&g, p, 1), cell_of(&g, p, 2)};
        for (int ring = 0;; ring++) {
            for (int z = c0[2] - ring; z <= c0[2] + ring; z++)
                for (int y = c0[1] - ring; y <= c0[1] + ring; y++)
                    for (int x = c0[0] - ring; x <= c0[0] + ring; x++) {
                        if (x < 0 || y < 0 || z < 0 || x >= g.cells[0] || y >= g.cells[1] || z >= g.cells[2]) continue;
                        if (abs(x - c0[0]) != ring && abs(y - c0[1]) != ring && abs(z - c0[2]) != ring) continue;
                        long c = ((long)z * g.cells[1] + y) * g.cells[0] + x;
                        for (int j = g.start[c]; j < g.start[c + 1]; j++) {
                            int o = g.items[j];
                            if (o == i) continue;
                            double dx = pts[o * 3] - p[0], dy = pts[o * 3 + 1] - p[1], dz = pts[o * 3 + 2] - p[2];
                            double d = dx * dx + dy * dy + dz * dz;
                            if (d < best[2]) {
                                best[2] = d;
                                if (best[2] < best[1]) { double t = best[1]; best[1] = best[2]; best[2] = t; }
                                if (best[1] < best[0]) { double t = best[0]; best[0] = best[1]; best[1] = t; }
                            }
                        }
                    }
            /* every unvisited point is at least ring * cell away */
            double reach = ring * g.cell;
            int all_out = ring > g.cells[0] && ring > g.cells[1] && ring > g.cells[2];
            if ((best[2] < INFINITY && best[2] <= reach * reach) || all_out) break;
        }
        double m = 0;
        int cnt = 0;
        for (int k = 0; k < 3; k++)
            if (best[k] < INFINITY) m += best[k], cnt++;
        out[i] = (float)fmax(cnt ? m / cnt : 1e-7, 1e-7);
    }
    free(g.start), free(g.items), free(cid);
    return 0;
}

/* the random-points cube: graphdeco's [-1.3, 1.3]^3 for a scene without points, else 3x the
   camera extent around the training cameras' centre (gsplat's init_extent) */
static void random_cube(const cs_scene *scene, double centre[3], double *half)
{
    centre[0] = centre[1] = centre[2] = 0, *half = 1.3;
    if (scene->n_points == 0) return;
    int n = 0;
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) continue;
        double c[3];
        cs_camera_center(&scene->cams[i], c);
        for (int k = 0; k < 3; k++) centre[k] += c[k];
        n++;
    }
    for (int k = 0; k < 3 && n; k++) centre[k] /= n;
    *half = 3.0 * cs_scene_extent(scene);
}

int cs_init_splats(const cs_scene *scene, const cs_model_cfg *model, const cs_optim_cfg *o, cs_splats *out)
{
    int random = scene->n_points == 0 || o->init_random;
    int n = random ? o->random_init_points : scene->n_points;
    if (cs_splats_alloc(out, n, model->sh_degree, model->filter_3d)) return -1;
    int K = CS_SH_COEFFS(model->sh_degree);
    uint64_t seed = (uint64_t)o->seed * 7919u + 17u;
    double centre[3], half;
    random_cube(scene, centre, &half);
    double opacity = o->init_opacity > 0 ? o->init_opacity : 0.1;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++) {
            if (random) {
                out->means[i * 3 + k] = (float)(centre[k] + (cs_rand_uniform(seed, (uint64_t)i * 6 + k) * 2 - 1) * half);
                /* graphdeco: colours random / 255 taken as SH values */
                out->sh[(size_t)i * K * 3 + k] = (float)(cs_rand_uniform(seed, (uint64_t)i * 6 + 3 + k) / 255.0);
            } else {
                out->means[i * 3 + k] = scene->points[i * 3 + k];
                out->sh[(size_t)i * K * 3 + k] = (float)((scene->colors[i * 3 + k] / 255.0 - 0.5) / CS_SH_C0);
            }
        }
        out->quats[i * 4] = 1.f;
        out->logit_opacity[i] = (float)log(opacity / (1 - opacity));
    }
    float *d2 = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
    if (!d2 || knn3_mean_sq(out->means, n, d2)) {
        free(d2);
        cs_splats_free(out);
        return d2 ? -1 : cs_fail("out of host memory");
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            out->log_scales[i * 3 + k] = (float)log(sqrt(d2[i]) * (o->init_scale > 0 ? o->init_scale : 1.0));
    free(d2);
    return 0;
}
