/* mesher: clsplat mesh, from a model to a PLY mesh. */
#include "mesher.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cl_mem.h"
#include "depth_check.h"
#include "mesh.h"
#include "mesh_focus.h"
#include "mesh_gltf.h"
#include "mesh_pseudo.h"
#include "mesh_shell.h"
#include "mesh_shell_fit.h"
#include "mesh_texture.h"
#include "tsdf.h"
#include "util.h"
#include "viewer.h"

/* (mesher.h) */
float cs_mesh_opaque_logit(const cs_splats *s, float lg, int *passing)
{
    int m = 0, want = s->n / 100;
    for (int i = 0; i < s->n; i++) m += s->logit_opacity[i] > lg;
    if (passing) *passing = m;
    want = want < 10 ? 10 : want > CS_MESH_OPAQUE_MIN ? CS_MESH_OPAQUE_MIN : want;
    if (m >= want || s->n == 0) return lg;
    float *o = malloc(sizeof(float) * (size_t)s->n);
    if (!o) return lg;
    for (int i = 0; i < s->n; i++) o[i] = isfinite(s->logit_opacity[i]) ? s->logit_opacity[i] : -INFINITY;
    cs_sort_floats(o, (size_t)s->n);
    /* just under the quantile, so that the Gaussians at it pass the strict test */
    float q = nextafterf(o[(size_t)(CS_MESH_FAINT_QUANTILE * (s->n - 1))], -INFINITY);
    free(o);
    return isfinite(q) && q < lg ? q : lg;
}

/* (mesher.h) */
double cs_mesh_default_depth(const cs_scene *scene, const cs_splats *s, double *median)
{
    if (median) *median = -1;
    enum { MAX_PAIRS = 4 << 20 };
    int views = 0;
    for (int v = 0; v < scene->n_cams; v++) views += !scene->cams[v].is_test;
    size_t step = (size_t)s->n * (size_t)views / MAX_PAIRS + 1, m = 0;
    float lg = cs_mesh_opaque_logit(s, 0.f, NULL);
    float *d = malloc(sizeof(float) * MAX_PAIRS + sizeof(float) * (size_t)views);
    if (!d) return -1;
    for (size_t i = 0; i < (size_t)s->n && m < MAX_PAIRS; i += step) {
        if (!(s->logit_opacity[i] > lg)) continue;
        const float *p = s->means + 3 * i;
        for (int v = 0; v < scene->n_cams; v++) {
            const cs_camera *c = &scene->cams[v];
            if (c->is_test) continue;
            double u, w, z;
            if (!cs_camera_project(c, p, &u, &w, &z)) continue;
            if (u >= 0 && u <= c->width && w >= 0 && w <= c->height) d[m++] = (float)z;
        }
    }
    double r = -1;
    if (m >= 10) {
        cs_sort_floats(d, m);
        r = 1.25 * d[(size_t)(0.99 * (double)(m - 1))];
        if (median) *median = d[(m - 1) / 2];
    }
    free(d);
    return r;
}

/* whether SCENE's photos carry alpha (a Blender scene's first training photo has it) */
static int photos_have_alpha(const cs_scene *scene)
{
    if (scene->kind != CS_SCENE_BLENDER) return 0;
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) continue;
        uint8_t *a = NULL;
        int rc = cs_scene_read_alpha(&scene->cams[i], &a), has = !rc && a;
        free(a);
        return has;
    }
    return 0;
}

/* the opacity (as a logit) over which Gaussians set the bounds: 0.5, or 0.1 when the photos
   carry alpha. On a white background training leaves a light surface's Gaussians see-through,
   and over 0.5 the bounds cut it away (#38: the demo's disc with --alpha, 38.7% of the object's
   pixels undrawn); elsewhere 0.1 takes in what lies under surfaces (the demo's accuracy 0.048 ->
   0.078-0.107) */
static float bounds_logit(const cs_scene *scene)
{
    return photos_have_alpha(scene) ? -2.1972246f : 0.f;
}

/* whether O asks for the focus: --focus, --no-focus, or by default on a capture (a Blender
   scene is an object on a known background: its model's box is the object's). Same model, mesh
   at 1M with --refine 1000, H200: south_building 30k 19.41 -> 19.68 and 19.59 -> 19.72 dB, 7k
   19.59 -> 19.72, a plush dog's fast_mcmc model 19.48 -> 19.90 */
static int wants_focus(const cs_scene *scene, const cs_mesh_opts *o)
{
    return o->focus >= 0 ? o->focus : scene->kind != CS_SCENE_BLENDER;
}

/* the focus: st->focus, the box the training views see together (mesh_focus.h) within the bounds */
static int focus_bounds(const cs_scene *scene, const cs_splats *s, float lg, cs_mesh_stats *st)
{
    float f[6], *o = malloc(sizeof(float) * (s->n ? s->n : 1));
    size_t kept, sampled;
    if (!o) return cs_fail("out of host memory");
    /* MCMC leaves most Gaussians faint (a plush dog's 3k-iteration model: 106 of 60k over 0.5,
       the 80th percentile 0.06): the focus counts the brightest fifth too */
    for (int i = 0; i < s->n; i++) o[i] = s->logit_opacity[i];
    cs_sort_floats(o, (size_t)s->n);
    lg = s->n ? fminf(lg, o[(size_t)(CS_MESH_FAINT_QUANTILE * (s->n - 1))]) : lg;
    free(o);
    int rc = cs_mesh_focus_box(scene, s, lg, st->max_depth, CS_MESH_FOCUS_SHARE, f, &kept, &sampled);
    if (rc < 0) return -1;
    for (int k = 0; !rc && k < 3; k++) {
        st->focus[k] = fmaxf(f[k], st->bounds[k]), st->focus[3 + k] = fminf(f[3 + k], st->bounds[3 + k]);
        rc = !(st->focus[3 + k] > st->focus[k]);
    }
    st->focused = !rc;
    if (rc)
        printf("mesh: focus: %zu of %zu Gaussians are seen by %.0f%% of the training views: the model's box is kept\n",
               kept, sampled, 100 * CS_MESH_FOCUS_SHARE);
    else
        printf("mesh: focus %.3g x %.3g x %.3g (the model's box: %.3g x %.3g x %.3g): where %zu of %zu Gaussians "
               "seen by %.0f%% of the training views lie (--no-focus: the model's box)\n",
               st->focus[3] - st->focus[0], st->focus[4] - st->focus[1], st->focus[5] - st->focus[2],
               st->bounds[3] - st->bounds[0], st->bounds[4] - st->bounds[1], st->bounds[5] - st->bounds[2],
               kept, sampled, 100 * CS_MESH_FOCUS_SHARE);
    return 0;
}

/* max_depth (given, or cs_mesh_default_depth, or without one twice the training cameras'
   largest distance from their centroid) and the bounds: the centres of Gaussians over
   bounds_logit's opacity, 0.5 - 99.5 percentiles per axis, cut to the cameras' box grown by
   max_depth */
static int mesh_bounds(const cs_scene *scene, const cs_splats *s, const cs_mesh_opts *o, cs_mesh_stats *st)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) continue;
        double p[3];
        cs_camera_center(&scene->cams[i], p);
        for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], p[k]), hi[k] = fmax(hi[k], p[k]);
    }
    double far = cs_scene_far_depth(scene);
    if (far < 0) return cs_fail("the dataset has no training views to mesh from");
    int passing;
    float lg0 = bounds_logit(scene), lg = cs_mesh_opaque_logit(s, lg0, &passing);
    if (lg < lg0)
        printf("mesh: %d of %d Gaussians over %.2f opacity (a faint model, as MCMC leaves one): the bounds and the "
               "depth limit take the brightest %.0f%%, over %.3f\n",
               passing, s->n, 1 / (1 + exp(-lg0)), 100 * (1 - CS_MESH_FAINT_QUANTILE), 1 / (1 + exp(-lg)));
    double median, seen = cs_mesh_default_depth(scene, s, &median);
    st->median_depth = (float)median;
    if (o->max_depth > 0) seen = -1;
    if (o->max_depth <= 0)
        printf("mesh: depth limit %.4g (%s; --max-depth to choose)\n", seen > 0 ? seen : far,
               seen > 0 ? "the training views see 99% of the opaque Gaussians within it, +25%" : "twice the cameras' spread");
    if (seen > 0) far = seen;
    st->max_depth = (float)(o->max_depth > 0 ? o->max_depth : far);
    if (!(st->max_depth > 0)) return cs_fail("the cameras do not span a scene (one position): give --max-depth");
    float *v = malloc(sizeof(float) * (s->n ? s->n : 1));
    if (!v) return cs_fail("out of host memory");
    for (int k = 0; k < 3; k++) {
        int m = 0;
        for (int i = 0; i < s->n; i++)
            if (s->logit_opacity[i] > lg && isfinite(s->means[3 * i + k])) v[m++] = s->means[3 * i + k];
        if (m < 10) {
            free(v);
            return cs_fail("the model has %d Gaussians over %.1f opacity: nothing to mesh", m, 1 / (1 + exp(-lg)));
        }
        cs_sort_floats(v, (size_t)m);
        st->bounds[k] = fmaxf(v[(size_t)(m * 0.005)], (float)(lo[k] - st->max_depth));
        st->bounds[3 + k] = fminf(v[(size_t)(m * 0.995)], (float)(hi[k] + st->max_depth));
        if (!(st->bounds[3 + k] > st->bounds[k])) {
            free(v);
            return cs_fail("%s %g: no Gaussian lies that close to the cameras (the default limit is %g): give a "
                           "larger one",
                           o->max_depth > 0 ? "--max-depth" : "the default depth limit", st->max_depth, far);
        }
    }
    free(v);
    return wants_focus(scene, o) ? focus_bounds(scene, s, lg, st) : 0;
}

/* a slab of L layers within AVAIL bytes and its largest buffer (colours) within the device's
   largest allocation */
static int slab_fits(const cs_cl *cl, const cs_tsdf_grid *g, int L, size_t avail)
{
    return cs_tsdf_slab_bytes(g, L) <= avail && (size_t)g->nx * g->ny * L * 16 <= cl->max_alloc;
}

/* The default voxel: what one pixel of a training view spans at the median distance from the
 * training cameras to the bounds' centre (finer voxels than the model was trained to show add
 * time and triangles, not detail), within CS_MESH_MIN_RESOLUTION to CS_MESH_DEFAULT_RESOLUTION
 * voxels along the longest side. */
static float default_voxel(const cs_scene *scene, const float box[6], float longest, char *why, size_t n)
{
    double c[3], *px = malloc(sizeof(double) * (size_t)(scene->n_cams > 0 ? scene->n_cams : 1));
    int m = 0;
    for (int k = 0; k < 3; k++) c[k] = 0.5 * (box[k] + box[3 + k]);
    for (int i = 0; px && i < scene->n_cams; i++) {
        const cs_camera *cam = &scene->cams[i];
        if (cam->is_test) continue;
        double p[3];
        cs_camera_center(cam, p);
        double d = sqrt((p[0] - c[0]) * (p[0] - c[0]) + (p[1] - c[1]) * (p[1] - c[1]) + (p[2] - c[2]) * (p[2] - c[2]));
        px[m++] = d / fmax(cam->fx, cam->fy);
    }
    float pixel = px && m ? (float)cs_median(px, m) : 0.f;
    free(px);
    float lo = longest / CS_MESH_DEFAULT_RESOLUTION, hi = longest / CS_MESH_MIN_RESOLUTION;
    float vox = pixel > 0 ? fminf(fmaxf(pixel, lo), hi) : lo;
    snprintf(why, n, "%s", vox == pixel ? "a training pixel at the cameras' median distance"
                           : vox == lo  ? "the finest default, " CS_STR(CS_MESH_DEFAULT_RESOLUTION) " along the longest side"
                                        : "the coarsest default, " CS_STR(CS_MESH_MIN_RESOLUTION) " along the longest side");
    return vox;
}

double cs_mesh_trunc_voxels(double asked, int capture, double median_depth, double voxel)
{
    if (asked > 0) return asked;
    if (!capture || !(median_depth > 0) || !(voxel > 0) || CS_MESH_TRUNC_DEPTH * median_depth <= CS_MESH_DEFAULT_TRUNC * voxel)
        return CS_MESH_DEFAULT_TRUNC;
    return fmin(CS_MESH_TRUNC_DEPTH * median_depth / voxel, CS_MESH_TRUNC_MAX);
}

/* the grid over the bounds (grown by the truncation), contracted past them by S half-sizes
   (contract.h; the voxel set by the bounds), and the slab height that fits the budget */
static int plan_grid(cs_cl *cl, const cs_scene *scene, const cs_mesh_opts *o, cs_mesh_stats *st, cs_tsdf_grid *g,
                     int *layers)
{
    float ext[3], longest = 0;
    const float *box = st->focused ? st->focus : st->bounds; /* the contraction's inner box */
    for (int k = 0; k < 3; k++) ext[k] = box[3 + k] - box[k], longest = fmaxf(longest, ext[k]);
    char why[128] = "--voxel";
    float vox = o->voxel > 0 ? (float)o->voxel : o->resolution > 0 ? longest / o->resolution : 0.f;
    if (o->resolution > 0 && o->voxel <= 0) snprintf(why, sizeof why, "--grid %d", o->resolution);
    if (o->voxel <= 0 && o->resolution <= 0) vox = default_voxel(scene, box, longest, why, sizeof why);
    if (!(vox > 0)) return cs_fail("the model's bounds are empty");
    float s = o->contract > 0 ? (float)o->contract : st->focused ? 1.f : 0.f;
    g->ct.s = s;
    float lo[3];
    for (int k = 0; k < 3; k++) {
        g->ct.c[k] = 0.5f * (box[k] + box[3 + k]);
        g->ct.h[k] = fmaxf(0.5f * ext[k], vox); /* a flat box still contracts around itself */
        if (s > 0) ext[k] = 2 * g->ct.h[k] * (1 + s);
        lo[k] = s > 0 ? g->ct.c[k] - 0.5f * ext[k] : box[k];
    }
    double tv = cs_mesh_trunc_voxels(o->trunc_voxels, scene->kind != CS_SCENE_BLENDER, st->median_depth, vox);
    if (o->trunc_voxels <= 0 && tv != CS_MESH_DEFAULT_TRUNC)
        printf("mesh: truncation %.3g voxels: %g%% of the views' median depth, the least on a capture (--trunc to choose)\n",
               tv, 100 * CS_MESH_TRUNC_DEPTH);
    float pad = (float)(tv + 1) * vox;
    int nv[3];
    for (int k = 0; k < 3; k++) {
        double cnt = ceil((ext[k] + 2 * pad) / vox) + 1;
        if (cnt > 16384 && pad > ext[k])
            return cs_fail("--trunc %g: a truncation that wide pads the grid to %.0f voxels along an axis (16384 at "
                           "most): give a smaller one", tv, cnt);
        if (cnt > 16384) return cs_fail("%s %g: %.0f voxels along an axis (16384 at most)", o->voxel > 0 ? "--voxel" : "voxel",
                                        vox, cnt);
        nv[k] = (int)cnt;
        g->origin[k] = lo[k] - pad;
    }
    g->nx = nv[0], g->ny = nv[1], g->nz = nv[2];
    g->voxel = vox;
    printf("mesh: voxel %.4g (%s; --voxel or --grid to choose), grid %dx%dx%d\n", vox, why, g->nx, g->ny, g->nz);
    if (s > 0)
        printf("mesh: past the %s (%.3g x %.3g x %.3g) the voxels grow with the distance, out to the depth limit (a "
               "band of %g half-sizes; %s)\n", st->focused ? "focus" : "model's box", 2 * g->ct.h[0], 2 * g->ct.h[1],
               2 * g->ct.h[2], s, st->focused ? "--contract S to choose" : "--contract 0 to end the grid there");
    g->trunc = (float)tv * vox;
    g->max_depth = st->max_depth;
    g->plane = o->depth_plane;
    g->carve = (float)o->carve;
    st->nx = g->nx, st->ny = g->ny, st->nz = g->nz, st->voxel = vox;
    /* the budget less what is allocated, half of it kept for the extracted triangles, or less
       as --volume-mb says */
    size_t budget = cl->mem.budget != (size_t)-1 ? cl->mem.budget : (size_t)(cl->global_mem * 0.97);
    size_t avail = budget > cl->mem.cur_total ? (budget - cl->mem.cur_total) / 2 : 0;
    int capped = o->volume_mb > 0 && o->volume_mb * 1048576.0 < (double)avail;
    if (capped) avail = (size_t)(o->volume_mb * 1048576.0);
    int L = g->nz;
    while (L > 2 && !slab_fits(cl, g, L, avail)) L--;
    if (!slab_fits(cl, g, L, avail) && capped)
        return cs_fail("--volume-mb %g: the thinnest slab of the grid, %dx%dx2 voxels, takes %.2f MiB: give at least that",
                       o->volume_mb, g->nx, g->ny, cs_tsdf_slab_bytes(g, 2) / 1048576.0);
    if (!slab_fits(cl, g, L, avail))
        return cs_fail("a TSDF slab of %dx%dx2 voxels (%.1f MiB) does not fit the memory left (%.1f MiB): give a "
                       "larger --voxel",
                       g->nx, g->ny, cs_tsdf_slab_bytes(g, 2) / 1048576.0, avail / 1048576.0);
    *layers = L;
    return 0;
}

/* renders the first training view, so the renderer's pool is allocated before the volume takes
   its share of the budget */
static int first_view(cs_viewer *w, const cs_scene *scene, int degree)
{
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) continue;
        cs_view v;
        cs_view_from_camera(&scene->cams[i], &v);
        return cs_render_forward_sync(&w->r, &w->m, &v, degree, scene->background);
    }
    return 0;
}

/* the last rendered view's two depth planes (W x H each: expected, median) read into a new host
   array; NULL with a message on failure */
static float *read_depths(cs_renderer *r, int W, int H)
{
    size_t n = (size_t)W * H;
    float *d = malloc(sizeof(float) * 2 * (n ? n : 1));
    if (!d) cs_fail("out of host memory (a %dx%d depth map)", W, H);
    else if (cs_render_read_depth(r, W, H, d)) free(d), d = NULL;
    return d;
}

/* A Blender scene's photos carry alpha: where it says object (>= 0.5) but the model is too
   transparent there for a median depth (a light surface on a white background, whose Gaussians
   training left see-through), the expected depth is fused instead, so the surface is kept and
   not left a hole. *FILLED: pixels so filled. */
static int alpha_fill(cs_renderer *r, const cs_scene *scene, const cs_camera *c, int plane, long *filled)
{
    uint8_t *a = NULL;
    if (plane != 1 || scene->kind != CS_SCENE_BLENDER) return 0;
    if (cs_scene_read_alpha(c, &a)) return -1;
    if (!a) return 0;
    size_t n = (size_t)c->width * c->height;
    float *d = read_depths(r, c->width, c->height);
    int rc = d ? 0 : -1;
    long k = 0;
    for (size_t p = 0; !rc && p < n; p++)
        if (a[p] >= 128 && !(d[n + p] > 0.f) && d[p] > 0.f) d[n + p] = d[p], k++;
    if (!rc && k) rc = cs_buf_write(r->cl, &r->depth_img, 0, sizeof(float) * 2 * n, d);
    *filled += k;
    free(a), free(d);
    return rc;
}

/* zeroes the depths (plane PLANE) of the view just rendered, C's view K, that its neighbours do
   not see alike (depth_check.h); counts into ST in the first slab */
static int check_depth(cs_renderer *r, const cs_depth_check *c, int k, int plane, cs_mesh_stats *st)
{
    const cs_view *v = &c->view[k];
    size_t n = (size_t)v->width * v->height;
    float *d = read_depths(r, v->width, v->height);
    if (!d) return -1;
    long seen = 0, dropped = cs_depth_check_filter(c, k, d + plane * n, &seen);
    int rc = dropped ? cs_buf_write(r->cl, &r->depth_img, 0, sizeof(float) * 2 * n, d) : 0;
    if (st->slabs == 0) st->dcheck_seen += seen, st->dcheck_dropped += dropped;
    free(d);
    return rc;
}

/* fuses every training view into slab T (the slab ST->slabs + 1 of SLABS); the renderer of W
   makes each view's depths, checked against their neighbours' with DC (NULL: not). A line every
   10 s says how far it is (minutes on a CPU). */
static int fuse_views(cs_viewer *w, const cs_scene *scene, int degree, cs_tsdf *t, const cs_depth_check *dc, int slabs,
                      cs_mesh_stats *st)
{
    int total = cs_scene_count(scene, 0), k = 0;
    double t0 = cs_now(), said = t0;
    st->views = 0;
    for (int i = 0; i < scene->n_cams; i++) {
        if (scene->cams[i].is_test) continue;
        cs_view v;
        cs_view_from_camera(&scene->cams[i], &v);
        if (cs_render_forward_sync(&w->r, &w->m, &v, degree, scene->background) ||
            alpha_fill(&w->r, scene, &scene->cams[i], t->g.plane, &st->alpha_filled) ||
            (dc && check_depth(&w->r, dc, k, t->g.plane, st)) || cs_tsdf_fuse(t, &w->r, &v))
            return -1;
        k++, st->views++;
        if (cs_now() - said > 10) {
            said = cs_now();
            printf("mesh: fusing slab %d of %d: %d of %d views in %.0f s\n", st->slabs + 1, slabs, st->views, total, said - t0);
            fflush(stdout);
        }
    }
    return 0;
}

/* DC for SCENE's training views, each rendered once and its depth plane PLANE kept (depth_check.h) */
static int depth_check_views(cs_viewer *w, const cs_scene *scene, int degree, int min_agree, int carve, int plane,
                             cs_depth_check *dc)
{
    int n = cs_scene_count(scene, 0), k = 0;
    cs_view *v = malloc(sizeof *v * (n ? n : 1));
    if (!v) return cs_fail("out of host memory (%d views)", n);
    for (int i = 0; i < scene->n_cams; i++)
        if (!scene->cams[i].is_test) cs_view_from_camera(&scene->cams[i], &v[k++]);
    int rc = cs_depth_check_init(dc, v, n, min_agree, CS_DCHECK_HOST_BYTES);
    free(v);
    if (rc) return -1;
    dc->carve_dropped = carve;
    double t0 = cs_now(), said = t0;
    for (k = 0; k < n && !rc; k++) {
        const cs_view *vk = &dc->view[k];
        float *d = NULL;
        rc = cs_render_forward_sync(&w->r, &w->m, vk, degree, scene->background) ||
             !(d = read_depths(&w->r, vk->width, vk->height)) ||
             cs_depth_check_store(dc, k, d + plane * (size_t)vk->width * vk->height);
        free(d);
        if (!rc && cs_now() - said > 10) {
            said = cs_now();
            printf("mesh: the depth check's views: %d of %d in %.0f s\n", k + 1, n, said - t0);
            fflush(stdout);
        }
    }
    if (rc) cs_depth_check_free(dc);
    return rc ? -1 : 0;
}

/* every slab fused and extracted into *SOUP */
static int fuse_and_extract(cs_cl *cl, cs_viewer *w, const cs_scene *scene, int degree, const cs_tsdf_grid *g, int L,
                            const cs_depth_check *dc, cs_soup_vertex **soup, size_t *nt, cs_mesh_stats *st)
{
    size_t cap = 0;
    int slabs = (g->nz - 2) / (L - 1) + 1;
    for (int z0 = 0; z0 < g->nz - 1; z0 += L - 1) {
        int layers = g->nz - z0 < L ? g->nz - z0 : L;
        cs_tsdf t;
        double t0 = cs_now();
        if (cs_tsdf_begin(&t, cl, &w->k, g, z0, layers) || fuse_views(w, scene, degree, &t, dc, slabs, st) ||
            cs_cl_finish(cl)) {
            cs_tsdf_free(&t);
            return -1;
        }
        double t1 = cs_now();
        int rc = cs_tsdf_extract(&t, soup, nt, &cap);
        st->passes += t.passes;
        cs_tsdf_free(&t);
        st->secs_fuse += t1 - t0, st->secs_extract += cs_now() - t1;
        st->slabs++;
        if (rc) return -1;
    }
    st->soup_tris = *nt;
    return 0;
}

/* SCENE's training cameras' centres (*N of them, x y z each; the caller frees them); NULL with a
   message when out of host memory */
static double *training_centres(const cs_scene *scene, int *n)
{
    double *c = malloc(sizeof(double) * 3 * (scene->n_cams ? scene->n_cams : 1));
    *n = 0;
    if (!c) {
        cs_fail("out of host memory (the training cameras' centres)");
        return NULL;
    }
    for (int i = 0; i < scene->n_cams; i++)
        if (!scene->cams[i].is_test) cs_camera_center(&scene->cams[i], c + 3 * (*n)++);
    return c;
}

/* drops M's triangles within RADIUS of a training camera (st->near_dropped; printed) */
static int drop_near_cameras(cs_mesh *m, const cs_scene *scene, double radius, cs_mesh_stats *st)
{
    int n;
    double *c = training_centres(scene, &n);
    if (!c) return -1;
    int rc = cs_mesh_drop_near(m, c, n, radius, &st->near_dropped);
    free(c);
    st->near_radius = (float)radius;
    if (!rc)
        printf("mesh: %zu triangles within %.3g of a training camera dropped (floaters against the lens: %.3g of the "
               "views' median depth, --near-cut)\n", st->near_dropped, radius, radius / st->median_depth);
    return rc;
}

/* the texture's subdivisions for M: ASKED (1..CS_TEX_MAX_R), or with -1 a lattice cell about a
   training pixel (cs_mesh_tex_footprint); -1 with a message when the atlas cannot hold them */
static int texture_level(int asked, const cs_mesh *m, const cs_scene *scene, int *r)
{
    int most = cs_mesh_tex_auto(m->nt), n = 0;
    if (asked < 0 && most == 0)
        return cs_fail("--texture auto: %zu triangles do not fit an atlas of %d texels a side even at 1 subdivision; "
                       "lower --max-triangles", m->nt, CS_TEX_ATLAS_SIDE);
    if (asked > most)
        return cs_fail("--texture %d: %zu triangles fit an atlas of %d texels a side at %d subdivisions at most "
                       "(--texture auto chooses within it)", asked, m->nt, CS_TEX_ATLAS_SIDE, most);
    *r = asked;
    if (asked > 0) return 0;
    cs_camera *train = malloc(sizeof(cs_camera) * (scene->n_cams ? scene->n_cams : 1));
    if (!train) return cs_fail("out of host memory");
    for (int i = 0; i < scene->n_cams; i++)
        if (!scene->cams[i].is_test) train[n++] = scene->cams[i];
    double edge;
    *r = cs_mesh_tex_footprint(m, train, n, &edge);
    free(train);
    printf("mesh: texture of %d subdivisions (the triangles' median edge: %.2g training pixels; at most %d fit the "
           "atlas)\n", *r, edge, most);
    return 0;
}

/* the background shell's level: --shell, or with --refine on a capture that is not a Blender
   scene (those are objects on a known background) the default, at most an eighth of the
   triangle budget */
static int shell_level(const cs_scene *scene, const cs_mesh_opts *o)
{
    if (o->shell >= 0) return o->shell;
    if (o->refine <= 0 || scene->kind == CS_SCENE_BLENDER) return 0;
    int level = CS_MESH_SHELL_DEFAULT;
    while (level > 2 && o->max_triangles > 0 && (long)cs_mesh_shell_triangles(level) * 8 > o->max_triangles) level--;
    return level;
}

/* the shell's radius round the training cameras' centroid C: twice the depth limit plus their
   spread, behind every surface the fusion kept */
static double shell_place(const cs_scene *scene, const cs_mesh_stats *st, double c[3])
{
    return 2 * (st->max_depth + fmax(0, cs_scene_camera_spread(scene, c)));
}

/* the shell of LEVEL, brought in to the background the views see where FIT (NULL: not) says */
static int add_shell(cs_mesh *m, const cs_scene *scene, int level, const cs_shell_fit *fit, cs_mesh_stats *st)
{
    double c[3], radius = shell_place(scene, st, c);
    size_t before = m->nt, first = m->nv;
    if (cs_mesh_add_shell(m, c, radius, level)) return -1;
    st->shell_tris = m->nt - before, st->shell_radius = (float)radius;
    printf("mesh: background shell of %zu triangles (level %d) at radius %.4g around the cameras\n", st->shell_tris,
           level, radius), fflush(stdout);
    if (!fit) return 0;
    if (cs_shell_fit_apply(fit, m, first, m->nv - first, before, &st->shell_fitted)) return -1;
    printf("mesh: %zu of its %zu vertices in directions fitted to the background the views see, the others between them (--shell-fit)\n", st->shell_fitted,
           m->nv - first), fflush(stdout);
    return 0;
}

/* a stored depth for the shell's fit: one the check drops or past the depth limit is
   background, one it keeps the scene's surface */
typedef struct {
    cs_shell_fit *fit;
    float max_depth;
} shell_samples;

static void shell_sample(void *arg, int k, const float p[3], float depth, int dropped)
{
    shell_samples *s = arg;
    (void)k;
    cs_shell_fit_surface(s->fit, p, dropped || depth > s->max_depth);
}

/* FIT from the depth check's stored maps DC (at most about 4M samples) */
static int fit_shell(const cs_depth_check *dc, const cs_scene *scene, const cs_mesh_stats *st, cs_shell_fit *fit)
{
    double c[3], radius = shell_place(scene, st, c), px = 0;
    int n;
    double *cams = training_centres(scene, &n);
    int rc = cams ? cs_shell_fit_init(fit, c, radius, cams, n) : -1;
    free(cams);
    if (rc) return -1;
    for (int k = 0; k < dc->n; k++) px += (double)dc->sw[k] * dc->sh[k];
    int every = (int)ceil(sqrt(px / 4e6));
    shell_samples s = {.fit = fit, .max_depth = st->max_depth};
    for (int k = 0; k < dc->n; k++) cs_depth_check_points(dc, k, every, shell_sample, &s);
    return 0;
}

/* the fusion's triangle SOUP welded into M */
static int weld_soup(const cs_soup_vertex *soup, cs_mesh_stats *st, cs_mesh *m)
{
    if (!st->soup_tris)
        return cs_fail("no surface was found, so no mesh is written (voxel %g over bounds of %g x %g x %g: a voxel that "
                       "large, or a depth limit that short, leaves nothing; try the defaults)",
                       st->voxel, st->bounds[3] - st->bounds[0], st->bounds[4] - st->bounds[1], st->bounds[5] - st->bounds[2]);
    if (st->soup_tris >= 1000000) /* minutes of host work at tens of millions: said first */
        printf("mesh: welding %zu triangles...\n", st->soup_tris), fflush(stdout);
    if (cs_mesh_weld(soup, st->soup_tris, m)) return -1;
    st->welded_vertices = m->nv, st->welded_tris = m->nt;
    return 0;
}

/* the mesh of --from PATH into M, in place of the fusion's */
static int read_from(const char *path, cs_mesh_stats *st, cs_mesh *m)
{
    if (cs_mesh_read_ply(path, m)) return -1;
    if (!m->nt) {
        cs_mesh_free(m);
        return cs_fail("%s holds no triangle", path);
    }
    st->welded_vertices = m->nv, st->welded_tris = m->nt;
    printf("mesh: %zu triangles and %zu vertices read from %s (--from: in place of the fusion)\n", m->nt, m->nv, path);
    fflush(stdout);
    return 0;
}

/* the geometry steps to try for O on SCENE into STEPS (mesh_step.h); how many (0: one step, RO's) */
static int steps_to_try(const cs_scene *scene, const cs_mesh_opts *o, double *steps)
{
    if (o->refine <= 0 || o->refine_geometry <= 0) return 0;
    int given = o->geom.lr >= 0 || o->n_steps > 1;
    int n = cs_mesh_steps_to_try(scene, o->steps, o->n_steps, given, steps);
    if (!n && !given && scene->kind != CS_SCENE_BLENDER)
        printf("mesh: one training view, none to hold out to choose the geometry step among: %g\n",
               (double)CS_MESH_GEOM_LR_CAPTURE), fflush(stdout);
    return n;
}

/* RO's geometry step chosen among the N STEPS by held-out training views (mesh_step.h), said */
static int choose_step(cs_cl *cl, const cs_mesh *m, const cs_scene *scene, const double *steps, int n,
                       const cs_mesh_exposure *x, cs_mesh_refine_opts *ro, cs_mesh_step_choice *ch)
{
    printf("mesh: trying %d geometry steps (--refine-step), each refining over %d + %d views (the refinement's "
           "%.0f%%) on the training views less every %dth, judged at those...\n", n,
           cs_mesh_trial_views(ro->iterations), cs_mesh_trial_views(ro->geometry), 100 * CS_MESH_STEP_TRIAL_SHARE,
           CS_MESH_STEP_HOLD_EVERY), fflush(stdout);
    if (cs_mesh_choose_step(m, scene, cl, ro, x, steps, n, 1, ch)) return -1;
    ro->geom.lr = ch->step[ch->chosen];
    return 0;
}

/* M (the fusion's or --from's; freed here) cut to the budget, refined, written and judged */
static int finish_mesh(cs_cl *cl, cs_mesh *mp, const cs_scene *scene, const cs_mesh_opts *o,
                       const cs_mesh_pseudo *pseudo, const cs_shell_fit *fit, const cs_mesh_exposure *x,
                       cs_mesh_stats *st)
{
    long budget = o->max_triangles; /* for the scene, the shell taken off */
    cs_mesh m = *mp;
    double t0 = cs_now();
    int level = shell_level(scene, o);
    if (level > 0 && o->refine <= 0) {
        cs_mesh_free(&m);
        return cs_fail("--shell %d needs --refine N: the shell's colours come from fitting it to the photos", level);
    }
    if (level > 0 && o->max_triangles > 0) { /* the budget holds the shell too */
        if (o->max_triangles <= (long)cs_mesh_shell_triangles(level)) {
            cs_mesh_free(&m);
            return cs_fail("--shell %d makes %zu triangles, --max-triangles %ld leaves none for the scene: a lower level",
                           level, cs_mesh_shell_triangles(level), o->max_triangles);
        }
        budget = o->max_triangles - (long)cs_mesh_shell_triangles(level);
    }
    bool big = m.nt >= 1000000;
    int rc = o->keep_components > 0 ? cs_mesh_keep_largest(&m, (size_t)o->keep_components, &st->components) : 0;
    st->dropped_tris = st->welded_tris - m.nt;
    double t1 = cs_now();
    if (big && budget > 0 && m.nt > (size_t)budget)
        printf("mesh: simplifying %zu triangles to at most %ld (meshoptimizer: about 1 s a million on the H100 machine's host)...\n",
               m.nt, budget), fflush(stdout);
    if (!rc && budget > 0) rc = cs_mesh_simplify(&m, (size_t)budget, &st->simplify_error);
    /* simplification can split a piece: the pieces are counted again */
    size_t simplified = m.nt, again;
    if (!rc && o->keep_components > 0 && budget > 0)
        rc = cs_mesh_keep_largest(&m, (size_t)o->keep_components, &again);
    st->dropped_simplified = simplified - m.nt;
    if (!rc && o->near_cut > 0 && st->median_depth > 0) rc = drop_near_cameras(&m, scene, o->near_cut * st->median_depth, st);
    size_t own = m.nv; /* the scene's vertices: the shell's stay where they are */
    if (!rc && level > 0) rc = add_shell(&m, scene, level, fit, st);
    cs_mesh_refine_opts ro = {.iterations = o->refine, .samples = o->refine_samples,
                              .lr = 0.01, .dssim = o->refine_dssim, .seed = 1,
                              .geometry = o->refine_geometry, .nmove = own, .geom = o->geom, .profile = o->profile,
                              .texture_views = o->texture_views, .pseudo = pseudo->n ? pseudo : NULL,
                              .exposure = x, .exposure_lr = o->refine_exposure ? CS_MESH_EXPOSURE_LR : 0};
    cs_mesh_exposure learned = {0};
    ro.learned = &learned;
    if (ro.geom.lr < 0) ro.geom.lr = scene->kind == CS_SCENE_BLENDER ? CS_MESH_GEOM_LR : CS_MESH_GEOM_LR_CAPTURE;
    if (!rc && o->texture) rc = texture_level(o->texture, &m, scene, &ro.texture);
    double steps[CS_MESH_STEPS_MAX];
    int n_steps = rc ? 0 : steps_to_try(scene, o, steps), several = n_steps > 1;
    if (several) rc = choose_step(cl, &m, scene, steps, n_steps, x, &ro, &st->step);
    if (!rc && o->refine > 0) {
        char more[96] = "";
        if (o->refine_geometry > 0)
            snprintf(more, sizeof more, ", then their positions too over more (step %g mean edges%s)", ro.geom.lr,
                     several ? ", chosen" : o->geom.lr < 0 ? ", --refine-step to choose" : "");
        char aa[64] = "";
        if (ro.samples > 1) snprintf(aa, sizeof aa, " (each pixel the mean of %d x %d samples)", ro.samples, ro.samples);
        printf("mesh: fitting the vertex colours of %zu triangles to the training photos%s over %d views%s...\n", m.nt,
               aa, o->refine, more), fflush(stdout);
        rc = cs_mesh_refine_colors(&m, scene, cl, &ro, 1, &st->refine);
    }
    double t2 = cs_now();
    if (!rc) rc = cs_mesh_is_glb(o->out_path) ? cs_mesh_write_glb(o->out_path, &m) : cs_mesh_write_ply(o->out_path, &m);
    st->secs_weld = t1 - t0, st->secs_simplify = t2 - t1 - st->refine.seconds - st->step.secs_trials;
    st->secs_write = cs_now() - t2;
    st->vertices = m.nv, st->triangles = m.nt;
    cs_mesh_edge_counts(&m, &st->boundary_edges, &st->nonmanifold_edges);
    struct stat sb;
    st->file_bytes = !rc && stat(o->out_path, &sb) == 0 ? (size_t)sb.st_size : 0;
    const cs_mesh_exposure *drawn_under = learned.rows ? &learned : x;
    if (!rc && o->psnr) rc = cs_mesh_eval(&m, scene, drawn_under, o->psnr_samples, o->renders, &st->eval);
    if (!rc && o->psnr && o->psnr_samples > 1) rc = cs_mesh_eval(&m, scene, drawn_under, 1, NULL, &st->eval_centres);
    cs_mesh_exposure_free(&learned);
    cs_mesh_free(&m);
    return rc;
}

/* the splat model's drawings between the training views for the refinement (O->pseudo a view),
   fewer a view where they would pass CS_MESH_PSEUDO_MAX_GIB */
static int pseudo_views(cs_viewer *w, const cs_scene *scene, int degree, const cs_mesh_opts *o, cs_mesh_pseudo *p)
{
    int asked = o->pseudo;
    if (o->refine <= 0 || asked <= 0) return 0;
    if (cs_mesh_pseudo_cameras(scene, asked, (double)CS_MESH_PSEUDO_MAX_GIB * 1073741824.0, p) ||
        cs_mesh_pseudo_draw(w, scene, degree, p))
        return -1;
    printf("mesh: %d views between the training views (%d a view%s) drawn by the model for the refinement "
           "(--pseudo-views to choose)\n", p->n, p->per_view,
           p->capped                ? ", fewer than asked: their drawings would take over " CS_STR(CS_MESH_PSEUDO_MAX_GIB) " GiB"
           : p->per_view < asked ? ", fewer than asked: as many as there are other training views"
                                 : "");
    fflush(stdout);
    return 0;
}

/* the model's per-view exposure from O->exposure into X (said), when it is set and the refinement
   or --psnr takes it; *USED 1 then */
static int open_exposure(const cs_scene *scene, const cs_mesh_opts *o, cs_mesh_exposure *x, int *used)
{
    *used = 0;
    if (o->refine_exposure && o->refine > 0)
        printf("mesh: the refinement learns the training views' exposures (3x4 colour transforms, Adam step %g falling "
               "to a tenth) from %s%s\n", CS_MESH_EXPOSURE_LR, o->exposure ? "the model's" : "the identity",
               o->psnr ? "; --psnr draws a held-out view under the blend of its " CS_STR(CS_EXPOSURE_NEAREST)
                         " nearest training views' learned ones" : "");
    if (!o->exposure || (o->refine <= 0 && !o->psnr)) return 0;
    if (cs_mesh_exposure_load(x, scene, o->exposure)) return -1;
    *used = 1;
    printf("mesh: the model's per-view exposure (%d of %d training views' transforms from %s): %s%s%s; the mesh "
           "is the scene at the identity (--no-exposure: every view at the identity)\n",
           x->found, x->split.n_train, o->exposure,
           o->refine > 0 ? "the refinement compares each training photo with its view's transform of the drawing" : "",
           o->refine > 0 && o->psnr ? ", " : "",
           o->psnr ? "--psnr draws a held-out view under the blend of its " CS_STR(CS_EXPOSURE_NEAREST) " nearest training views' transforms" : "");
    fflush(stdout);
    return 0;
}

int cs_mesh_model(cs_cl *cl, const cs_config *cfg, const cs_scene *scene, const cs_splats *s, const cs_mesh_opts *o,
                  cs_mesh_stats *st)
{
    memset(st, 0, sizeof *st);
    if (cfg->memory.vram_budget_mb > 0) cl->mem.budget = (size_t)(cfg->memory.vram_budget_mb * 1048576.0);
    cs_mem_window_start(cl);
    cs_tsdf_grid g;
    int L = 0;
    cs_viewer w;
    if (mesh_bounds(scene, s, o, st) || cs_viewer_open(&w, cl, cfg, s, scene, CS_PROGS_EVAL | CS_PROGS(mesh))) return -1;
    w.r.want_depth = 1;
    cs_soup_vertex *soup = NULL;
    size_t nt = 0;
    cs_depth_check dc = {0};
    st->consistency = o->from                ? 0
                      : o->consistency >= 0 ? o->consistency
                      : scene->kind == CS_SCENE_BLENDER ? 0
                                                       : CS_MESH_CONSISTENCY;
    if (o->carve_dropped && st->consistency == 0)
        printf("mesh: --carve-dropped changes nothing here: no depth check runs (--consistency 0, the default on Blender "
               "scenes), so no depth is dropped\n");
    int rc = o->from ? 0
             : first_view(&w, scene, s->sh_degree) || plan_grid(cl, scene, o, st, &g, &L) ||
                     (st->consistency > 0 &&
                      depth_check_views(&w, scene, s->sh_degree, st->consistency, o->carve_dropped, g.plane, &dc)) ||
                     fuse_and_extract(cl, &w, scene, s->sh_degree, &g, L, st->consistency > 0 ? &dc : NULL, &soup, &nt, st)
                 ? -1
                 : 0;
    cs_shell_fit fit = {0};
    int fitted = !rc && o->shell_fit && st->consistency > 0 && shell_level(scene, o) > 0;
    if (!rc && o->shell_fit && !fitted)
        printf("mesh: --shell-fit changes nothing here: %s\n",
               shell_level(scene, o) == 0 ? "there is no background shell (it comes with --refine on a capture, or --shell L)"
                                          : "no depth check runs (--consistency 0), so no depth is known as background");
    if (fitted) rc = fit_shell(&dc, scene, st, &fit);
    cs_depth_check_free(&dc);
    if (!rc && st->consistency > 0)
        printf("mesh: %.1f%% of the rendered depths dropped: fewer than %d of a view's %d nearest views see a surface "
               "there (--consistency to choose, 0: none)\n",
               st->dcheck_seen ? 100.0 * st->dcheck_dropped / st->dcheck_seen : 0.0, st->consistency, CS_DCHECK_NEIGHBOURS);
    cs_mesh_pseudo pseudo = {0};
    if (!rc) rc = pseudo_views(&w, scene, s->sh_degree, o, &pseudo);
    st->peak_device = cl->mem.window_peak;
    cs_viewer_close(&w, cl);
    cs_mesh_exposure x = {0};
    int exposed = 0;
    if (!rc) rc = open_exposure(scene, o, &x, &exposed);
    cs_mesh m = {0};
    if (!rc) rc = o->from ? read_from(o->from, st, &m) : weld_soup(soup, st, &m);
    if (!rc) rc = finish_mesh(cl, &m, scene, o, &pseudo, fitted ? &fit : NULL, exposed ? &x : NULL, st);
    if (exposed) cs_mesh_exposure_free(&x);
    cs_shell_fit_free(&fit);
    cs_mesh_pseudo_free(&pseudo);
    free(soup);
    return rc;
}
