/* depth_check (mesh --consistency): rendered depths checked against the neighbouring views'.
 * The depths are a sphere's, ray-traced here for a ring of cameras round it; one view carries a
 * patch of made-up depths in front of the sphere (the model's guess on a plain backdrop), which
 * no other view sees. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "depth_check.h"
#include "mesher.h"
#include "ref_mesh.h"
#include "render.h"
#include "test.h"
#include "util.h"

enum { NV = 36, W = 96, H = 72 };

/* camera z of the sphere (centre C, radius R) at view V's pixel (X, Y); 0 where the ray misses */
static float sphere_depth(const cs_view *v, int x, int y, const double c[3], double r)
{
    const float *m = v->cam.s;
    double dc[3] = {(x - v->intr.s[2]) / v->intr.s[0], (y - v->intr.s[3]) / v->intr.s[1], 1}, d[3], o[3];
    for (int i = 0; i < 3; i++) d[i] = m[i] * dc[0] + m[3 + i] * dc[1] + m[6 + i] * dc[2], o[i] = m[12 + i] - c[i];
    double a = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], b = o[0] * d[0] + o[1] * d[1] + o[2] * d[2];
    double disc = b * b - a * (o[0] * o[0] + o[1] * o[1] + o[2] * o[2] - r * r);
    if (disc <= 0) return 0.f;
    double t = (-b - sqrt(disc)) / a;
    return t > 0 ? (float)t : 0.f;
}

/* every view's depth map (NV x W x H) */
static void sphere_maps(const cs_view *v, const double c[3], double r, float *maps)
{
    for (int k = 0; k < NV; k++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) maps[((size_t)k * H + y) * W + x] = sphere_depth(&v[k], x, y, c, r);
}

/* the checker over MAPS with the rule MIN_AGREE, maps stored within HOST_BYTES */
static int check_init(cs_depth_check *dc, const cs_view *v, const float *maps, int min_agree, size_t host_bytes)
{
    if (cs_depth_check_init(dc, v, NV, min_agree, host_bytes)) return -1;
    for (int k = 0; k < NV; k++)
        if (cs_depth_check_store(dc, k, maps + (size_t)k * W * H)) return -1;
    return 0;
}

/* the neighbours of every view look within 60 degrees of its own axis, the nearest first */
static int neighbours_ok(const cs_depth_check *dc)
{
    for (int k = 0; k < NV; k++) {
        const float *a = dc->view[k].cam.s + 6, *o = dc->view[k].cam.s + 12;
        double last = 0;
        for (int i = 0; i < CS_DCHECK_NEIGHBOURS; i++) {
            int j = dc->nb[k * CS_DCHECK_NEIGHBOURS + i];
            CHECK(j >= 0 && j < NV && j != k, "view %d's neighbour %d is %d", k, i, j);
            const float *b = dc->view[j].cam.s + 6, *p = dc->view[j].cam.s + 12;
            double cosang = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
            double d = hypot(hypot(p[0] - o[0], p[1] - o[1]), p[2] - o[2]);
            CHECK(cosang >= 0.5 && d >= last - 1e-6, "view %d's neighbour %d (view %d): cos %.3f, distance %.3f after %.3f", k,
                  i, j, cosang, d, last);
            last = d;
        }
    }
    return 0;
}

/* filters view K's map (a copy of MAPS's) with patch P (x0 y0 x1 y1, made-up depths at a share
   F of the true one, or of the sphere's nearest where the ray misses); *PATCH_LEFT: patch
   pixels kept, *SPHERE_LOST: sphere pixels outside it dropped, of *SPHERE */
static int filter_case(const cs_depth_check *dc, const float *maps, int k, const int p[4], float f, long *patch_left,
                       long *sphere_lost, long *sphere)
{
    float *d = malloc(sizeof(float) * W * H);
    CHECK(d != NULL, "out of memory");
    for (int i = 0; i < W * H; i++) d[i] = maps[(size_t)k * W * H + i];
    float near = 1e30f;
    for (int i = 0; i < W * H; i++)
        if (d[i] > 0.f && d[i] < near) near = d[i];
    for (int y = p[1]; y < p[3]; y++)
        for (int x = p[0]; x < p[2]; x++) d[y * W + x] = f * (d[y * W + x] > 0.f ? d[y * W + x] : near);
    long seen = 0, dropped = cs_depth_check_filter(dc, k, d, &seen), zeroed = 0;
    *patch_left = *sphere_lost = *sphere = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            int in = x >= p[0] && x < p[2] && y >= p[1] && y < p[3];
            float was = maps[(size_t)k * W * H + y * W + x], now = d[y * W + x];
            float given = in ? f * (was > 0.f ? was : near) : was;
            /* dropped: 0, or with carve_dropped the depth's negative (free space in front of it) */
            int gone = given > 0.f && (dc->carve_dropped ? now == -given : now == 0.f);
            zeroed += gone;
            if (in) *patch_left += now > 0.f;
            else if (was > 0.f) (*sphere)++, *sphere_lost += gone;
            CHECK(gone || now == given, "view %d pixel (%d, %d) changed to %g (carve_dropped %d)", k, x, y, now,
                  dc->carve_dropped);
        }
    free(d);
    CHECK(dropped == zeroed && seen >= *sphere, "view %d: %ld dropped, %ld zeroed, %ld seen", k, dropped, zeroed, seen);
    return 0;
}

/* cs_depth_check_points (the shell's fit) gives each stored pixel of view K the verdict
   cs_depth_check_filter gives it, and its world point: view K stored with a made-up patch (at
   half the depth), restored after; on the sphere (centre C, radius R) the points lie on it */
typedef struct {
    float (*p)[4]; /* x y z, dropped */
    long n, cap;
} point_list;

static void collect(void *arg, int k, const float p[3], float depth, int dropped)
{
    point_list *l = arg;
    (void)k, (void)depth;
    if (l->n < l->cap) l->p[l->n][0] = p[0], l->p[l->n][1] = p[1], l->p[l->n][2] = p[2], l->p[l->n][3] = (float)dropped;
    l->n++;
}

static int points_case(cs_depth_check *dc, const float *maps, int k, const double c[3], double r)
{
    float *d = malloc(sizeof(float) * W * H), *f = malloc(sizeof(float) * W * H);
    point_list l = {malloc(sizeof(float[4]) * W * H), 0, W * H};
    CHECK(d && f && l.p, "out of memory");
    for (int i = 0; i < W * H; i++) d[i] = maps[(size_t)k * W * H + i];
    for (int y = 20; y < 40; y++)
        for (int x = 30; x < 60; x++) d[y * W + x] = d[y * W + x] > 0.f ? 0.5f * d[y * W + x] : 0.f;
    CHECK_OK(cs_depth_check_store(dc, k, d));
    for (int i = 0; i < W * H; i++) f[i] = d[i];
    long seen, dropped = 0, kept = 0, i = 0;
    cs_depth_check_filter(dc, k, f, &seen);
    cs_depth_check_points(dc, k, 1, collect, &l);
    int s = dc->stride;
    for (int y = 0; y < dc->sh[k]; y++)
        for (int x = 0; x < dc->sw[k]; x++) {
            float was = d[(size_t)y * s * W + (size_t)x * s], now = f[(size_t)y * s * W + (size_t)x * s];
            if (!(was > 0.f)) continue;
            CHECK(i < l.n, "view %d: %ld points for more stored pixels", k, l.n);
            int gone = now != was;
            CHECK((int)l.p[i][3] == gone, "view %d pixel (%d, %d): points says dropped %d, the filter %d", k, x * s, y * s,
                  (int)l.p[i][3], gone);
            int in = x * s >= 30 && x * s < 60 && y * s >= 20 && y * s < 40;
            double dist = hypot(hypot(l.p[i][0] - c[0], l.p[i][1] - c[1]), l.p[i][2] - c[2]);
            CHECK(in || fabs(dist - r) < 1e-3 * r, "view %d pixel (%d, %d): point %.4f from the centre, radius %.4f", k,
                  x * s, y * s, dist, r);
            dropped += gone, kept += !gone, i++;
        }
    CHECK(i == l.n && dropped > 0 && kept > 0, "view %d: %ld points for %ld stored pixels (%ld dropped, %ld kept)", k, l.n, i,
          dropped, kept);
    CHECK_OK(cs_depth_check_store(dc, k, maps + (size_t)k * W * H));
    free(d), free(f), free(l.p);
    return 0;
}

int test_depth_check(void)
{
    uint64_t rs = test_seed() ^ 0xdc4ec;
    cs_view v[NV];
    double a0 = 2 * M_PI * test_rand(&rs), c[3], r = 0.8 + 0.4 * test_rand(&rs);
    for (int i = 0; i < 3; i++) c[i] = 0.3 * (test_rand(&rs) - 0.5);
    for (int k = 0; k < NV; k++) {
        double a = a0 + 2 * M_PI * k / NV, C[3] = {4 * cos(a), 4 * sin(a), 0.5 + test_rand(&rs)};
        cs_camera cam;
        ref_mesh_ring_camera(&cam, C);
        cs_view_from_camera(&cam, &v[k]);
    }
    float *maps = malloc(sizeof(float) * NV * W * H);
    CHECK(maps != NULL, "out of memory");
    sphere_maps(v, c, r, maps);
    size_t budgets[2] = {CS_DCHECK_HOST_BYTES, sizeof(float) * NV * W * H / 5}; /* all, and every 3rd pixel */
    for (int b = 0; b < 2; b++) {
        cs_depth_check dc;
        CHECK(check_init(&dc, v, maps, 2, budgets[b]) == 0, "init");
        CHECK(dc.stride == (b ? 3 : 1), "budget %zu: stride %d", budgets[b], dc.stride);
        dc.carve_dropped = b; /* the second budget keeps the dropped depths negated (--carve-dropped) */
        if (neighbours_ok(&dc)) return -1;
        long lost = 0, all = 0;
        /* four patches, and more while the sphere pixels outside them are too few to count a 2%
           loss by (a large patch on a far view leaves few: seed 4767167111400911946) */
        for (int n = 0; n < 4 || (all <= 2000 && n < 16); n++) {
            int k = (int)(NV * test_rand(&rs)), x0 = (int)(W / 2 * test_rand(&rs)), y0 = (int)(H / 2 * test_rand(&rs));
            int p[4] = {x0, y0, x0 + 8 + (int)(W / 3 * test_rand(&rs)), y0 + 8 + (int)(H / 3 * test_rand(&rs))};
            float f = (float)(0.3 + 0.5 * test_rand(&rs));
            long left, gone, sph;
            if (filter_case(&dc, maps, k, p, f, &left, &gone, &sph)) return -1;
            printf("  stride %d, view %d: patch %dx%d at %.2f of the depth: %ld kept; sphere: %ld of %ld dropped\n",
                   dc.stride, k, p[2] - p[0], p[3] - p[1], f, left, gone, sph);
            CHECK(left == 0, "view %d: %ld of the patch's pixels kept", k, left);
            lost += gone, all += sph;
        }
        if (points_case(&dc, maps, (int)(NV * test_rand(&rs)), c, r)) return -1;
        /* what a neighbour's sampled map misses at the silhouette, only */
        CHECK(all > 2000 && lost * 100 <= all * (b ? 8 : 2), "%ld of %ld sphere pixels dropped", lost, all);
        cs_depth_check_free(&dc);
    }
    /* rule 0: nothing dropped; a rule above the neighbours there are (8) is refused by the CLI,
       so 8 of 8 must agree here: fewer kept than with 2 */
    long kept[2];
    int rules[2] = {0, CS_DCHECK_NEIGHBOURS};
    for (int q = 0; q < 2; q++) {
        cs_depth_check dc;
        CHECK(check_init(&dc, v, maps, rules[q], CS_DCHECK_HOST_BYTES) == 0, "init");
        long left, gone, sph;
        int p[4] = {10, 10, 30, 30};
        if (filter_case(&dc, maps, 0, p, 0.5f, &left, &gone, &sph)) return -1;
        kept[q] = left + sph - gone;
        CHECK(q == 1 || (left == 400 && gone == 0), "rule 0: %ld of the patch kept, %ld of the sphere dropped", left, gone);
        cs_depth_check_free(&dc);
    }
    CHECK(kept[1] < kept[0] - 400, "8 of 8: %ld kept, rule 0: %ld", kept[1], kept[0]);
    /* a view with no neighbour (one camera) keeps everything */
    cs_depth_check dc;
    CHECK(cs_depth_check_init(&dc, v, 1, 2, CS_DCHECK_HOST_BYTES) == 0 && cs_depth_check_store(&dc, 0, maps) == 0, "init");
    float *d = malloc(sizeof(float) * W * H);
    CHECK(d != NULL, "out of memory");
    for (int i = 0; i < W * H; i++) d[i] = 0.5f * maps[i];
    long seen = 0, dropped = cs_depth_check_filter(&dc, 0, d, &seen);
    CHECK(dc.nb[0] == -1 && dropped == 0 && seen > 0, "one view: %ld of %ld dropped", dropped, seen);
    free(d), free(maps);
    cs_depth_check_free(&dc);
    return 0;
}

/* the truncation on captures: at least 1% of the views' median depth (the plush dog at 750x500:
   voxel 0.003, median depth 4.1, 13.7 voxels), at most 32; --trunc and Blender scenes keep theirs */
int test_mesh_trunc(void)
{
    uint64_t rs = test_seed() ^ 0x7c;
    double med = 1 + 9 * test_rand(&rs), vox = med * (0.0005 + 0.0015 * test_rand(&rs)), want = 0.01 * med / vox;
    double got = cs_mesh_trunc_voxels(0, 1, med, vox);
    CHECK(fabs(got - want) < 1e-9 * want && got > 4.99 && got <= 20.01, "median %g, voxel %g: %g voxels, not %g", med, vox, got,
          want);
    CHECK(cs_mesh_trunc_voxels(0, 0, med, vox) == 4 && cs_mesh_trunc_voxels(3, 1, med, vox) == 3, "Blender or --trunc 3");
    CHECK(cs_mesh_trunc_voxels(0, 1, med, med / 200) == 4 && cs_mesh_trunc_voxels(0, 1, -1, vox) == 4,
          "coarse voxels or no median depth: %g", cs_mesh_trunc_voxels(0, 1, med, med / 200));
    CHECK(cs_mesh_trunc_voxels(0, 1, med, med / 10000) == 32, "the cap: %g", cs_mesh_trunc_voxels(0, 1, med, med / 10000));
    return 0;
}
