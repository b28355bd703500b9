/* test_mesh: clsplat mesh (#23). Marching tetrahedra on an analytic sphere (the surface within
 * a small fraction of a voxel, closed, manifold, genus 0, facing out, the same in one slab or
 * several), the depth fusion against a CPU reference, and the CLI on the trained demo scene:
 * the mesh against the scene's true surfaces (gen_demo's sphere, box, cylinder and ground disc),
 * read back by assimp, simplified to a budget, bad arguments rejected; and render --depth-maps,
 * its 16-bit median depths back-projected onto the same surfaces. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <png.h>

#include "cli_run.h"
#include "config.h"
#include "fixtures.h"
#include "kernels.h"
#include "mesh.h"
#include "mesh_device.h"
#include "mesh_eval.h"
#include "mesh_focus.h"
#include "mesh_gltf.h"
#include "mesh_raster.h"
#include "mesh_refine.h"
#include "mesh_shell.h"
#include "mesher.h"
#include "outputs.h"
#include "render.h"
#include "run_dir.h"
#include "scene.h"
#include "ref_mesh.h"
#include "test.h"
#include "tsdf.h"
#include "util.h"

/* the contraction written out again (contract.h): grid point Q to world point P, and the
   radial stretch there */
static double ref_uncontract(const cs_contract *ct, const double q[3], double p[3])
{
    double u[3], r1 = 0;
    for (int k = 0; k < 3; k++) u[k] = (q[k] - ct->c[k]) / ct->h[k], r1 = fmax(r1, fabs(u[k])), p[k] = q[k];
    if (ct->s <= 0 || r1 <= 1) return 1;
    double r = ct->s / (1 + ct->s - fmin(r1, 1 + ct->s * (1 - 1.0 / CS_CONTRACT_RMAX)));
    for (int k = 0; k < 3; k++) p[k] = ct->c[k] + ct->h[k] * u[k] * r / r1;
    return r * r / ct->s;
}

/* voxel (x, y, z) of grid G in the world; the radial stretch there */
static double voxel_world(const cs_tsdf_grid *g, int x, int y, int z, double p[3])
{
    double q[3] = {g->origin[0] + g->voxel * x, g->origin[1] + g->voxel * y, g->origin[2] + g->voxel * z};
    return ref_uncontract(&g->ct, q, p);
}

/* a sphere's signed distance (in truncation units, clamped to +-1) written into slab T */
static int fill_sphere(cs_tsdf *t, const float c[3], float radius)
{
    const cs_tsdf_grid *g = &t->g;
    size_t n = (size_t)g->nx * g->ny * t->layers;
    float *d = malloc(n * 4), *w = calloc(n * 4, 4);
    if (!d || !w) return free(d), free(w), cs_fail("out of host memory");
    for (size_t i = 0; i < n; i++) {
        int x = (int)(i % g->nx), y = (int)(i / g->nx % g->ny), z = (int)(i / ((size_t)g->nx * g->ny)) + t->z0;
        double p[3], st = voxel_world(g, x, y, z, p);
        double r = sqrt(pow(p[0] - c[0], 2) + pow(p[1] - c[1], 2) + pow(p[2] - c[2], 2));
        d[i] = (float)fmax(-1, fmin(1, (r - radius) / (g->trunc * st)));
        w[4 * i] = w[4 * i + 1] = w[4 * i + 2] = 0.5f, w[4 * i + 3] = 1.f;
    }
    int rc = cs_buf_write(t->cl, &t->tsdf, 0, n * 4, d) || cs_buf_write(t->cl, &t->colour, 0, n * 16, w);
    free(d), free(w);
    return rc;
}

/* the sphere meshed in slabs of LAYERS layers into M; TRI_ROOM > 0: the memory budget leaves
   room for about that many triangles at the emission, *PASSES counts its passes */
static int sphere_mesh(cs_cl *cl, const cs_kernels *k, const cs_tsdf_grid *g, const float c[3], float radius, int layers,
                       size_t tri_room, int *passes, cs_mesh *m)
{
    cs_soup_vertex *soup = NULL;
    size_t nt = 0, cap = 0;
    *passes = 0;
    for (int z0 = 0; z0 < g->nz - 1; z0 += layers - 1) {
        int L = g->nz - z0 < layers ? g->nz - z0 : layers;
        cs_tsdf t;
        int rc = cs_tsdf_begin(&t, cl, k, g, z0, L) || fill_sphere(&t, c, radius);
        /* the scan's block sums come out of the budget too: a sixteenth of the counts is ample */
        if (tri_room) cl->mem.budget = cl->mem.cur_total + tri_room * CS_TSDF_TRI_BYTES + t.count.bytes / 16 + 65536;
        rc = rc || cs_tsdf_extract(&t, &soup, &nt, &cap);
        cl->mem.budget = (size_t)-1;
        *passes += t.passes;
        cs_tsdf_free(&t);
        if (rc) return free(soup), -1;
    }
    int rc = cs_mesh_weld(soup, nt, m);
    free(soup);
    return rc;
}

/* the test device and the program (SH degree 0: the mesh kernels do not depend on it) */
static int open_device(cs_cl *cl, cs_kernels *k)
{
    cs_kernel_opts ko = {{0, 0, 0, 0}, 0, 0, 0, 0, 0, 0};
    if (test_open_cl(cl)) return -1;
    if (!cs_kernels_build(cl, &ko, k)) return 0;
    cs_cl_close(cl);
    return -1;
}

/* the sphere of centre C and RADIUS meshed on grid G: on the sphere within TOL of the local
   voxel's world size, closed, manifold, genus 0, facing out, the same in slabs and in emission
   passes, and simplified to half */
static int sphere_case(cs_cl *cl, const cs_kernels *k, const cs_tsdf_grid *g, const float c[3], float radius, double tol)
{
    cs_mesh one, three, tight;
    int passes, tight_passes;
    CHECK_OK(sphere_mesh(cl, k, g, c, radius, g->nz, 0, &passes, &one));
    CHECK_OK(sphere_mesh(cl, k, g, c, radius, 13, 0, &passes, &three));
    CHECK_OK(sphere_mesh(cl, k, g, c, radius, g->nz, 5000, &tight_passes, &tight));
    double worst = 0, vol = 0, most_stretch = 1;
    for (size_t v = 0; v < one.nv; v++) {
        const float *p = &one.pos[3 * v];
        double box = 0; /* the vertex's box-distance: its voxels' world size is the voxel x r^2 / S past 1 */
        for (int a = 0; a < 3; a++) box = fmax(box, fabs(p[a] - g->ct.c[a]) / g->ct.h[a]);
        double stretch = g->ct.s > 0 && box > 1 ? box * box / g->ct.s : 1;
        most_stretch = fmax(most_stretch, stretch);
        double off = fabs(sqrt(pow(p[0] - c[0], 2) + pow(p[1] - c[1], 2) + pow(p[2] - c[2], 2)) - radius);
        worst = fmax(worst, off / (g->voxel * stretch));
    }
    for (size_t t = 0; t < one.nt; t++) { /* signed volume: positive when the triangles face out */
        const float *a = &one.pos[3 * one.tri[3 * t]], *b = &one.pos[3 * one.tri[3 * t + 1]], *d = &one.pos[3 * one.tri[3 * t + 2]];
        vol += (a[0] * (b[1] * d[2] - b[2] * d[1]) - a[1] * (b[0] * d[2] - b[2] * d[0]) + a[2] * (b[0] * d[1] - b[1] * d[0])) / 6;
    }
    size_t open, nonman;
    cs_mesh_edge_counts(&one, &open, &nonman);
    long euler = (long)one.nv - (long)(3 * one.nt / 2) + (long)one.nt;
    double true_vol = 4.0 / 3.0 * M_PI * pow(radius, 3);
    printf("  sphere r %.2f (%.1f voxels), contraction %g (voxels up to %.2fx): %zu vertices, %zu triangles, worst "
           "radial error %.4f local voxel, volume %.4f (true %.4f), %zu open / %zu non-manifold edges, Euler %ld; in 3 "
           "slabs %zu vertices %zu triangles\n",
           radius, radius / g->voxel, g->ct.s, most_stretch, one.nv, one.nt, worst, vol, true_vol, open, nonman, euler,
           three.nv, three.nt);
    /* linear interpolation of a sphere's distance: the error is about h^2 / (8 r), 0.004 voxel uncontracted */
    CHECK(worst < tol, "a vertex %.4f local voxel off the sphere", worst);
    CHECK(open == 0 && nonman == 0 && euler == 2, "not a closed genus-0 2-manifold: %zu open, %zu non-manifold, Euler %ld",
          open, nonman, euler);
    CHECK(fabs(vol / true_vol - 1) < 0.01, "volume %.5f, the sphere's %.5f (facing in, or holes)", vol, true_vol);
    CHECK(three.nv == one.nv && three.nt == one.nt, "slabs: %zu/%zu vs one %zu/%zu", three.nv, three.nt, one.nv, one.nt);
    cs_mesh_edge_counts(&three, &open, &nonman);
    CHECK(open == 0 && nonman == 0, "slabs leave %zu open edges, %zu non-manifold", open, nonman);
    /* a budget with room for 5000 triangles: the same mesh, emitted in passes */
    printf("  room for 5000 triangles: %d emission passes, %zu vertices, %zu triangles\n", tight_passes, tight.nv, tight.nt);
    CHECK(tight_passes >= 3 && tight.nv == one.nv && tight.nt == one.nt &&
              !memcmp(tight.pos, one.pos, 12 * one.nv) && !memcmp(tight.tri, one.tri, 12 * one.nt),
          "emitted in %d passes: %zu/%zu vs %zu/%zu", tight_passes, tight.nv, tight.nt, one.nv, one.nt);
    cs_mesh_free(&tight);
    /* the budget: half the triangles, still closed to within meshoptimizer's error */
    float err;
    CHECK_OK(cs_mesh_simplify(&one, one.nt / 2, &err));
    CHECK(one.nt <= three.nt / 2 && one.nt > three.nt / 4, "simplified to %zu of %zu", one.nt, three.nt);
    cs_mesh_free(&one), cs_mesh_free(&three);
    return 0;
}

/* The sphere on a plain grid, then on a contracted one whose box (of random half-sizes) it
   crosses: near the axes it lies in the band past the box, where the voxels are stretched. */
int test_marching_sphere(void)
{
    cs_cl cl;
    cs_kernels k;
    CHECK_OK(open_device(&cl, &k));
    uint64_t rs = test_seed() ^ 0x3e54;
    cs_tsdf_grid g = {40, 37, 35, {-1.f, -0.9f, -0.85f}, 0.05f, 0.2f, 10.f, 0, {{0, 0, 0}, {1, 1, 1}, 0}, 0.f};
    float c[3] = {(float)(-0.05 + 0.1 * test_rand(&rs)), (float)(0.05 * test_rand(&rs)), 0.f}, radius = 0.61f;
    int rc = sphere_case(&cl, &k, &g, c, radius, 0.05);
    cs_tsdf_grid h = g;
    h.ct.s = (float)(0.5 + 0.5 * test_rand(&rs));
    for (int a = 0; a < 3; a++) {
        h.ct.c[a] = c[a];
        h.ct.h[a] = (float)(0.38 + 0.06 * test_rand(&rs)); /* the axes' points lie past the box, the diagonals' inside */
        h.origin[a] = c[a] - h.ct.h[a] * (1 + h.ct.s) - 2 * h.voxel;
    }
    h.nx = (int)ceil(2 * (c[0] - h.origin[0]) / h.voxel) + 1;
    h.ny = (int)ceil(2 * (c[1] - h.origin[1]) / h.voxel) + 1;
    h.nz = (int)ceil(2 * (c[2] - h.origin[2]) / h.voxel) + 1;
    rc = rc || sphere_case(&cl, &k, &h, c, radius, 0.05);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return rc;
}

/* ---- the fusion against a CPU reference --------------------------------------------------- */

/* two fusions of one random depth view into grid G, against the CPU; *TOUCHED / *SKIPPED:
   voxels fused, and voxels under pixels with no surface or one past max_depth; *FAR: fused
   voxels whose grid point is stretched (contracted); *FREE: voxels fused as free space from a
   negative depth (one the depth check dropped with --carve-dropped), *HELD: voxels within the
   truncation of such a depth, left alone */
static int fuse_case(cs_cl *cl, const cs_kernels *k, const cs_tsdf_grid *g, uint64_t *rs, int *touched, int *skipped,
                     int *far, int *free_sp, int *held)
{
    int W = 37, H = 29;
    /* a camera at the origin looking down +z; depths random around 2 (0: none, some past max) */
    cs_view v = {0};
    v.cam.s[0] = v.cam.s[4] = v.cam.s[8] = 1.f;
    v.intr = (cl_float4){{30.f, 31.f, W / 2.f + 0.3f, H / 2.f - 0.2f}};
    v.width = W, v.height = H;
    size_t hw = (size_t)W * H;
    float *depth = malloc(sizeof(float) * 2 * hw), *img = malloc(sizeof(float) * 3 * hw);
    CHECK(depth && img, "out of host memory");
    for (size_t i = 0; i < 2 * hw; i++) {
        double u = test_rand(rs);
        depth[i] = u < 0.1 ? 0.f : u > 0.95 ? 4.f : (float)(1.6 + 0.8 * test_rand(rs));
        if (u >= 0.1 && test_rand(rs) < 0.2) depth[i] = -depth[i]; /* dropped by the check: free space only */
    }
    for (size_t i = 0; i < 3 * hw; i++) img[i] = (float)test_rand(rs);
    cs_renderer r = {0};
    r.cl = cl;
    cs_tsdf t;
    CHECK_OK(cs_buf_alloc(cl, &r.depth_img, CS_MEM_OTHER, 8 * hw, "depth") ||
             cs_buf_alloc(cl, &r.img, CS_MEM_OTHER, 12 * hw, "img") || cs_buf_write(cl, &r.depth_img, 0, 8 * hw, depth) ||
             cs_buf_write(cl, &r.img, 0, 12 * hw, img) || cs_tsdf_begin(&t, cl, k, g, 2, 6));
    CHECK_OK(cs_tsdf_fuse(&t, &r, &v) || cs_tsdf_fuse(&t, &r, &v));
    size_t n = (size_t)g->nx * g->ny * 6;
    float *d = malloc(n * 4), *c = malloc(n * 16);
    CHECK(d && c, "out of host memory");
    CHECK_OK(cs_buf_read(cl, &t.tsdf, 0, n * 4, d) || cs_buf_read(cl, &t.colour, 0, n * 16, c));
    *touched = *skipped = *far = *free_sp = *held = 0;
    for (size_t i = 0; i < n; i++) {
        int x = (int)(i % g->nx), y = (int)(i / g->nx % g->ny), z = (int)(i / ((size_t)g->nx * g->ny)) + 2;
        double p[3], stretch = voxel_world(g, x, y, z, p), trunc = g->trunc * stretch;
        double u = v.intr.s[0] * p[0] / p[2] + v.intr.s[2], vv = v.intr.s[1] * p[1] / p[2] + v.intr.s[3];
        double want_s = 0, want_w = 0;
        if (u >= 0 && vv >= 0 && u < W && vv < H && p[2] <= g->max_depth) {
            size_t px = (size_t)vv * W + (size_t)u;
            int free_only = depth[hw + px] < 0;
            double dd = fabs(depth[hw + px]), sdf = dd - p[2];
            if (!(dd > 0 && dd <= g->max_depth)) (*skipped)++;
            else if (free_only && sdf >= -trunc && sdf <= trunc) (*held)++;
            else if (sdf >= -trunc) want_s = fmin(1, sdf / trunc), want_w = 2 * (sdf > trunc ? 1 + g->carve : 1);
            *free_sp += free_only && want_w > 0;
            if (want_w) {
                for (int ch = 0; ch < 3; ch++)
                    CHECK(fabs(c[4 * i + ch] - img[ch * hw + px]) < 1e-5, "voxel %zu colour %d", i, ch);
            }
        }
        *touched += want_w > 0;
        *far += want_w > 0 && stretch > 1.5;
        CHECK(fabs(d[i] - want_s) < 1e-5 && fabs(c[4 * i + 3] - want_w) < 1e-5, "voxel %zu: %g weight %g, the CPU's %g weight %g", i,
              d[i], c[4 * i + 3], want_s, want_w);
    }
    free(d), free(c), free(depth), free(img);
    cs_tsdf_free(&t);
    cs_buf_free(cl, &r.depth_img), cs_buf_free(cl, &r.img);
    return 0;
}

/* The fusion on a plain grid and on a contracted one (contract.h: the voxels past a box
   around the grid's middle stand for points further away, with a truncation grown by their
   stretch), against the CPU. */
int test_tsdf_fuse(void)
{
    cs_cl cl;
    cs_kernels k;
    CHECK_OK(open_device(&cl, &k));
    uint64_t rs = test_seed() ^ 0xf05e;
    cs_tsdf_grid g = {12, 11, 10, {-0.5f, -0.45f, 1.5f}, 0.1f, 0.25f, 3.2f, 1, {{0, 0, 0}, {1, 1, 1}, 0}, 0.f};
    int touched, skipped, far, free_sp, held;
    int rc = fuse_case(&cl, &k, &g, &rs, &touched, &skipped, &far, &free_sp, &held);
    printf("  %d voxels: %d fused (%d as free space in front of a dropped depth, %d near one left alone), %d under "
           "pixels with no surface or one past max_depth, matching the CPU\n",
           g.nx * g.ny * 6, touched, free_sp, held, skipped);
    CHECK(!rc && touched > g.nx * g.ny * 6 / 4 && skipped > 0 && free_sp > 0 && held > 0,
          "too few voxels fused (%d), skipped (%d), freed (%d) or held (%d) to test", touched, skipped, free_sp, held);
    /* contracted: grid points up to 1.4 box half-sizes out stand for depths to about 2.75; free
       space weighs more (--carve) */
    g.carve = (float)(0.5 + 4 * test_rand(&rs));
    g.ct = (cs_contract){{0.05f, 0.f, 2.0f}, {0.3f, 0.3f, 0.3f}, (float)(0.5 + 0.5 * test_rand(&rs))};
    rc = fuse_case(&cl, &k, &g, &rs, &touched, &skipped, &far, &free_sp, &held);
    printf("  contracted (band %.2f): %d fused, %d of them stretched over 1.5x, %d skipped, matching the CPU\n", g.ct.s,
           touched, far, skipped);
    CHECK(!rc && touched > g.nx * g.ny * 6 / 8 && far > 20, "contracted: too few voxels fused (%d) or stretched (%d)",
          touched, far);
    cs_kernels_release(&k);
    cs_cl_close(&cl);
    return 0;
}

/* ---- the host rasterizer of mesh --psnr ----------------------------------------------------- */

/* ray from the camera centre through pixel centre (PX, PY) against triangle Q (camera space):
   its depth and barycentrics (Moller-Trumbore), or 0 when it misses; AMBIG is set when the hit
   lies within EPS of an edge */
static int ray_hit(const cs_camera *c, double px, double py, const double q[9], double *z, double b[3], int *ambig)
{
    double d[3] = {(px - c->cx) / c->fx, (py - c->cy) / c->fy, 1}, e1[3], e2[3], s[3], h[3], qv[3];
    for (int k = 0; k < 3; k++) e1[k] = q[3 + k] - q[k], e2[k] = q[6 + k] - q[k], s[k] = -q[k];
    h[0] = d[1] * e2[2] - d[2] * e2[1], h[1] = d[2] * e2[0] - d[0] * e2[2], h[2] = d[0] * e2[1] - d[1] * e2[0];
    double a = e1[0] * h[0] + e1[1] * h[1] + e1[2] * h[2];
    if (fabs(a) < 1e-12) return 0;
    double u = (s[0] * h[0] + s[1] * h[1] + s[2] * h[2]) / a;
    qv[0] = s[1] * e1[2] - s[2] * e1[1], qv[1] = s[2] * e1[0] - s[0] * e1[2], qv[2] = s[0] * e1[1] - s[1] * e1[0];
    double v = (d[0] * qv[0] + d[1] * qv[1] + d[2] * qv[2]) / a, t = (e2[0] * qv[0] + e2[1] * qv[1] + e2[2] * qv[2]) / a;
    b[0] = 1 - u - v, b[1] = u, b[2] = v, *z = t;
    const double eps = 1e-3;
    if (fabs(b[0]) < eps || fabs(b[1]) < eps || fabs(b[2]) < eps) *ambig = 1;
    return b[0] >= 0 && b[1] >= 0 && b[2] >= 0;
}

/* the ray-cast colour at (PX, PY) of camera C over NT triangles QC (camera space) coloured RGB, BG
   where none is hit; *AMBIG set on an edge or where two triangles meet in depth; 1 when hit */
static int cast_colour(const cs_camera *c, double px, double py, const double *qc, const uint8_t *rgb, int nt,
                       const float bg[3], double want[3], int *ambig)
{
    double best = INFINITY, zs[8];
    int hits = 0;
    for (int ch = 0; ch < 3; ch++) want[ch] = bg[ch] * 255;
    for (int t = 0; t < nt; t++) {
        double z, b[3];
        zs[t] = INFINITY;
        if (!ray_hit(c, px, py, qc + 9 * t, &z, b, ambig) || z <= 0) continue;
        zs[t] = z, hits++;
        if (z >= best) continue;
        best = z;
        for (int ch = 0; ch < 3; ch++)
            want[ch] = b[0] * rgb[9 * t + ch] + b[1] * rgb[9 * t + 3 + ch] + b[2] * rgb[9 * t + 6 + ch];
    }
    for (int t = 0; t < nt; t++)
        if (zs[t] < INFINITY && zs[t] != best && fabs(zs[t] - best) < 1e-4) *ambig = 1;
    return hits > 0;
}

/* cs_mesh_rasterize against ray casting: random triangles through a random pose, drawn with 1, 2
   and 3 samples a side: each pixel the mean of its samples' colours (the perspective-correct
   blend of the nearest triangle's corners, background where no triangle is hit) within
   rounding; pixels with a sample on an edge or where two triangles meet in depth are left out */
int test_mesh_raster(void)
{
    uint64_t rs = test_seed() ^ 0x7261;
    long checked = 0, covered = 0, mixed = 0;
    for (int round = 0; round < 30; round++) {
        int S = 1 + round % 3;
        cs_camera c;
        memset(&c, 0, sizeof c);
        c.width = 48, c.height = 40, c.fx = 40 + 20 * test_rand(&rs), c.fy = c.fx, c.cx = 24, c.cy = 20;
        double q[4] = {1, 0.3 * test_randn(&rs), 0.3 * test_randn(&rs), 0.3 * test_randn(&rs)}, n = 0;
        for (int k = 0; k < 4; k++) n += q[k] * q[k];
        for (int k = 0; k < 4; k++) q[k] /= sqrt(n);
        cs_quat_to_rot(q, c.R);
        c.t[0] = 0.2 * test_randn(&rs), c.t[1] = 0.2 * test_randn(&rs), c.t[2] = 3;
        enum { NT = 3 };
        cs_mesh m = {0};
        float pos[9 * NT];
        uint8_t rgb[9 * NT];
        uint32_t tri[3 * NT];
        for (int i = 0; i < 9 * NT; i++) pos[i] = (float)(2 * test_rand(&rs) - 1), rgb[i] = (uint8_t)(255 * test_rand(&rs));
        for (int i = 0; i < 3 * NT; i++) tri[i] = (uint32_t)i;
        m.pos = pos, m.rgb = rgb, m.tri = tri, m.nv = 3 * NT, m.nt = NT;
        const float bg[3] = {0.1f, 0.5f, 0.9f};
        cs_image img;
        double cov;
        uint8_t *drawn_px = malloc((size_t)c.width * c.height);
        CHECK(drawn_px != NULL, "out of memory");
        CHECK_OK(cs_mesh_rasterize(&m, &c, bg, S, &img, &cov, drawn_px));
        double qc[9 * NT]; /* corners in camera space */
        for (int v = 0; v < 3 * NT; v++)
            for (int r = 0; r < 3; r++)
                qc[3 * v + r] = c.R[3 * r] * pos[3 * v] + c.R[3 * r + 1] * pos[3 * v + 1] + c.R[3 * r + 2] * pos[3 * v + 2] + c.t[r];
        long drawn = 0;
        for (int y = 0; y < c.height; y++)
            for (int x = 0; x < c.width; x++) {
                double want[3] = {0, 0, 0}, one[3];
                int ambig = 0, hits = 0;
                for (int sy = 0; sy < S; sy++)
                    for (int sx = 0; sx < S; sx++) {
                        hits += cast_colour(&c, x + (sx + 0.5) / S, y + (sy + 0.5) / S, qc, rgb, NT, bg, one, &ambig);
                        for (int ch = 0; ch < 3; ch++) want[ch] += one[ch] / (S * S);
                    }
                const uint8_t *px = img.px + 3 * ((size_t)y * c.width + x);
                drawn += hits;
                if (ambig) continue;
                checked++, covered += hits > 0, mixed += hits > 0 && hits < S * S;
                CHECK(drawn_px[y * c.width + x] == (2 * hits >= S * S && hits > 0),
                      "round %d (%d samples a side) pixel (%d, %d): drawn %d with %d of %d samples on a triangle", round,
                      S, x, y, drawn_px[y * c.width + x], hits, S * S);
                for (int ch = 0; ch < 3; ch++)
                    CHECK(fabs(px[ch] - want[ch]) <= 1.01,
                          "round %d (%d samples a side) pixel (%d, %d) channel %d: %d, ray casting %.2f (%d of %d samples hit)",
                          round, S, x, y, ch, px[ch], want[ch], hits, S * S);
            }
        double want_cov = (double)drawn / ((double)c.width * c.height * S * S);
        CHECK(fabs(cov - want_cov) < 0.02, "coverage %.4f, ray casting %.4f", cov, want_cov);
        free(drawn_px);
        cs_image_free(&img);
    }
    printf("  %ld pixels checked against ray casting, %ld of them on a triangle, %ld partly\n", checked, covered, mixed);
    CHECK(covered > 1000 && checked - covered > 1000 && mixed > 100,
          "too few pixels on (%ld), off (%ld) or partly on (%ld) the triangles", covered, checked - covered, mixed);
    return 0;
}

/* cs_mesh_color_loss's gradient against central differences of the loss, on random triangles
   seen by a random camera: photos all black and all white (every residual of one sign: the
   loss is linear, the differences exact) and a random photo with a weight channel (a few
   entries may straddle a kink of |r|) */
int test_mesh_color_grad(void)
{
    uint64_t rs = test_seed() ^ 0x6772;
    int checked = 0, off = 0, rounds = 0;
    for (int round = 0; round < 12; round++) {
        cs_camera c;
        memset(&c, 0, sizeof c);
        c.width = 40, c.height = 32, c.fx = c.fy = 36, c.cx = 20, c.cy = 16, c.R[0] = c.R[4] = c.R[8] = 1, c.t[2] = 3;
        enum { NT = 4 };
        float pos[9 * NT], col[9 * NT], grad[9 * NT] = {0};
        uint8_t rgb[9 * NT] = {0};
        uint32_t tri[3 * NT];
        for (int i = 0; i < 9 * NT; i++) pos[i] = (float)(2 * test_rand(&rs) - 1), col[i] = (float)(0.2 + 0.6 * test_rand(&rs));
        for (int i = 0; i < 3 * NT; i++) tri[i] = (uint32_t)i;
        cs_mesh m = {.pos = pos, .rgb = rgb, .tri = tri, .nv = 3 * NT, .nt = NT};
        int kind = round % 3, ch = kind == 2 ? 4 : 3;
        cs_image photo = {c.width, c.height, ch, malloc((size_t)c.width * c.height * ch)};
        int32_t *vis = malloc(sizeof(int32_t) * c.width * c.height);
        float *w = malloc(sizeof(float) * 3 * c.width * c.height);
        CHECK(photo.px && vis && w, "out of memory");
        for (int i = 0; i < c.width * c.height * ch; i++)
            photo.px[i] = kind == 0 ? 0 : kind == 1 ? 255 : (uint8_t)(255 * test_rand(&rs));
        CHECK_OK(cs_mesh_visibility(&m, &c, 1, vis, w));
        { /* in bands of rows on several threads: the same buffer */
            int32_t *vis2 = malloc(sizeof(int32_t) * c.width * c.height);
            float *w2 = malloc(sizeof(float) * 3 * c.width * c.height);
            CHECK(vis2 && w2, "out of memory");
            CHECK_OK(cs_mesh_visibility(&m, &c, 3, vis2, w2));
            int same = !memcmp(vis, vis2, sizeof(int32_t) * c.width * c.height);
            for (int p = 0; same && p < c.width * c.height; p++) /* weights are written where a triangle is */
                same = vis[p] < 0 || !memcmp(w + 3 * p, w2 + 3 * p, sizeof(float) * 3);
            CHECK(same, "round %d: 3 threads drew another visibility buffer than 1", round);
            free(vis2), free(w2);
        }
        double cnt;
        cs_mesh_color_loss(&m, col, &photo, vis, w, grad, &cnt);
        if (cnt <= 20) { /* the random triangles missed the view: no round */
            free(photo.px), free(vis), free(w);
            continue;
        }
        rounds++;
        for (int i = 0; i < 9 * NT; i++) {
            const float h = 1e-3f, keep = col[i];
            col[i] = keep + h;
            double lp = cs_mesh_color_loss(&m, col, &photo, vis, w, NULL, NULL);
            col[i] = keep - h;
            double lm = cs_mesh_color_loss(&m, col, &photo, vis, w, NULL, NULL);
            col[i] = keep;
            double fd = (lp - lm) / (2 * h), tol = 2e-3 * fabs(fd) + 2e-6;
            checked++;
            if (fabs(fd - grad[i]) > tol) {
                off++;
                CHECK(kind == 2, "round %d entry %d: gradient %.6g, differences %.6g", round, i, grad[i], fd);
            }
        }
        free(photo.px), free(vis), free(w);
    }
    printf("  %d colour gradient entries against differences, %d off (at a kink of |r|, random photo only)\n", checked, off);
    CHECK(off * 20 <= checked && rounds >= 6, "%d of %d entries off, %d rounds of 12 saw the triangles", off, checked, rounds);
    return 0;
}

/* mesh --focus (mesh_focus.h): training cameras on a ring round a box of opaque Gaussians,
   a room's wall far round them (each part of it seen by a few of the views), see-through
   Gaussians anywhere, and test cameras all looking at one part of the wall: the focus is the box */
int test_mesh_focus(void)
{
    uint64_t rs = test_seed() ^ 0xf0c5;
    enum { NV = 24, NTEST = 13, NBOX = 3000, NWALL = 3000, NCLEAR = 500 };
    cs_scene sc = {0};
    sc.n_cams = NV + NTEST;
    sc.cams = calloc(NV + NTEST, sizeof(cs_camera));
    cs_splats s = {0};
    CHECK(sc.cams && cs_splats_alloc(&s, NBOX + NWALL + NCLEAR, 0, 0) == 0, "out of memory");
    double a0 = 2 * M_PI * test_rand(&rs);
    for (int v = 0; v < NV + NTEST; v++) {
        double a = a0 + 2 * M_PI * v / NV, C[3] = {4 * cos(a), 4 * sin(a), 0.5 + test_rand(&rs)};
        if (v >= NV) /* test views, more than half as many, all looking at one part of the wall */
            C[0] = -2 * cos(a0) + 0.1 * test_randn(&rs), C[1] = -2 * sin(a0) + 0.1 * test_randn(&rs);
        ref_mesh_ring_camera(&sc.cams[v], C);
        sc.cams[v].is_test = v >= NV;
    }
    double lo[3], hi[3];
    for (int k = 0; k < 3; k++) {
        double c = 0.3 * (test_rand(&rs) - 0.5), h = 0.2 + 0.3 * test_rand(&rs);
        lo[k] = c - h, hi[k] = c + h;
    }
    for (int i = 0; i < s.n; i++) {
        float *p = s.means + 3 * i;
        if (i < NBOX) {
            for (int k = 0; k < 3; k++) p[k] = (float)(lo[k] + (hi[k] - lo[k]) * test_rand(&rs));
        } else if (i < NBOX + NWALL) { /* a wall of radius 12 */
            double a = 2 * M_PI * test_rand(&rs);
            p[0] = (float)(12 * cos(a)), p[1] = (float)(12 * sin(a)), p[2] = (float)(4 * test_rand(&rs) - 2);
        } else {
            for (int k = 0; k < 3; k++) p[k] = (float)(10 * test_randn(&rs));
        }
        s.logit_opacity[i] = i < NBOX + NWALL ? (float)(0.1 + 3 * test_rand(&rs)) : (float)(-0.1 - 3 * test_rand(&rs));
    }
    float box[6];
    size_t kept, sampled;
    int rc = cs_mesh_focus_box(&sc, &s, 0.f, 30, CS_MESH_FOCUS_SHARE, box, &kept, &sampled);
    printf("  focus %.3f %.3f %.3f - %.3f %.3f %.3f (the box %.3f %.3f %.3f - %.3f %.3f %.3f), %zu of %zu\n", box[0],
           box[1], box[2], box[3], box[4], box[5], lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], kept, sampled);
    CHECK(rc == 0 && sampled == NBOX + NWALL && kept >= NBOX && kept < NBOX + NWALL / 10, "rc %d, %zu of %zu counted", rc,
          kept, sampled);
    for (int k = 0; k < 3; k++) {
        double e = 0.02 * (hi[k] - lo[k]);
        CHECK(box[k] >= lo[k] - 1e-6 && box[k] < lo[k] + e && box[3 + k] <= hi[k] + 1e-6 && box[3 + k] > hi[k] - e,
              "axis %d: %g - %g, the box %g - %g", k, box[k], box[3 + k], lo[k], hi[k]);
    }
    /* the depth limit short of the box: nothing counts, and the caller keeps the model's box */
    CHECK(cs_mesh_focus_box(&sc, &s, 0.f, 2.5, CS_MESH_FOCUS_SHARE, box, &kept, &sampled) == 1 && kept == 0,
          "a depth limit of 2.5 still counted %zu", kept);
    cs_splats_free(&s);
    free(sc.cams);
    return 0;
}

/* cs_mesh_drop_near: the triangles with a corner nearer than the radius to a camera go (one
   corner is enough; exactly at the radius stays), the vertices only they used with them, the
   rest keep their positions and colours */
int test_mesh_drop_near(void)
{
    uint64_t rs = test_seed() ^ 0xd70;
    const double cam[6] = {0, 0, 0, 100, 0, 0}; /* the second far from every corner */
    const double r = 0.5 + test_rand(&rs);
    enum { NT = 5 };
    /* corner 0 of each triangle at these distances from camera 0 (along a random direction),
       the others 3 units further out */
    const double d0[NT] = {0.2 * r, 0.99 * r, r, 2 * r, 3 * r};
    cs_mesh m = {0};
    m.nv = 3 * NT, m.nt = NT;
    m.pos = malloc(12 * m.nv), m.rgb = malloc(3 * m.nv), m.tri = malloc(12 * m.nt);
    CHECK(m.pos && m.rgb && m.tri, "out of memory");
    for (int t = 0; t < NT; t++) {
        double u[3] = {test_randn(&rs), test_randn(&rs), test_randn(&rs)}, n = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < 3; c++)
                m.pos[9 * t + 3 * k + c] = (float)(u[c] / n * (d0[t] + 3 * k) + (k == 2 && c == 1 ? 1 : 0));
        for (int k = 0; k < 9; k++) m.rgb[9 * t + k] = (uint8_t)(10 * t + k);
        for (int k = 0; k < 3; k++) m.tri[3 * t + k] = (uint32_t)(3 * t + k);
    }
    /* float rounding of the corner at exactly r: count it by the distance as stored */
    const float *p2 = m.pos + 18;
    int at_r_kept = p2[0] * (double)p2[0] + p2[1] * (double)p2[1] + p2[2] * (double)p2[2] >= r * r;
    size_t dropped = 0;
    CHECK_OK(cs_mesh_drop_near(&m, cam, 2, r, &dropped));
    size_t want = 2 + !at_r_kept;
    CHECK(dropped == want && m.nt == NT - want && m.nv == 3 * m.nt, "dropped %zu (want %zu), left %zu triangles, %zu vertices",
          dropped, want, m.nt, m.nv);
    for (size_t t = 0; t < m.nt; t++) { /* the kept ones in order, unchanged */
        int src = (int)(NT - m.nt + t);
        for (int k = 0; k < 3; k++) {
            uint32_t v = m.tri[3 * t + k];
            double dx = m.pos[3 * v], dy = m.pos[3 * v + 1], dz = m.pos[3 * v + 2];
            CHECK(m.rgb[3 * v] == (uint8_t)(10 * src + 3 * k) && (k || sqrt(dx * dx + dy * dy + dz * dz) >= r - 1e-5),
                  "triangle %zu corner %d: colour %d, distance %g", t, k, m.rgb[3 * v], sqrt(dx * dx + dy * dy + dz * dz));
        }
    }
    cs_mesh_free(&m);
    return 0;
}

/* cs_mesh_keep_largest on four pieces in a shuffled order: a tetrahedron (4 triangles), a quad
   (2), two lone triangles; keeping 1, 2 and 3 (the lone two tie: both kept) */
int test_mesh_components(void)
{
    uint64_t rs = test_seed() ^ 0x636f;
    /* vertices 0-3 tetrahedron, 4-7 quad, 8-10 and 11-13 the lone triangles */
    static const uint32_t tris[8][3] = {{0, 1, 2}, {0, 3, 1}, {1, 3, 2}, {2, 3, 0}, {4, 5, 6}, {4, 6, 7}, {8, 9, 10}, {11, 12, 13}};
    static const int piece[8] = {0, 0, 0, 0, 1, 1, 2, 3};
    const size_t want_tris[3] = {4, 6, 8}, want_verts[3] = {4, 8, 14};
    for (int keep = 1; keep <= 3; keep++) {
        cs_mesh m = {0};
        float pos[14 * 3];
        uint8_t rgb[14 * 3];
        uint32_t perm[14], order[8], tri[24];
        for (int v = 0; v < 14; v++) perm[v] = (uint32_t)v;
        for (int v = 13; v > 0; v--) {
            int j = (int)(test_rand(&rs) * (v + 1));
            uint32_t x = perm[v];
            perm[v] = perm[j], perm[j] = x;
        }
        for (int t = 0; t < 8; t++) order[t] = (uint32_t)t;
        for (int t = 7; t > 0; t--) {
            int j = (int)(test_rand(&rs) * (t + 1));
            uint32_t x = order[t];
            order[t] = order[j], order[j] = x;
        }
        /* vertex v is stored at perm[v], at position (v, v * v, piece) */
        for (int t = 0; t < 8; t++)
            for (int k = 0; k < 3; k++) {
                uint32_t v = tris[order[t]][k];
                tri[3 * t + k] = perm[v];
                pos[3 * perm[v]] = (float)v, pos[3 * perm[v] + 1] = (float)(v * v), pos[3 * perm[v] + 2] = (float)piece[order[t]];
                rgb[3 * perm[v]] = rgb[3 * perm[v] + 1] = rgb[3 * perm[v] + 2] = (uint8_t)v;
            }
        m.pos = malloc(sizeof pos), m.rgb = malloc(sizeof rgb), m.tri = malloc(sizeof tri), m.nv = 14, m.nt = 8;
        memcpy(m.pos, pos, sizeof pos), memcpy(m.rgb, rgb, sizeof rgb), memcpy(m.tri, tri, sizeof tri);
        size_t comps = 0;
        CHECK_OK(cs_mesh_keep_largest(&m, (size_t)keep, &comps));
        CHECK(comps == 4 && m.nt == want_tris[keep - 1] && m.nv == want_verts[keep - 1],
              "keep %d: %zu pieces, %zu triangles, %zu vertices", keep, comps, m.nt, m.nv);
        for (size_t t = 0; t < m.nt; t++) {
            int p = (int)m.pos[3 * m.tri[3 * t] + 2];
            CHECK(p < keep || (keep == 3 && p == 3), "keep %d: a triangle of piece %d kept", keep, p);
            for (int k = 0; k < 3; k++) {
                const float *x = &m.pos[3 * m.tri[3 * t + k]];
                CHECK(x[1] == x[0] * x[0] && m.rgb[3 * m.tri[3 * t + k]] == (uint8_t)x[0] && (int)x[2] == p,
                      "keep %d: a corner moved or lost its colour", keep);
            }
        }
        cs_mesh_free(&m);
    }
    return 0;
}

/* ---- the CLI on the demo scene ------------------------------------------------------------ */

/* distance from P to gen_demo's surfaces: ground disc, sphere, box, cylinder (tools/gen_demo.c) */
static double demo_distance(const double p[3])
{
    double rho = hypot(p[0], p[1]);
    double best = rho <= 1.25 ? fabs(p[2] + 0.5) : hypot(rho - 1.25, p[2] + 0.5);
    best = fmin(best, fabs(sqrt(pow(p[0] - 0.35, 2) + pow(p[1] - 0.2, 2) + p[2] * p[2]) - 0.45));
    double lo[3] = {-0.75, -0.65, -0.5}, hi[3] = {-0.15, 0.05, 0.1}, out = 0, in = INFINITY;
    for (int k = 0; k < 3; k++) {
        double e = fmax(lo[k] - p[k], fmax(0, p[k] - hi[k]));
        out += e * e;
        in = fmin(in, fmin(p[k] - lo[k], hi[k] - p[k]));
    }
    best = fmin(best, out > 0 ? sqrt(out) : in);
    double r = hypot(p[0] - 0.4, p[1] + 0.55), dz = fmax(-0.5 - p[2], fmax(0, p[2] - 0.5));
    double side = r > 0.2 || dz > 0 ? hypot(fmax(0, r - 0.2), dz) : fmin(0.2 - r, 0.5 - p[2]);
    if (r > 0.2 && dz == 0) side = r - 0.2;
    return fmin(best, side);
}

/* points on the surfaces every camera sees well: the sphere's and cylinder's upper halves, the
   box top and the cylinder cap, the ground ring clear of the objects */
static int visible_samples(double *pts, int n, uint64_t *rs)
{
    int m = 0;
    while (m < n) {
        double u = test_rand(rs), a = 2 * M_PI * test_rand(rs), b = test_rand(rs), *p = &pts[3 * m];
        if (u < 0.3) { /* sphere, z > 0.1 */
            double z = 0.1 + 0.35 * b, s = sqrt(0.45 * 0.45 - z * z);
            p[0] = 0.35 + s * cos(a), p[1] = 0.2 + s * sin(a), p[2] = z;
        } else if (u < 0.45) { /* box top */
            p[0] = -0.75 + 0.6 * b, p[1] = -0.65 + 0.7 * test_rand(rs), p[2] = 0.1;
        } else if (u < 0.55) { /* cylinder side above z = 0 and its cap */
            if (b < 0.5) p[0] = 0.4 + 0.2 * cos(a), p[1] = -0.55 + 0.2 * sin(a), p[2] = b;
            else p[0] = 0.4 + 0.2 * sqrt(test_rand(rs)) * cos(a), p[1] = -0.55 + 0.2 * sqrt(test_rand(rs)) * sin(a), p[2] = 0.5;
        } else { /* ground between radius 0.95 and 1.2 */
            double r = 0.95 + 0.25 * b;
            p[0] = r * cos(a), p[1] = r * sin(a), p[2] = -0.5;
        }
        m++;
    }
    return m;
}

/* reads the PLY clsplat mesh writes (header as written, little-endian) */
static int read_mesh_ply(const char *path, cs_mesh *m)
{
    size_t len;
    char *d = cs_read_file(path, &len);
    memset(m, 0, sizeof *m);
    if (!d) return -1;
    char *body = strstr(d, "end_header\n");
    long nv = 0, nt = 0;
    char *pv = strstr(d, "element vertex "), *pf = strstr(d, "element face ");
    if (!body || !pv || !pf || sscanf(pv, "element vertex %ld", &nv) != 1 || sscanf(pf, "element face %ld", &nt) != 1)
        return free(d), cs_fail("%s: not clsplat's mesh PLY", path);
    body += 11;
    if ((size_t)(body - d) + (size_t)nv * 15 + (size_t)nt * 13 != len) return free(d), cs_fail("%s: size", path);
    m->nv = (size_t)nv, m->nt = (size_t)nt;
    m->pos = malloc(12 * (m->nv + 1)), m->rgb = malloc(3 * (m->nv + 1)), m->tri = malloc(12 * (m->nt + 1));
    for (size_t v = 0; v < m->nv; v++) memcpy(&m->pos[3 * v], body + 15 * v, 12), memcpy(&m->rgb[3 * v], body + 15 * v + 12, 3);
    char *f = body + 15 * m->nv;
    for (size_t t = 0; t < m->nt; t++) {
        int corners = f[13 * t];
        if (corners != 3) return free(d), cs_mesh_free(m), cs_fail("%s: face %zu has %d corners", path, t, corners);
        memcpy(&m->tri[3 * t], f + 13 * t + 1, 12);
        for (int k = 0; k < 3; k++)
            if (m->tri[3 * t + k] >= m->nv) return free(d), cs_mesh_free(m), cs_fail("%s: face %zu index out of range", path, t);
    }
    free(d);
    return 0;
}

/* clsplat's .glb read back by this test's own parser (the glTF 2.0 layout: header, JSON chunk,
   BIN chunk; accessors through buffer views), independent of the writer */
static int read_mesh_glb(const char *path, cs_mesh *m, json_t **doc_out)
{
    size_t len;
    uint8_t *d = (uint8_t *)cs_read_file(path, &len);
    memset(m, 0, sizeof *m);
    uint32_t h[5];
    if (!d || len < 28) return free(d), cs_fail("%s: too short", path);
    memcpy(h, d, 20);
    if (h[0] != 0x46546C67 || h[1] != 2 || h[2] != len || h[4] != 0x4E4F534A || h[3] % 4)
        return free(d), cs_fail("%s: glb header (magic %08x, version %u, length %u of %zu)", path, h[0], h[1], h[2], len);
    uint32_t bin_len, bin_type;
    size_t bin_at = 20 + h[3] + 8;
    memcpy(&bin_len, d + 20 + h[3], 4), memcpy(&bin_type, d + 24 + h[3], 4);
    if (bin_type != 0x004E4942 || bin_at + bin_len != len) return free(d), cs_fail("%s: BIN chunk", path);
    json_error_t e;
    json_t *doc = json_loadb((const char *)d + 20, h[3], 0, &e);
    if (!doc) return free(d), cs_fail("%s: JSON chunk: %s", path, e.text);
    json_t *prim = json_array_get(json_object_get(json_array_get(json_object_get(doc, "meshes"), 0), "primitives"), 0);
    json_t *attr = json_object_get(prim, "attributes");
    int acc_id[3] = {(int)json_integer_value(json_object_get(attr, "POSITION")),
                     (int)json_integer_value(json_object_get(attr, "COLOR_0")),
                     (int)json_integer_value(json_object_get(prim, "indices"))};
    const uint8_t *at[3];
    size_t count[3];
    for (int k = 0; k < 3; k++) {
        json_t *a = json_array_get(json_object_get(doc, "accessors"), (size_t)acc_id[k]);
        json_t *v = json_array_get(json_object_get(doc, "bufferViews"), (size_t)json_integer_value(json_object_get(a, "bufferView")));
        size_t off = (size_t)json_integer_value(json_object_get(v, "byteOffset")), n = (size_t)json_integer_value(json_object_get(a, "count"));
        int type = (int)json_integer_value(json_object_get(a, "componentType"));
        size_t bytes = k == 0 ? 12 * n : k == 1 ? 8 * n : 4 * n;
        if (type != (k == 0 ? 5126 : k == 1 ? 5123 : 5125) || off + bytes > bin_len ||
            (size_t)json_integer_value(json_object_get(v, "byteLength")) != bytes)
            return json_decref(doc), free(d), cs_fail("%s: accessor %d", path, k);
        at[k] = d + bin_at + off, count[k] = n;
    }
    m->nv = count[0], m->nt = count[2] / 3;
    m->pos = malloc(12 * (m->nv + 1)), m->rgb = malloc(3 * (m->nv + 1)), m->tri = malloc(12 * (m->nt + 1));
    memcpy(m->pos, at[0], 12 * m->nv), memcpy(m->tri, at[2], 12 * m->nt);
    for (size_t v = 0; v < m->nv; v++) /* linear 16-bit to sRGB bytes, by the sRGB curve */
        for (int c = 0; c < 3; c++) {
            uint16_t u;
            memcpy(&u, at[1] + 8 * v + 2 * c, 2);
            double l = u / 65535.0, e = l <= 0.0031308 ? 12.92 * l : 1.055 * pow(l, 1 / 2.4) - 0.055;
            m->rgb[3 * v + c] = (uint8_t)lrint(255 * e);
        }
    free(d);
    if (doc_out) *doc_out = doc;
    else json_decref(doc);
    return count[1] == count[0] ? 0 : (cs_mesh_free(m), cs_fail("%s: %zu colours for %zu vertices", path, count[1], count[0]));
}

static int read_mesh(const char *path, cs_mesh *m)
{
    return strstr(path, ".glb") ? read_mesh_glb(path, m, NULL) : read_mesh_ply(path, m);
}

/* accuracy (area-weighted distance of the triangles to the true surfaces, and the area within TOL),
   completeness (distance of visible true points to the nearest vertex) */
static void chamfer(const cs_mesh *m, double tol, uint64_t *rs, double *acc, double *within, double *comp)
{
    double area = 0, sum = 0, good = 0;
    for (size_t t = 0; t < m->nt; t++) {
        const float *a = &m->pos[3 * m->tri[3 * t]], *b = &m->pos[3 * m->tri[3 * t + 1]], *c = &m->pos[3 * m->tri[3 * t + 2]];
        double e1[3], e2[3], ctr[3];
        for (int k = 0; k < 3; k++) e1[k] = b[k] - a[k], e2[k] = c[k] - a[k], ctr[k] = (a[k] + b[k] + c[k]) / 3;
        double cr = sqrt(pow(e1[1] * e2[2] - e1[2] * e2[1], 2) + pow(e1[2] * e2[0] - e1[0] * e2[2], 2) +
                         pow(e1[0] * e2[1] - e1[1] * e2[0], 2)) / 2;
        double dist = demo_distance(ctr);
        area += cr, sum += cr * dist, good += dist <= tol ? cr : 0;
    }
    *acc = sum / area, *within = good / area;
    enum { NS = 1500 };
    double *pts = malloc(sizeof(double) * 3 * NS), s = 0;
    visible_samples(pts, NS, rs);
    for (int i = 0; i < NS; i++) {
        double best = INFINITY;
        for (size_t v = 0; v < m->nv; v++)
            best = fmin(best, pow(m->pos[3 * v] - pts[3 * i], 2) + pow(m->pos[3 * v + 1] - pts[3 * i + 1], 2) +
                                  pow(m->pos[3 * v + 2] - pts[3 * i + 2], 2));
        s += sqrt(best);
    }
    *comp = s / NS;
    free(pts);
}

/* a 16-bit grey PNG into *PX (host order); -1 when it is not one */
static int read_png16(const char *path, int *w, int *h, uint16_t **px)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    *px = NULL;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        fclose(f);
        free(*px);
        return -1;
    }
    png_init_io(png, f);
    png_read_png(png, info, PNG_TRANSFORM_SWAP_ENDIAN, NULL);
    int ok = png_get_bit_depth(png, info) == 16 && png_get_color_type(png, info) == PNG_COLOR_TYPE_GRAY;
    *w = (int)png_get_image_width(png, info), *h = (int)png_get_image_height(png, info);
    png_bytepp rows = png_get_rows(png, info);
    *px = ok ? malloc(sizeof(uint16_t) * (size_t)*w * *h) : NULL;
    for (int y = 0; *px && y < *h; y++) memcpy(*px + (size_t)y * *w, rows[y], (size_t)*w * 2);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(f);
    return *px ? 0 : -1;
}

/* `render --depth-maps` on the trained demo: every training view's median depth, back-projected
   through its camera, lands on gen_demo's surfaces */
static int check_depth_maps(const char *dir, const char *scene, const char *out)
{
    char log[800], p[900];
    snprintf(log, sizeof log, "%s/render.log", dir);
    CHECK(cli_run("", log, "render -m %s --split train --depth-maps -o %s/depth", out, dir) == 0, "render --depth-maps, see %s",
          log);
    snprintf(p, sizeof p, "%s/depth/depth_scale.json", dir);
    json_error_t je;
    json_t *j = json_load_file(p, 0, &je);
    double scale = j ? json_number_value(json_object_get(j, "scale")) : 0;
    json_decref(j);
    CHECK(scale > 0, "no scale in %s", p);
    cs_scene sc;
    CHECK_OK(load_dataset(scene, false, 0, &sc));
    long covered = 0, near = 0, within = 0;
    for (int c = 0; c < sc.n_cams; c++) {
        const cs_camera *cam = &sc.cams[c];
        char stem[256];
        cs_camera_stem(cam, stem, sizeof stem);
        snprintf(p, sizeof p, "%s/depth/%s_depth_median.png", dir, stem);
        int w, h;
        uint16_t *d;
        CHECK(read_png16(p, &w, &h, &d) == 0 && w == cam->width && h == cam->height, "%s: not a %dx%d 16-bit PNG", p,
              cam->width, cam->height);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double z = d[(size_t)y * w + x] * scale, pc[3], pw[3];
                if (z <= 0) continue;
                pc[0] = (x + 0.5 - cam->cx) / cam->fx * z, pc[1] = (y + 0.5 - cam->cy) / cam->fy * z, pc[2] = z;
                for (int k = 0; k < 3; k++) /* world = R^T (camera - t) */
                    pw[k] = cam->R[k] * (pc[0] - cam->t[0]) + cam->R[3 + k] * (pc[1] - cam->t[1]) +
                            cam->R[6 + k] * (pc[2] - cam->t[2]);
                double e = demo_distance(pw);
                covered++, near += e < 0.05, within += e < 0.1;
            }
        free(d);
    }
    cs_scene_free(&sc);
    printf("  render --depth-maps: %ld pixels with a median depth, back-projected %.1f%% within 0.05 of the true "
           "surfaces, %.1f%% within 0.1\n", covered, 100.0 * near / (covered ? covered : 1),
           100.0 * within / (covered ? covered : 1));
    /* measured on PoCL (400 iterations at 96x72): 63.6% within 0.05, 77.2% within 0.1 (each
       Gaussian's centre depth: a short training's Gaussians are large) */
    CHECK(covered > 0 && within > 0.65 * covered, "%ld of %ld back-projected depths within 0.1", within, covered);
    return 0;
}

/* mesh --psnr, as LOG printed it: the drawings of every test view written, and well above
   the PSNR of drawing nothing (the background alone) */
static int mesh_psnr(const char *dir, const char *scene, const char *log)
{
    double psnr = 0, covered = 0;
    int views = 0;
    const char *at = log ? strstr(log, "mesh: drawn at ") : NULL;
    CHECK(at && sscanf(at, "mesh: drawn at %d test views: PSNR %lf dB (lowest %*f), %lf%%", &views, &psnr, &covered) == 3,
          "no PSNR line in the mesh log");
    cs_scene sc;
    CHECK_OK(load_dataset(scene, true, 0, &sc));
    int tests = cs_scene_count(&sc, 1), files = 0, lines = 0;
    for (int i = 0; i < sc.n_cams; i++) {
        char p[1400], stem[256], line[300];
        cs_camera_stem(&sc.cams[i], stem, sizeof stem);
        snprintf(p, sizeof p, "%s/drawn/%s.png", dir, stem);
        files += sc.cams[i].is_test && cs_file_exists(p);
        snprintf(line, sizeof line, "mesh: %s: PSNR ", sc.cams[i].name); /* --renders prints each view's */
        lines += sc.cams[i].is_test && strstr(log, line);
    }
    cs_mesh none = {0};
    cs_mesh_eval_result floor;
    int rc = cs_mesh_eval(&none, &sc, NULL, 1, NULL, &floor);
    cs_scene_free(&sc);
    CHECK_OK(rc);
    printf("  mesh --psnr: %d test views, PSNR %.2f dB, %.1f%% covered; drawing nothing: %.2f dB\n", views, psnr, covered,
           floor.psnr);
    CHECK(views == tests && files == tests && lines == tests, "%d views compared, %d drawings, %d lines, %d test views",
          views, files, lines, tests);
    /* measured on PoCL: 20.6 dB against 12.6 for the background alone, 56% covered */
    CHECK(psnr > floor.psnr + 5 && covered > 40 && covered < 80, "PSNR %.2f (nothing: %.2f), %.1f%% covered", psnr,
          floor.psnr, covered);
    return 0;
}

/* the surfaces every camera sees from several sides (everything above z = 0: the sphere's upper
   half, the box top, the cylinder's upper half and cap) are closed: no edge of one triangle
   only lies on them. Open edges are at the disc's rim, under the objects, and around pieces
   inside the objects (where a view's depth ran past a surface), mostly 0.05 and more from the truth:
   PoCL, 8 trainings (optim.seed 1-7 and the test's own): 41-133 open edges above z = 0, none
   within 0.03; one CI run found 4 within 0.03. A few such edges are a piece near a surface, not a
   hole in one; removing every 2000th triangle (105 holes) gives 52, a seam between slabs or a
   failed weld hundreds, so up to 8 are let through. */
static int closed_where_seen(const cs_mesh *m)
{
    cs_mesh_edge_list e;
    CHECK_OK(cs_mesh_open_edges(m, &e));
    size_t on = 0, above = 0;
    for (size_t i = 0; i < e.n; i++) {
        const float *a = &m->pos[3 * e.v[2 * i]], *b = &m->pos[3 * e.v[2 * i + 1]];
        double mid[3] = {(a[0] + b[0]) / 2.0, (a[1] + b[1]) / 2.0, (a[2] + b[2]) / 2.0};
        if (mid[2] <= 0) continue;
        above++;
        on += demo_distance(mid) < 0.03;
    }
    printf("  open edges: %zu, %zu above z = 0, %zu of them within 0.03 of a true surface\n", e.n, above, on);
    free(e.v);
    CHECK(on <= 8, "%zu open edges on the seen surfaces above z = 0", on);
    return 0;
}

/* the test PSNR and the share of pixels covered (COVERED may be NULL) on the "mesh: drawn at" line of a
   mesh log's TEXT (NULL: none); 1 when the line is there and reads */
static int drawn_psnr(const char *text, double *psnr, double *covered)
{
    double c = 0;
    const char *at = text ? strstr(text, "mesh: drawn at ") : NULL;
    int ok = at && sscanf(at, "mesh: drawn at %*d test views: PSNR %lf dB (lowest %*f), %lf%%", psnr, &c) == 2;
    if (covered) *covered = c;
    return ok;
}

/* mesh --refine: the vertex colours fitted to the training photos draw the test views better
   than the fused colours, at the same 20k triangles (PoCL, 96x72: 21.5 -> 22.4 dB) */
static int refine_gain(const char *dir, const char *run)
{
    double psnr[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char log[800];
        snprintf(log, sizeof log, "%s/refine%d.log", dir, k);
        CHECK(cli_run("", log, "mesh -m %s --max-triangles 20000 --psnr -o %s/refine%d.ply%s", run, dir, k,
                      k ? " --refine 200 --refine-geometry 0" : "") == 0, "mesh failed, see %s", log);
        char *text = cs_read_file(log, NULL);
        int ok = drawn_psnr(text, &psnr[k], NULL);
        if (k) ok = ok && strstr(text, "vertex colours fitted to the photos over 200 views");
        ok = ok && !strstr(text, "background shell"); /* a Blender scene gets none by default */
        free(text);
        CHECK(ok, "no PSNR (or refinement) line in %s", log);
    }
    printf("  mesh --max-triangles 20000: %.2f dB; with --refine 200: %.2f dB\n", psnr[0], psnr[1]);
    CHECK(psnr[1] > psnr[0] + 0.3, "the refinement gained %.2f dB", psnr[1] - psnr[0]);
    return 0;
}

/* the model's exposure.json (optim.exposure), written here: every training view's photo taken
   under a swap of the colour channels (red from green, green from blue, blue from red). mesh
   says it read every view's; --psnr draws the test views under the blend (the same swap), so the
   fused colours read worse than with --no-exposure; --refine fits the colours whose swap matches
   the photos, so the PSNR under it comes back (PoCL: see the printed line) */
static int exposure_swap(const char *dir, const char *scene, const char *run)
{
    cs_scene sc;
    CHECK_OK(load_dataset(scene, true, 0, &sc));
    json_t *o = json_object();
    int train = 0;
    for (int i = 0; i < sc.n_cams; i++)
        if (!sc.cams[i].is_test)
            train++, json_object_set_new(o, sc.cams[i].name, json_pack("[[ffff][ffff][ffff]]", 0., 1., 0., 0., 0., 0.,
                                                                       1., 0., 1., 0., 0., 0.));
    cs_scene_free(&sc);
    char path[1400], says[1600];
    int it, rc = cs_run_dir_latest_ply(run, path, sizeof path, &it); /* beside the PLY mesh reads */
    char *slash = strrchr(path, '/');
    if (!rc && slash) snprintf(slash + 1, sizeof path - (size_t)(slash + 1 - path), "exposure.json");
    if (!rc) rc = cs_write_json(path, o);
    json_decref(o);
    CHECK_OK(rc);
    snprintf(says, sizeof says, "(%d of %d training views' transforms from %s)", train, train, path);
    const char *args[3] = {" --no-exposure", "", " --refine 200 --refine-geometry 0"};
    double psnr[3] = {0, 0, 0};
    for (int k = 0; k < 3 && !rc; k++) {
        char log[800];
        snprintf(log, sizeof log, "%s/exposure%d.log", dir, k);
        rc = cli_run("", log, "mesh -m %s --max-triangles 20000 --psnr -o %s/exposure%d.ply%s", run, dir, k, args[k]);
        char *text = cs_read_file(log, NULL);
        if (rc || !drawn_psnr(text, &psnr[k], NULL) || !strstr(text, says) != !k)
            fprintf(stderr, "  mesh%s: exit %d, %s \"%s\" (see %s)\n", args[k], rc, k ? "no" : "with", says, log), rc = 1;
        free(text);
    }
    remove(path); /* the run's later meshes without it */
    CHECK(!rc, "(above)");
    printf("  channels swapped in every photo's exposure: %.2f dB with --no-exposure, %.2f under the swap, %.2f with "
           "--refine 200 under it\n", psnr[0], psnr[1], psnr[2]);
    CHECK(psnr[1] < psnr[0] - 2 && psnr[2] > psnr[1] + 2, "the swap did not lower the fused colours' PSNR, or the "
          "refinement did not bring it back");
    return 0;
}

/* mesh --refine 200 (then the positions over twice as many views, the default): moving the
   vertices too draws the test views better than fitting the colours alone over as many views,
   and brings the surface nearer gen_demo's true one (area-weighted distance of the triangles'
   centres). PoCL, 96x72, 20k triangles: 21.47 -> 25.40 dB, accuracy 0.0483 -> 0.0387,
   completeness 0.0285 -> 0.0225. The second run also has --profile, which must list both stages' kernels */
static int geometry_gain(const char *dir, const char *run, uint64_t *rs)
{
    double psnr[2] = {0, 0}, acc[2], within[2], comp[2];
    for (int k = 0; k < 2; k++) {
        char log[800], path[800];
        snprintf(log, sizeof log, "%s/geom%d.log", dir, k);
        snprintf(path, sizeof path, "%s/geom%d.ply", dir, k);
        CHECK(cli_run("", log, "mesh -m %s --max-triangles 20000 --psnr -o %s %s", run, path,
                      k ? "--refine 200 --profile" : "--refine 600 --refine-geometry 0") == 0, "mesh failed, see %s", log);
        char *text = cs_read_file(log, NULL);
        int ok = drawn_psnr(text, &psnr[k], NULL);
        /* --profile: both stages' kernels timed, a view each */
        const char *prof = text ? strstr(text, "mesh: the refinement's kernels") : NULL;
        int timed = prof && strstr(prof, "mesh_cover") && strstr(prof, "mesh_aa_fwd") && strstr(prof, "mesh_pos_adam");
        /* a Blender scene's geometry step */
        ok = ok && (!k || strstr(text, "(step 0.05 mean edges, --refine-step to choose)"));
        free(text);
        CHECK(ok, "no PSNR line, or not the Blender scene's step, in %s", log);
        CHECK(!k || timed, "--profile printed no kernel times for both stages in %s", log);
        cs_mesh m = {0};
        CHECK_OK(read_mesh(path, &m));
        uint64_t r = *rs; /* the same samples for both */
        chamfer(&m, 0.03, &r, &acc[k], &within[k], &comp[k]);
        cs_mesh_free(&m);
    }
    printf("  --refine 600 --refine-geometry 0: %.2f dB, accuracy %.4f (%.1f%% within 0.03), completeness %.4f; "
           "--refine 200 (positions over 400 more): %.2f dB, accuracy %.4f (%.1f%%), completeness %.4f\n", psnr[0], acc[0], 100 * within[0],
           comp[0], psnr[1], acc[1], 100 * within[1], comp[1]);
    CHECK(psnr[1] > psnr[0] + 1.5 && acc[1] < acc[0] - 0.003, "the geometry stage: %.2f -> %.2f dB, accuracy %.4f -> %.4f", psnr[0],
          psnr[1], acc[0], acc[1]);
    return 0;
}

/* the PSNR line of mesh log LOG */
static int log_psnr(const char *log, double *psnr)
{
    char *text = cs_read_file(log, NULL);
    int ok = drawn_psnr(text, psnr, NULL);
    free(text);
    return ok ? 0 : cs_fail("no PSNR line in %s", log);
}

/* mesh --refine-samples 2: the refinement fits the drawing --psnr-samples 2 judges (each pixel
   the mean of 2 x 2 samples), so that drawing reads better than after fitting the pixels'
   centres (PoCL, 96x72, 20k triangles, --refine 200 with its 400 geometry views: 26.42 ->
   27.84 dB; at the centres alone 25.42 -> 24.89) */
static int samples_gain(const char *dir, const char *run)
{
    double psnr[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        char log[800];
        snprintf(log, sizeof log, "%s/samples%d.log", dir, k);
        CHECK(cli_run("", log, "mesh -m %s --max-triangles 20000 --refine 200 --psnr-samples 2 -o %s/samples%d.ply%s", run,
                      dir, k, k ? " --refine-samples 2" : "") == 0 && log_psnr(log, &psnr[k]) == 0,
              "mesh failed, see %s", log);
        char *text = cs_read_file(log, NULL);
        int said = text && strstr(text, "(each pixel the mean of 2 x 2 samples) over 200 views");
        free(text);
        CHECK(!k == !said, "%s: the refinement's samples %ssaid", log, k ? "not " : "");
    }
    printf("  --refine 200, drawn with 2 x 2 samples a pixel: %.2f dB fitted at the centres, %.2f with --refine-samples 2\n",
           psnr[0], psnr[1]);
    CHECK(psnr[1] > psnr[0] + 0.5, "--refine-samples 2 gained %.2f dB", psnr[1] - psnr[0]);
    return 0;
}

/* mesh --from: clsplat's own mesh (the --grid 100 slabs above) taken back in place of the fusion
   writes the same file and is drawn by --psnr; the fusion's options and a PLY without faces are
   refused */
static int from_mesh(const char *dir, const char *run)
{
    char log[800], a[800], b[800];
    snprintf(log, sizeof log, "%s/from.log", dir);
    snprintf(a, sizeof a, "%s/slabs.ply", dir);
    snprintf(b, sizeof b, "%s/from.ply", dir);
    CHECK(cli_run("", log, "mesh -m %s --from %s --psnr -o %s", run, a, b) == 0, "mesh --from failed, see %s", log);
    double psnr = 0;
    CHECK(log_psnr(log, &psnr) == 0 && psnr > 15, "mesh --from: PSNR %.2f dB (%s)", psnr, cs_last_error());
    size_t la, lb;
    char *fa = cs_read_file(a, &la), *fb = cs_read_file(b, &lb);
    int same = fa && fb && la == lb && !memcmp(fa, fb, la);
    free(fa), free(fb);
    CHECK(same, "mesh --from %s wrote a different %s", a, b);
    char *text = cs_read_file(log, NULL);
    int said = text && strstr(text, "triangles and ") && strstr(text, "(--from: in place of the fusion)");
    free(text);
    CHECK(said, "mesh --from: no line of what it read in %s", log);
    CHECK(cli_run("", log, "mesh -m %s --from %s --voxel 0.1", run, a) == 2, "--from with --voxel accepted");
    CHECK(cli_run("", log, "mesh -m %s --from %s/point_cloud/iteration_400/point_cloud.ply -o %s", run, run, b) == 1,
          "--from a PLY of Gaussians accepted");
    text = cs_read_file(log, NULL);
    said = text && strstr(text, "no 'face' element: a point cloud, not a mesh");
    free(text);
    CHECK(said, "mesh --from a PLY of Gaussians: no reason given in %s", log);
    return 0;
}

/* --texture auto at a budget whose triangles span several pixels: each triangle's lattice of
   colours draws the test views better than vertex colours. PoCL, the sky scene below at 96x72,
   2,000 triangles, --refine 200: 20.09 dB with vertex colours, 23.97 with the texture (8
   subdivisions for triangles of 3.6 pixels); --texture with a .ply, 9 subdivisions or
   --refine-texture alone are refused before any work, and so are a --consistency outside 0-8 and
   a --refine-step list that is malformed, too long or has no geometry stage to choose for */
static int texture_gain(const char *dir, const char *run)
{
    double psnr[2];
    char log[800];
    for (int k = 0; k < 2; k++) {
        snprintf(log, sizeof log, "%s/texture%d.log", dir, k);
        CHECK(cli_run("", log, "mesh -m %s --max-triangles 2000 --refine 200 --psnr -o %s/texture%d.glb%s", run, dir, k,
                      k ? " --texture auto" : "") == 0 && log_psnr(log, &psnr[k]) == 0, "mesh failed, see %s", log);
    }
    printf("  sky scene, 2,000 triangles, --refine 200: %.2f dB with vertex colours, %.2f with --texture auto\n", psnr[0],
           psnr[1]);
    CHECK(psnr[1] > psnr[0] + 2, "the texture gained %.2f dB", psnr[1] - psnr[0]);
    const char *bad[] = {"--refine 10 --texture 2 -o %s/t.ply", "--refine 10 --texture 9 -o %s/t.glb",
                         "--refine 10 --refine-texture 5 -o %s/t.glb", "--texture 2 -o %s/t.glb",
                         "--consistency 9 -o %s/t.glb", "--consistency -1 -o %s/t.glb",
                         "--refine 10 --refine-step 0.1, -o %s/t.glb", "--refine 10 --refine-step 1,2,3,4,5 -o %s/t.glb",
                         "--refine 10 --refine-geometry 0 --refine-step auto -o %s/t.glb", "--refine-step 0,1 -o %s/t.glb"};
    const char *why[] = {"a PLY cannot carry", "subdivisions from 1 to 8", "needs --texture", "need --refine N",
                         "--consistency 9: from 0 to 8 views", "--consistency -1: from 0 to 8 views",
                         "is not a step, a list of steps", "lists more than 4 steps", "--refine-geometry above 0",
                         "'0' is not a positive number"};
    for (int i = 0; i < 10; i++) {
        char args[700];
        snprintf(args, sizeof args, bad[i], dir);
        snprintf(log, sizeof log, "%s/texture_bad.log", dir);
        CHECK(cli_run("", log, "mesh -m %s %s", run, args) != 0, "mesh %s was not refused", args);
        char *text = cs_read_file(log, NULL);
        int named = text && strstr(text, why[i]);
        free(text);
        CHECK(named, "mesh %s: no '%s' in %s", args, why[i], log);
    }
    return 0;
}

/* mesh --refine on a capture (COLMAP) whose background is a sky (gen_demo --sky): the default
   background shell, coloured by the refinement, draws the sky the fused surface misses. PoCL,
   96x72, 400 iterations, 20k triangles: 17.5 dB and 94.4% covered with --shell 0, 22.2 dB and
   100% with the default (level 3 under this budget). The run without the shell is also run
   --no-focus: on a capture the focus is the default, and the logs show which ran; both show a
   capture's geometry step, chosen among three by held-out training views */
static int shell_gain(const char *dir)
{
    char scene[700], run[700], log[800];
    snprintf(scene, sizeof scene, "%s/sky", dir);
    snprintf(run, sizeof run, "%s/sky_run", dir);
    snprintf(log, sizeof log, "%s/sky_train.log", dir);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "%s %s 96 72 --format colmap --sky >/dev/null", getenv("CLSPLAT_GEN_DEMO") ? getenv("CLSPLAT_GEN_DEMO") : "./build/gen_demo", scene);
    CHECK(system(cmd) == 0, "gen_demo --sky failed");
    CHECK(cli_run("", log, "train -c configs/demo.json -s %s -o %s --iterations 400 --set log.tensorboard=false "
                  "--set eval.save_renders=false --set data.eval=true", scene, run) == 0, "training failed, see %s", log);
    double psnr[2] = {0, 0}, cov[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        snprintf(log, sizeof log, "%s/shell%d.log", dir, k);
        CHECK(cli_run("", log, "mesh -m %s --max-triangles 20000 --refine 200 --psnr -o %s/shell%d.glb%s", run, dir, k,
                      k ? "" : " --shell 0 --no-focus") == 0, "mesh failed, see %s", log);
        char *text = cs_read_file(log, NULL);
        int ok = drawn_psnr(text, &psnr[k], &cov[k]);
        ok = ok && (strstr(text, "background shell of 1280 triangles (level 3)") != NULL) == k;
        ok = ok && (strstr(text, "mesh: focus") != NULL) == k;
        /* a capture's step: chosen by held-out training views */
        ok = ok && strstr(text, "mesh: trying 3 geometry steps (--refine-step), each refining over 50 + 100 views") &&
             strstr(text, " mean edges, chosen)") && strstr(text, "mesh: geometry step ");
        ok = ok && strstr(text, "of the rendered depths dropped: fewer than 2 of a view's 8 nearest"); /* and depth check */
        ok = ok && !strstr(text, "views between the training views"); /* no pseudo-views by default */
        free(text);
        CHECK(ok, "no PSNR line, or the shell, focus, step, depth check or pseudo-view line wrong, in %s", log);
    }
    printf("  sky scene, 20k triangles, --refine 200: %.2f dB, %.1f%% covered with --shell 0; %.2f dB, %.1f%% with "
           "the default shell\n", psnr[0], cov[0], psnr[1], cov[1]);
    CHECK(psnr[1] > psnr[0] + 2 && cov[1] >= 99.9, "the shell gained %.2f dB, covers %.1f%%", psnr[1] - psnr[0], cov[1]);
    /* --shell-fit: the shell brought in where the views see background (on this sky a vertex or
       so: 25.3 against 25.5 dB); it runs, says so, and keeps the shell's gain and cover. Drawn
       with --psnr-samples 2, which also reports the drawing at the pixels' centres */
    snprintf(log, sizeof log, "%s/shellfit.log", dir);
    CHECK(cli_run("", log, "mesh -m %s --max-triangles 20000 --refine 200 --shell-fit --psnr-samples 2 -o %s/shellfit.glb",
                  run, dir) == 0, "mesh --shell-fit failed, see %s", log);
    char *fit_text = cs_read_file(log, NULL);
    double fp = 0, fc = 0, centres = 0;
    int fok = drawn_psnr(fit_text, &fp, &fc);
    fok = fok && strstr(fit_text, " of its 642 vertices in directions fitted to the background the views see");
    const char *cl = fit_text ? strstr(fit_text, "mesh: each pixel the mean of 2 x 2 samples; at the pixels' centres alone: PSNR ") : NULL;
    fok = fok && cl && sscanf(strstr(cl, "PSNR "), "PSNR %lf", &centres) == 1;
    free(fit_text);
    CHECK(fok && fp > psnr[0] + 2 && fc >= 99.9, "--shell-fit: %.2f dB, %.1f%% covered, or no fit or centres line, in %s",
          fp, fc, log);
    printf("  --shell-fit --psnr-samples 2: %.2f dB (at the pixels' centres %.2f)\n", fp, centres);
    CHECK(fabs(fp - centres) < 2, "2 x 2 samples %.2f dB against %.2f at the centres", fp, centres);
    /* --pseudo-views 2: the model's drawings of 2 views a training view join the device refinement
       (this 400-iteration model draws the test views at about 20.4 dB, worse than the mesh, so
       here they cost PSNR: 25.4 -> 23.5 dB; on real models they gain, README) */
    snprintf(log, sizeof log, "%s/pseudo.log", dir);
    CHECK(cli_run("", log, "mesh -m %s --max-triangles 20000 --refine 200 --pseudo-views 2 --psnr -o %s/pseudo.glb", run,
                  dir) == 0, "mesh failed, see %s", log);
    char *text = cs_read_file(log, NULL);
    double pp = 0, pc = 0;
    int drawn = 0;
    const char *pv = text ? strstr(text, " views between the training views (2 a view) drawn by the model") : NULL;
    while (pv && pv > text && pv[-1] != '\n') pv--;
    int ok = drawn_psnr(text, &pp, &pc);
    ok = ok && pv && sscanf(pv, "mesh: %d views", &drawn) == 1 && drawn >= 16 && drawn % 2 == 0;
    ok = ok && strstr(text, "to the training photos over 200 views");
    free(text);
    CHECK(ok && pc >= 99.9, "no PSNR, refinement or pseudo-view line (2 a view), in %s", log);
    printf("  the same with --pseudo-views 2 (%d drawings): %.2f dB, %.1f%% covered\n", drawn, pp, pc);
    return texture_gain(dir, run);
}

int test_mesh_cli(void)
{
    char dir[600], scene[700], out[700], log[700], p[900];
    snprintf(dir, sizeof dir, "%s/mesh", test_tmpdir());
    snprintf(scene, sizeof scene, "%s/scene", dir);
    CHECK_OK(cli_demo_scene(scene, 96, 72));
    snprintf(out, sizeof out, "%s/run", dir);
    snprintf(log, sizeof log, "%s/train.log", dir);
    CHECK(cli_run("", log, "train -c configs/demo.json -s %s -o %s --iterations 400 --set log.tensorboard=false "
                  "--set eval.save_renders=false", scene, out) == 0, "training failed, see %s", log);
    uint64_t rs = test_seed() ^ 0x6e54;
    snprintf(log, sizeof log, "%s/mesh.log", dir);
    const char *variants[] = {"--voxel 0.025 --renders %s/drawn", "--voxel 0.025 --keep-components 1 --max-triangles 20000 -o %s/small.glb",
                              "--grid 100 --depth mean --volume-mb 4 -o %s/slabs.ply", "-o %s/made/default.ply",
                              "--voxel 0.025 --contract 1 -o %s/far.ply", "--voxel 0.025 --focus -o %s/focus.ply"};
    const char *paths[] = {"%s/run/mesh.ply", "%s/small.glb", "%s/slabs.ply", "%s/made/default.ply", "%s/far.ply",
                           "%s/focus.ply"};
    double comp0 = 0;
    for (int i = 0; i < 6; i++) {
        char args[600], path[800];
        snprintf(args, sizeof args, variants[i], dir);
        snprintf(path, sizeof path, paths[i], dir);
        CHECK(cli_run("", log, "mesh -m %s %s", out, args) == 0, "mesh %s failed, see %s", args, log);
        cs_mesh m = {0};
        CHECK_OK(read_mesh(path, &m));
        double acc, within, comp;
        chamfer(&m, 0.03, &rs, &acc, &within, &comp);
        char *text = cs_read_file(log, NULL);
        printf("  mesh %s: %zu triangles: accuracy %.4f (%.1f%% of the area within 0.03), completeness %.4f, "
               "Chamfer %.4f\n", args, m.nt, acc, 100 * within, comp, (acc + comp) / 2);
        /* the scene spans 2.5 units. Measured on PoCL (400 iterations at 96x72, --voxel 0.025): accuracy
           0.048, 54.5% of the area within 0.03, completeness 0.016 (H100: 0.048, 52.6%, 0.017): what is
           off lies near the objects' bases and under the sphere, where the model is poor (#23's note);
           the thresholds hold that, and fail on a broken fusion */
        /* --contract 1 (i == 4) and --focus (5) add what the views see past the box of the opaque Gaussians: on
           the demo, which has nothing there, pieces under the ground disc (accuracy 0.070-0.073 on PoCL),
           so only its completeness is held to the plain grid's */
        if (i < 4)
            CHECK(acc < 0.08 && within > 0.35 && comp < 0.035, "%s: accuracy %.4f, %.3f within, completeness %.4f", args,
                  acc, within, comp);
        if (i == 0) comp0 = comp;
        if (i == 4)
            CHECK(text && strstr(text, "past the model's box") && comp < comp0 + 0.002 && acc < 0.12,
                  "--contract 1: completeness %.4f (%.4f on the plain grid), accuracy %.4f: %s", comp, comp0, acc,
                  text ? text : "");
        /* --focus: every camera of the demo sees all of it, so the focus is the model's box,
           contracted past it as with --contract 1 */
        if (i == 5)
            CHECK(text && strstr(text, "mesh: focus ") && strstr(text, "past the focus") && comp < comp0 + 0.002 &&
                      acc < 0.12,
                  "--focus: completeness %.4f (%.4f on the plain grid), accuracy %.4f: %s", comp, comp0, acc,
                  text ? text : "");
        if (i == 0) CHECK(mesh_psnr(dir, scene, text) == 0 && closed_where_seen(&m) == 0, "(above)");
        if (i == 1) {
            size_t pieces = 0;
            CHECK(m.nt <= 20000 && m.nt > 10000, "--max-triangles 20000 gave %zu", m.nt);
            CHECK(text && strstr(text, "kept the 1 largest of "), "no --keep-components line: %s", text ? text : "");
            CHECK(cs_mesh_keep_largest(&m, 1, &pieces) == 0 && pieces == 1, "--keep-components 1 left %zu pieces", pieces);
        }
        if (i == 2) CHECK(text && !strstr(text, " 1 slab)"), "--volume-mb 4 still fitted one slab: %s", text ? text : "");
        /* #33 item 11: the default grid follows the training resolution (a 96x72 model: a few
           hundredths, not the 512 voxels of the longest side a full-size capture gets) */
        if (i == 3) /* and no focus on a Blender scene (the default on captures) */
            CHECK(text && strstr(text, "(a training pixel at the cameras' median distance;") && !strstr(text, "grid 5") &&
                      !strstr(text, "mesh: focus") && !strstr(text, "rendered depths dropped"),
                  "the default grid: %s", text ? text : "");
        free(text);
        cs_mesh_free(&m);
    }
    CHECK(from_mesh(dir, out) == 0, "mesh --from (above)");
    CHECK(refine_gain(dir, out) == 0, "mesh --refine (above)");
    CHECK(exposure_swap(dir, scene, out) == 0, "mesh with the model's exposure.json (above)");
    CHECK(geometry_gain(dir, out, &rs) == 0, "mesh --refine-geometry (above)");
    CHECK(samples_gain(dir, out) == 0, "mesh --refine-samples (above)");
    CHECK(shell_gain(dir) == 0, "mesh --shell (above)");
    CHECK(check_depth_maps(dir, scene, out) == 0, "render --depth-maps (above)");
    /* read back by an independent reader (Debian's assimp-utils) */
    snprintf(p, sizeof p, "assimp info %s/run/mesh.ply > %s/assimp.log 2>&1", dir, dir);
    CHECK(system(p) == 0, "assimp info failed: see %s/assimp.log", dir);
    snprintf(p, sizeof p, "%s/assimp.log", dir);
    char *text = cs_read_file(p, NULL);
    CHECK(text && strstr(text, "Primitive Types:    triangles"), "assimp: %s", text ? text : "");
    free(text);
    /* the .glb too, with the counts this test's parser reads */
    cs_mesh g = {0};
    snprintf(p, sizeof p, "%s/small.glb", dir);
    CHECK_OK(read_mesh_glb(p, &g, NULL));
    snprintf(p, sizeof p, "assimp info %s/small.glb > %s/assimp_glb.log 2>&1", dir, dir);
    CHECK(system(p) == 0, "assimp info on the .glb failed: see %s/assimp_glb.log", dir);
    snprintf(p, sizeof p, "%s/assimp_glb.log", dir);
    text = cs_read_file(p, NULL);
    char want_v[64], want_f[64];
    snprintf(want_v, sizeof want_v, "Vertices:           %zu", g.nv);
    snprintf(want_f, sizeof want_f, "Faces:              %zu", g.nt);
    CHECK(text && strstr(text, want_v) && strstr(text, want_f), "assimp on the .glb (%s, %s): %s", want_v, want_f, text ? text : "");
    free(text);
    cs_mesh_free(&g);
    snprintf(p, sizeof p, "find %s -name '*.tmp.*' | grep -q .", dir);
    CHECK(system(p) != 0, "a temporary file was left");
    /* bad arguments and inputs */
    CHECK(cli_run("", log, "mesh -m %s --depth middle", out) == 2, "--depth middle accepted");
    CHECK(cli_run("", log, "mesh -m %s --voxel -1", out) == 2, "--voxel -1 accepted");
    CHECK(cli_run("", log, "mesh -m %s --contract -1", out) == 2, "--contract -1 accepted");
    CHECK(cli_run("", log, "mesh -m %s --voxel 0.1 --grid 30", out) == 2, "--voxel with --grid accepted");
    CHECK(cli_run("", log, "mesh") == 2, "mesh without -m accepted");
    CHECK(cli_run("", log, "mesh -m %s --shell 12 --refine 10", out) == 2, "--shell 12 accepted");
    CHECK(cli_run("", log, "mesh -m %s --shell 3", out) == 2, "--shell without --refine accepted");
    CHECK(cli_run("", log, "mesh -m %s --profile", out) == 2, "--profile without --refine accepted");
    CHECK(cli_run("", log, "mesh -m %s --pseudo-views 2", out) == 2, "--pseudo-views without --refine accepted");
    CHECK(cli_run("", log, "mesh -m %s --refine-exposure", out) == 2, "--refine-exposure without --refine accepted");
    CHECK(cli_run("", log, "mesh -m %s --pseudo-views 17 --refine 10", out) == 2, "--pseudo-views 17 accepted");
    CHECK(cli_run("", log, "mesh -m %s --psnr-samples 5", out) == 2, "--psnr-samples 5 accepted");
    CHECK(cli_run("", log, "mesh -m %s --psnr-samples 0", out) == 2, "--psnr-samples 0 accepted");
    CHECK(cli_run("", log, "mesh -m %s --refine-samples 2", out) == 2, "--refine-samples without --refine accepted");
    CHECK(cli_run("", log, "mesh -m %s --refine 10 --refine-samples 5", out) == 2, "--refine-samples 5 accepted");
    CHECK(cli_run("", log, "mesh -m %s --pseudo-views -1 --refine 10", out) == 2, "--pseudo-views -1 accepted");
    CHECK(cli_run("", log, "mesh -m %s -o %s/mesh.obj", out, dir) == 2, "-o mesh.obj accepted");
    CHECK(cli_run("", log, "render -m %s --orbit 3 --depth-maps", out) == 2, "render --orbit --depth-maps accepted");
    CHECK(cli_run("", log, "mesh -m %s/nothing", dir) == 1, "a missing model accepted");
    CHECK(cli_run("", log, "mesh -m %s --voxel 0.0001", out) == 1, "a 25000-voxel axis accepted");
    text = cs_read_file(log, NULL);
    CHECK(text && strstr(text, "voxels along an axis"), "message: %s", text ? text : "");
    free(text);
    /* #33 item 12: each refusal names the option at fault, and no mesh of no triangles is written */
    struct { const char *args, *says; } bad[] = {
        {"--max-depth 1e-9", "--max-depth 1e-09: no Gaussian lies that close"},
        {"--trunc 1e9", "--trunc 1e+09: a truncation that wide"},
        {"--volume-mb 0.05", "--volume-mb 0.05: the thinnest slab"},
        {"--voxel 10", "no surface was found, so no mesh is written"},
        {"--shell 6 --refine 10 --max-triangles 1000", "--max-triangles 1000 leaves none for the scene"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(cli_run("", log, "mesh -m %s %s -o %s/bad.ply", out, bad[i].args, dir) == 1, "mesh %s: not refused",
              bad[i].args);
        text = cs_read_file(log, NULL);
        CHECK(text && strstr(text, bad[i].says), "mesh %s: %s", bad[i].args, text ? text : "");
        free(text);
        snprintf(p, sizeof p, "%s/bad.ply", dir);
        CHECK(!cs_file_exists(p), "mesh %s wrote %s", bad[i].args, p);
    }
    return 0;
}

/* #38's white-background holes: gen_demo --alpha (RGBA photos, loaded over white), whose disc
 * has near-white squares. Training leaves the disc's Gaussians see-through, under the 0.5
 * opacity the bounds once took, so the disc was cut away (PoCL, 96x72, 20k triangles: 38.7% of
 * the object's pixels undrawn, 16.8 dB). Now the fused mesh misses 13% and the refined one 4%
 * (26.9 dB), as `mesh --psnr` reports against the photos' alpha. */
int test_mesh_light_surfaces(void)
{
    char dir[600], scene[700], run[700], log[800], cmd[1400];
    snprintf(dir, sizeof dir, "%s/light", test_tmpdir());
    snprintf(scene, sizeof scene, "%s/scene", dir);
    snprintf(run, sizeof run, "%s/run", dir);
    snprintf(cmd, sizeof cmd, "%s %s 96 72 --alpha >/dev/null",
             getenv("CLSPLAT_GEN_DEMO") ? getenv("CLSPLAT_GEN_DEMO") : "./build/gen_demo", scene);
    CHECK(system(cmd) == 0, "gen_demo --alpha failed");
    snprintf(log, sizeof log, "%s/train.log", dir);
    CHECK(cli_run("", log, "train -c configs/demo.json -s %s -o %s --iterations 400 --set log.tensorboard=false "
                  "--set eval.save_renders=false --set data.white_background=true", scene, run) == 0,
          "training failed, see %s", log);
    double psnr[2], share[2], missed[2], extra[2];
    for (int k = 0; k < 2; k++) {
        snprintf(log, sizeof log, "%s/mesh%d.log", dir, k);
        CHECK(cli_run("", log, "mesh -m %s --max-triangles 20000 --psnr -o %s/m%d.ply%s", run, dir, k,
                      k ? " --refine 200" : "") == 0, "mesh failed, see %s", log);
        char *text = cs_read_file(log, NULL);
        const char *al = text ? strstr(text, "photos' alpha (object") : NULL;
        int ok = drawn_psnr(text, &psnr[k], NULL) && al &&
                 sscanf(al, "photos' alpha (object: alpha >= 0.5, %lf%% of the pixels): %lf%% of the object's pixels "
                            "undrawn (holes, thin silhouettes), %lf%%", &share[k], &missed[k], &extra[k]) == 3;
        free(text);
        CHECK(ok, "no PSNR or alpha line in %s", log);
    }
    printf("  white background, object %.1f%% of the pixels: fused %.2f dB, %.2f%% of the object undrawn, %.2f%% of "
           "the rest drawn; --refine 200: %.2f dB, %.2f%%, %.2f%%\n", share[0], psnr[0], missed[0], extra[0], psnr[1],
           missed[1], extra[1]);
    CHECK(share[0] > 45 && share[0] < 65 && missed[0] < 20 && missed[1] < 8 && extra[1] < 5 && psnr[1] > 24,
          "fused: %.2f%% undrawn; refined: %.2f%% undrawn, %.2f%% drawn outside, %.2f dB", missed[0], missed[1], extra[1],
          psnr[1]);
    return 0;
}

/* a random mesh as .glb: this test's parser gets the same vertices, colours and triangles back,
   the document says what a loader needs (bounds, normalized colours, the unlit material), an
   independent reader (assimp) counts the same; a mesh of no triangle is refused */
int test_mesh_glb(void)
{
    uint64_t rs = test_seed() ^ 0x61b;
    cs_mesh m = {0};
    m.nv = 20 + (size_t)(test_rand(&rs) * 50), m.nt = 30 + (size_t)(test_rand(&rs) * 80);
    m.pos = malloc(12 * m.nv), m.rgb = malloc(3 * m.nv), m.tri = malloc(12 * m.nt);
    for (size_t i = 0; i < 3 * m.nv; i++) m.pos[i] = (float)(test_rand(&rs) * 10 - 5), m.rgb[i] = (uint8_t)(test_rand(&rs) * 256);
    for (size_t t = 0; t < m.nt; t++) /* three distinct corners; every vertex used (as assimp counts the used ones) */
        for (int k = 0; k < 3; k++)
            m.tri[3 * t + k] = (uint32_t)(3 * t + k < m.nv ? 3 * t + k : (k + (size_t)(test_rand(&rs) * (m.nv / 3)) * 3) % m.nv);
    char p[700], cmd[1600];
    snprintf(p, sizeof p, "%s/random.glb", test_tmpdir());
    CHECK_OK(cs_mesh_write_glb(p, &m));
    cs_mesh g = {0};
    json_t *doc;
    CHECK_OK(read_mesh_glb(p, &g, &doc));
    CHECK(g.nv == m.nv && g.nt == m.nt && !memcmp(g.pos, m.pos, 12 * m.nv) && !memcmp(g.rgb, m.rgb, 3 * m.nv) &&
              !memcmp(g.tri, m.tri, 12 * m.nt), "read back: %zu vertices, %zu triangles (wrote %zu, %zu)", g.nv, g.nt, m.nv, m.nt);
    json_t *pos = json_array_get(json_object_get(doc, "accessors"), 0), *col = json_array_get(json_object_get(doc, "accessors"), 1);
    for (int c = 0; c < 3; c++) {
        float lo = m.pos[c], hi = m.pos[c];
        for (size_t v = 0; v < m.nv; v++) lo = fminf(lo, m.pos[3 * v + c]), hi = fmaxf(hi, m.pos[3 * v + c]);
        CHECK((float)json_number_value(json_array_get(json_object_get(pos, "min"), (size_t)c)) == lo &&
                  (float)json_number_value(json_array_get(json_object_get(pos, "max"), (size_t)c)) == hi, "POSITION bounds");
    }
    json_t *mat = json_array_get(json_object_get(doc, "materials"), 0);
    CHECK(json_is_true(json_object_get(col, "normalized")) && !strcmp(json_string_value(json_object_get(col, "type")), "VEC4") &&
              json_object_get(json_object_get(mat, "extensions"), "KHR_materials_unlit") &&
              !strcmp(json_string_value(json_object_get(json_object_get(doc, "asset"), "version")), "2.0"),
          "the document's colours, material or version");
    json_decref(doc);
    cs_mesh_free(&g);
    snprintf(cmd, sizeof cmd, "assimp info %s > %s.log 2>&1", p, p);
    CHECK(system(cmd) == 0, "assimp info failed: see %s.log", p);
    snprintf(cmd, sizeof cmd, "%s.log", p);
    char *text = cs_read_file(cmd, NULL), want_v[64], want_f[64];
    snprintf(want_v, sizeof want_v, "Vertices:           %zu", m.nv);
    snprintf(want_f, sizeof want_f, "Faces:              %zu", m.nt);
    CHECK(text && strstr(text, want_v) && strstr(text, want_f), "assimp (%s, %s): %s", want_v, want_f, text ? text : "");
    free(text);
    m.nt = 0;
    snprintf(p, sizeof p, "%s/empty.glb", test_tmpdir());
    CHECK(cs_mesh_write_glb(p, &m) != 0 && !cs_file_exists(p) && strstr(cs_last_error(), "no triangle"), "an empty mesh");
    cs_mesh_free(&m);
    return 0;
}

/* the default depth limit follows the model: a room (a wall of radius 4 to 8 around 12 cameras
   on a ring of radius 0.5, looking out) is kept whole, where twice the cameras' spread (1) cut
   it; far floaters (0.5% of the Gaussians, at 100: under the 1% the percentile leaves out) and
   see-through ones are left out */
int test_mesh_depth_limit(void)
{
    uint64_t rs = test_seed() ^ 0xde9;
    const double wall = 4 + 4 * test_rand(&rs);
    cs_camera cams[13];
    cs_scene scene;
    memset(&scene, 0, sizeof scene);
    scene.cams = cams, scene.n_cams = 13;
    for (int i = 0; i < 13; i++) {
        double a = 2 * M_PI * (i + test_rand(&rs)) / 12;
        double d[3] = {cos(a), sin(a), 0}, up[3] = {0, 0, 1}, x[3] = {d[1] * up[2] - d[2] * up[1], d[2] * up[0] - d[0] * up[2], 0};
        double pos[3] = {0.5 * d[0], 0.5 * d[1], 0}, y[3] = {d[1] * x[2] - d[2] * x[1], d[2] * x[0] - d[0] * x[2], d[0] * x[1] - d[1] * x[0]};
        memset(&cams[i], 0, sizeof cams[i]);
        cams[i].width = 80, cams[i].height = 60, cams[i].fx = cams[i].fy = 70, cams[i].cx = 40, cams[i].cy = 30;
        for (int k = 0; k < 3; k++) cams[i].R[k] = x[k], cams[i].R[3 + k] = y[k], cams[i].R[6 + k] = d[k];
        for (int q = 0; q < 3; q++) cams[i].t[q] = -(cams[i].R[q * 3] * pos[0] + cams[i].R[q * 3 + 1] * pos[1] + cams[i].R[q * 3 + 2] * pos[2]);
        cams[i].is_test = i == 12; /* a test view looking at nothing counts for nothing */
    }
    cs_splats s;
    const int n = 20000;
    CHECK_OK(cs_splats_alloc(&s, n, 0, 0));
    for (int i = 0; i < n; i++) {
        double a = 2 * M_PI * test_rand(&rs), r = i % 200 == 0 ? 100 : wall;
        s.means[3 * i] = (float)(r * cos(a)), s.means[3 * i + 1] = (float)(r * sin(a));
        s.means[3 * i + 2] = (float)(2 * test_rand(&rs) - 1);
        s.logit_opacity[i] = i % 7 == 3 ? -2.f : 3.f; /* see-through ones: not counted */
        if (i % 7 == 3) s.means[3 * i] *= 50, s.means[3 * i + 1] *= 50;
    }
    double got = cs_mesh_default_depth(&scene, &s, NULL), old = cs_scene_far_depth(&scene);
    /* the same model made faint (as MCMC leaves one: every opacity under 0.2, none over 0.5)
       keeps the same limit, the brightest fifth standing in for the opaque Gaussians */
    for (int i = 0; i < n; i++) s.logit_opacity[i] -= 4.5f;
    double faint = cs_mesh_default_depth(&scene, &s, NULL);
    cs_splats_free(&s);
    printf("  wall at %.2f: default depth limit %.3f (twice the cameras' spread: %.3f), faint model %.3f\n", wall, got,
           old, faint);
    /* the wall's depth at a view's side edges: (wall - 0.5) / cos(half the 59.5 degree field) */
    CHECK(old < 1.2 && got >= 1.16 * (wall - 0.5) && got <= 2 * (wall + 0.5), "wall at %.2f: depth limit %.3f (old %.3f)",
          wall, got, old);
    CHECK(faint == got, "faint model: depth limit %.3f, the opaque one's %.3f", faint, got);
    return 0;
}

/* cs_mesh_opaque_logit: the threshold stays where enough Gaussians pass it (1% of them, at
   least 10, at most CS_MESH_OPAQUE_MIN), else falls to the brightest fifth's, which then passes
   a fifth of a model of distinct opacities */
int test_mesh_faint_model(void)
{
    uint64_t rs = test_seed() ^ 0xfa1;
    cs_splats s;
    const int n = 20000 + (int)(1000 * test_rand(&rs));
    CHECK_OK(cs_splats_alloc(&s, n, 0, 0));
    for (int bright = 0; bright <= 2; bright++) {
        /* bright 0: 3 over 0.5; 1: one fewer than 1% of them (under CS_MESH_OPAQUE_MIN); 2: 1% */
        int want = bright == 0 ? 3 : n / 100 - (bright == 1);
        for (int i = 0; i < n; i++)
            s.logit_opacity[i] = i < want ? (float)(0.1 + 3 * test_rand(&rs)) : (float)(-6 + 5.9 * test_rand(&rs));
        int passing = -1, m = 0;
        float lg = cs_mesh_opaque_logit(&s, 0.f, &passing);
        for (int i = 0; i < n; i++) m += s.logit_opacity[i] > lg;
        printf("  %d Gaussians, %d over 0.5: threshold %.4f, %d pass it\n", n, passing, 1 / (1 + exp(-lg)), m);
        CHECK(passing == want, "%d counted over 0.5, %d are", passing, want);
        if (bright == 2) {
            CHECK(lg == 0.f, "%d over 0.5 of %d: threshold moved to %g", want, n, lg);
        } else {
            CHECK(lg < 0.f && fabs(m - 0.2 * n) <= 2, "%d over 0.5: threshold %g passes %d of %d, want a fifth", want, lg,
                  m, n);
        }
    }
    cs_splats_free(&s);
    /* a large model: CS_MESH_OPAQUE_MIN passing is enough where 1% is more, one fewer is not */
    const int big = 100 * CS_MESH_OPAQUE_MIN + 1000 + (int)(5000 * test_rand(&rs));
    CHECK_OK(cs_splats_alloc(&s, big, 0, 0));
    for (int fewer = 0; fewer <= 1; fewer++) {
        for (int i = 0; i < big; i++)
            s.logit_opacity[i] = i < CS_MESH_OPAQUE_MIN - fewer ? 1.f : (float)(-6 + 5.9 * test_rand(&rs));
        float lg = cs_mesh_opaque_logit(&s, 0.f, NULL);
        CHECK(fewer ? lg < 0.f : lg == 0.f, "%d Gaussians, %d over 0.5: threshold %g", big, CS_MESH_OPAQUE_MIN - fewer, lg);
    }
    cs_splats_free(&s);
    /* a small model: 10 passing is enough, 9 is not */
    CHECK_OK(cs_splats_alloc(&s, 50, 0, 0));
    for (int nine = 0; nine <= 1; nine++) {
        for (int i = 0; i < 50; i++) s.logit_opacity[i] = i < 10 - nine ? 1.f : -3.f + 0.01f * (float)i;
        float lg = cs_mesh_opaque_logit(&s, 0.f, NULL);
        CHECK(nine ? lg < 0.f : lg == 0.f, "50 Gaussians, %d over 0.5: threshold %g", 10 - nine, lg);
    }
    cs_splats_free(&s);
    return 0;
}

/* The device's visibility buffer (mesh_device.h) against the host rasterizer on random
   overlapping triangles, some crossing behind the camera: the same triangle at almost every
   pixel (float rounding may move a tie or an edge pixel), the same weights where the triangle
   is the same, every weight written (poisoned first); then the colour gradient through the
   training loss against the host's L1 gradient on that buffer, and one Adam step. */
int test_mesh_device(void)
{
    uint64_t rs = test_seed() ^ 0x6d64;
    cs_cl cl;
    CHECK_OK(test_open_cl(&cl));
    cs_camera c;
    ref_mesh_test_camera(&c);
    enum { NT = 300 };
    static float pos[9 * NT], col[9 * NT], grad[9 * NT], dgrad[9 * NT], dcol[9 * NT];
    static uint8_t rgb[9 * NT];
    static uint32_t tri[3 * NT];
    cs_mesh m;
    ref_mesh_random_mesh(&m, pos, col, rgb, tri, NT, &rs);
    size_t npx = (size_t)c.width * c.height;
    int32_t *vis = malloc(sizeof(int32_t) * npx), *dvis = malloc(sizeof(int32_t) * npx);
    float *w = malloc(sizeof(float) * 3 * npx), *dw = malloc(sizeof(float) * 3 * npx);
    cs_image photo = {c.width, c.height, 4, malloc(npx * 4)};
    CHECK(vis && dvis && w && dw && photo.px, "out of memory");
    for (size_t i = 0; i < npx * 4; i++) photo.px[i] = (uint8_t)(255 * test_rand(&rs));
    CHECK_OK(cs_mesh_visibility(&m, &c, 1, vis, w));
    cs_mesh_dev d;
    const float bg[3] = {0.2f, 0.4f, 0.6f};
    CHECK_OK(cs_mesh_dev_open(&d, &cl, &m, npx, 1, bg));
    float nanv = NAN;
    CHECK_OK(cs_buf_fill(&cl, &d.wts, 0, d.wts.bytes, &nanv, 4));
    CHECK_OK(cs_mesh_dev_visibility(&d, &c));
    CHECK_OK(cs_mesh_dev_read_visibility(&d, dvis, dw));
    long covered = 0, differ = 0, wbad = 0, wround = 0;
    for (size_t i = 0; i < npx; i++) {
        covered += vis[i] >= 0;
        if (dvis[i] != vis[i]) {
            differ++;
            continue;
        }
        for (int k = 0; k < 3; k++) {
            float e = dvis[i] < 0 ? dw[3 * i + k] : dw[3 * i + k] - w[3 * i + k];
            wbad += !(fabsf(e) <= 1e-3f);
            wround += !(fabsf(e) <= 1e-4f); /* a sliver's weights are ill-conditioned: rusticl's rounding
                                               moved one pixel's by 1.5e-4 (seed 4767857665518550534) */
        }
    }
    printf("  %ld of %zu pixels covered, %ld with another triangle on the device, %ld weights off by 1e-3, %ld by "
           "1e-4\n", covered, npx, differ, wbad, wround);
    CHECK(covered > (long)npx / 3 && differ * 200 <= (long)npx && wbad == 0 && wround * 500 <= 3 * (long)npx,
          "covered %ld, other triangle at %ld pixels, %ld weights off by 1e-3, %ld by 1e-4", covered, differ, wbad,
          wround);

    /* the colour gradient through the training loss at lambda 0 (L1 over the drawn image, a mean
       over its 3 W H values) against the host's L1 gradient on the same buffer (a mean over the
       3 x weighted covered pixels): the same up to that ratio */
    double cnt = 0, l1 = 0, loss0 = 0;
    memset(grad, 0, sizeof grad);
    /* a drawn value within rounding of the photo's gives L1 a sign either way (seed
       4767183754713129654: 3 entries off, one pixel's triangle): such photo values move a step */
    for (size_t i = 0; i < npx; i++)
        for (int ch = 0; ch < 3 && dvis[i] >= 0; ch++) {
            const uint32_t *v = tri + 3 * (size_t)dvis[i];
            float cv = dw[3 * i] * col[3 * v[0] + ch] + dw[3 * i + 1] * col[3 * v[1] + ch] + dw[3 * i + 2] * col[3 * v[2] + ch];
            uint8_t *g = &photo.px[4 * i + (size_t)ch];
            if (fabs(cv - *g / 255.0) < 1e-5) *g = (uint8_t)(*g < 128 ? *g + 1 : *g - 1);
        }
    double loss = cs_mesh_color_loss(&m, col, &photo, dvis, dw, grad, &cnt);
    CHECK_OK(cs_mesh_dev_color_grad(&d, &photo, 0.f, &loss0, &l1));
    CHECK_OK(cs_mesh_dev_read_colors(&d, dcol, dgrad));
    double ratio = 3.0 * npx / (3.0 * cnt), gmax = 0;
    for (int i = 0; i < 9 * NT; i++) gmax = fmax(gmax, fabs(grad[i]));
    int gbad = 0, stepped = 0;
    for (int i = 0; i < 9 * NT; i++) gbad += !(fabs(dgrad[i] * ratio - grad[i]) <= 1e-5 * gmax);
    CHECK(gbad == 0 && gmax > 0 && fabs(loss0 - l1) < 1e-6, "%d gradient entries off (largest %.3g); loss %g, L1 %g",
          gbad, gmax, loss0, l1);
    /* with D-SSIM the gradient changes (the loss module's own test checks it against its CPU
       reference); the gradient cleared by an Adam step that scales it to 0 (moments stay 0) */
    CHECK_OK(cs_mesh_dev_color_adam(&d, 0.0, 0.0, 1));
    double loss2 = 0;
    CHECK_OK(cs_mesh_dev_color_grad(&d, &photo, 0.2f, &loss2, NULL));
    CHECK_OK(cs_mesh_dev_read_colors(&d, NULL, dgrad));
    double moved = 0;
    for (int i = 0; i < 9 * NT; i++) moved = fmax(moved, fabs(dgrad[i] * ratio - grad[i]));
    CHECK(moved > 1e-3 * gmax && loss2 != loss0, "D-SSIM left the gradient as it was (%.3g)", moved);
    /* Adam's first step moves every colour with a gradient by lr against its sign */
    CHECK_OK(cs_mesh_dev_color_adam(&d, 0.0, 0.0, 1));
    CHECK_OK(cs_mesh_dev_color_grad(&d, &photo, 0.f, NULL, NULL));
    const double lr = 0.01;
    CHECK_OK(cs_mesh_dev_color_adam(&d, 1.0, lr, 1));
    CHECK_OK(cs_mesh_dev_read_colors(&d, dcol, dgrad));
    for (int i = 0; i < 9 * NT; i++) {
        if (fabs(grad[i]) < 1e-3 * gmax) continue;
        double want = fmin(1.0, fmax(0.0, col[i] - lr * (grad[i] > 0 ? 1 : -1)));
        stepped++;
        CHECK(fabs(dcol[i] - want) <= 1e-5 && dgrad[i] == 0.f, "colour %d: %.6f after the step, want %.6f (gradient left %g)",
              i, dcol[i], want, dgrad[i]);
    }
    printf("  host L1 %.5f over %.0f pixels, gradient of %d colours matched, %d stepped\n", loss, cnt, 9 * NT, stepped);
    CHECK(stepped > 100, "only %d colours stepped", stepped);
    cs_mesh_dev_close(&d);
    cs_cl_close(&cl);
    free(vis), free(dvis), free(w), free(dw), free(photo.px);
    return 0;
}

/* the background shell: 20 * 4^L triangles and 10 * 4^L + 2 vertices appended after a mesh's
   own, every vertex on the sphere, closed and manifold, each face turned toward the centre
   (counter-clockwise seen from inside) */
int test_mesh_shell(void)
{
    uint64_t rs = test_seed() ^ 0x7368;
    for (int level = 0; level <= 5; level++) {
        float p0[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
        uint8_t c0[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
        uint32_t t0[3] = {0, 1, 2};
        cs_mesh m = {.pos = malloc(sizeof p0), .rgb = malloc(sizeof c0), .tri = malloc(sizeof t0), .nv = 3, .nt = 1};
        CHECK(m.pos && m.rgb && m.tri, "out of memory");
        memcpy(m.pos, p0, sizeof p0), memcpy(m.rgb, c0, sizeof c0), memcpy(m.tri, t0, sizeof t0);
        double c[3] = {10 * test_rand(&rs) - 5, 10 * test_rand(&rs) - 5, 10 * test_rand(&rs) - 5}, r = 1 + 100 * test_rand(&rs);
        CHECK_OK(cs_mesh_add_shell(&m, c, r, level));
        size_t nt = (size_t)20 << (2 * level), nv = ((size_t)10 << (2 * level)) + 2;
        CHECK(m.nt == 1 + nt && m.nv == 3 + nv && cs_mesh_shell_triangles(level) == nt, "level %d: %zu triangles, %zu vertices",
              level, m.nt, m.nv);
        CHECK(!memcmp(m.pos, p0, sizeof p0) && !memcmp(m.rgb, c0, sizeof c0) && !memcmp(m.tri, t0, sizeof t0),
              "level %d: the mesh's own part changed", level);
        for (size_t i = 3; i < m.nv; i++) {
            double d = 0;
            for (int k = 0; k < 3; k++) d += (m.pos[3 * i + k] - c[k]) * (m.pos[3 * i + k] - c[k]);
            CHECK(fabs(sqrt(d) - r) <= 1e-5 * r + 1e-5 && m.rgb[3 * i] == 128, "level %d vertex %zu: %.6g from the centre, not %.6g", level, i, sqrt(d), r);
        }
        size_t open, nonmanifold;
        cs_mesh sh = {.pos = m.pos, .rgb = m.rgb, .tri = m.tri + 3, .nv = m.nv, .nt = m.nt - 1};
        cs_mesh_edge_counts(&sh, &open, &nonmanifold);
        CHECK(open == 0 && nonmanifold == 0, "level %d: %zu open and %zu non-manifold edges", level, open, nonmanifold);
        for (size_t t = 1; t < m.nt; t++) {
            const float *a = m.pos + 3 * m.tri[3 * t], *b = m.pos + 3 * m.tri[3 * t + 1], *q = m.pos + 3 * m.tri[3 * t + 2];
            double e1[3], e2[3], n[3], out = 0;
            for (int k = 0; k < 3; k++) e1[k] = b[k] - a[k], e2[k] = q[k] - a[k];
            n[0] = e1[1] * e2[2] - e1[2] * e2[1], n[1] = e1[2] * e2[0] - e1[0] * e2[2], n[2] = e1[0] * e2[1] - e1[1] * e2[0];
            for (int k = 0; k < 3; k++) out += n[k] * ((a[k] + b[k] + q[k]) / 3 - c[k]);
            CHECK(out < 0, "level %d triangle %zu faces outward", level, t);
        }
        cs_mesh_free(&m);
    }
    return 0;
}

