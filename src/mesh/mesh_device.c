/* mesh_device: launchers of cl/mesh_raster.cl (mesh_device.h). */
#include "mesh_device.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "util.h"

#define MESH_DEV_WG 64

int cs_mesh_dev_open(cs_mesh_dev *d, cs_cl *cl, const cs_mesh *m, size_t max_px, int samples, const float bg[3])
{
    memset(d, 0, sizeof *d);
    d->cl = cl, d->nv = m->nv, d->nt = m->nt, d->max_px = max_px ? max_px : 1;
    d->bg = (cl_float4){{bg[0], bg[1], bg[2], 0.f}};
    if (samples < 1 || samples > CS_MESH_RASTER_MAX_SAMPLES)
        return cs_fail("%d samples a side of a pixel: 1 to %d", samples, CS_MESH_RASTER_MAX_SAMPLES);
    d->S = samples;
    size_t hi = d->max_px * (size_t)(samples * samples); /* the drawing's pixels */
    if (m->nv > 0x7fffffff / 3 || m->nt > 0x7fffffff || hi > 0x7fffffff / 3)
        return cs_fail("a mesh of %zu vertices and %zu triangles at %zu pixels (%d x %d samples each): more than the "
                       "kernels index", m->nv, m->nt, d->max_px, samples, samples);
    cs_kernel_opts ko;
    memset(&ko, 0, sizeof ko);
    ko.programs = CS_PROGS(mesh) | CS_PROGS(loss);
    size_t nv3 = 3 * (m->nv ? m->nv : 1);
    float *col = malloc(sizeof(float) * nv3);
    if (!col) {
        return cs_fail("out of host memory (a mesh of %zu vertices)", m->nv);
    }
    for (size_t i = 0; i < 3 * m->nv; i++) col[i] = m->rgb[i] / 255.f;
    int rc = cs_kernels_build(cl, &ko, &d->k);
    cs_loss_init(&d->loss, cl, &d->k);
    struct {
        cs_buf *b;
        size_t bytes;
        const char *what;
    } bufs[] = {
        {&d->pos, 4 * nv3, "mesh vertices"},        {&d->tris, 12 * (m->nt ? m->nt : 1), "mesh triangles"},
        {&d->uvz, 16 * (nv3 / 3), "projected vertices"}, {&d->depth, 4 * hi, "mesh depth buffer"},
        {&d->tri, 4 * hi, "visibility buffer"}, {&d->wts, 12 * hi, "visibility weights"},
        {&d->gt, 4 * d->max_px, "refinement photo"},  {&d->img, 12 * hi, "mesh drawing"},
        {&d->col, 4 * nv3, "vertex colours"},
        {&d->grad, 4 * nv3, "vertex colour gradients"}, {&d->m1, 4 * nv3, "colour Adam m"},
        {&d->m2, 4 * nv3, "colour Adam v"},
        {&d->lo, samples > 1 ? 12 * d->max_px : 0, "mesh drawing boxed down"},
        {&d->v_hi, samples > 1 ? 12 * hi : 0, "mesh drawing's sample gradients"},
    };
    for (size_t i = 0; !rc && i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i].bytes) rc = cs_buf_alloc(cl, bufs[i].b, CS_MEM_OTHER, bufs[i].bytes, bufs[i].what);
    if (!rc && m->nv) rc = cs_buf_write(cl, &d->pos, 0, 12 * m->nv, m->pos) || cs_buf_write(cl, &d->col, 0, 12 * m->nv, col);
    if (!rc && m->nt) rc = cs_buf_write(cl, &d->tris, 0, 12 * m->nt, m->tri);
    free(col);
    if (rc) cs_mesh_dev_close(d);
    return rc ? -1 : 0;
}

/* pass PASS of mesh_cover over the triangles (0: nearest depths, 1: the first triangle at them) */
static int cover(cs_mesh_dev *d, cl_int pass)
{
    size_t gt = d->nt, l = MESH_DEV_WG;
    cl_int nt = (cl_int)d->nt;
    return cs_cl_run(d->cl, d->k.mesh_cover, CS_MESH_PROF_STAGE, 1, &gt, &l, CS_ARG(nt), CS_ARG(d->tris.mem),
                     CS_ARG(d->uvz.mem), CS_ARG(d->W), CS_ARG(d->H), CS_ARG(pass), CS_ARG(d->depth.mem),
                     CS_ARG(d->tri.mem));
}

cs_camera cs_mesh_dev_camera(const cs_mesh_dev *d, const cs_camera *c)
{
    return cs_mesh_raster_camera(c, d->S);
}

int cs_mesh_dev_visibility(cs_mesh_dev *d, const cs_camera *c)
{
    size_t l = MESH_DEV_WG;
    if ((size_t)c->width * c->height > d->max_px)
        return cs_fail("a view of %d x %d pixels; the mesh's buffers hold %zu", c->width, c->height, d->max_px);
    cs_camera hc = cs_mesh_dev_camera(d, c);
    size_t px = (size_t)hc.width * hc.height;
    cs_view v;
    cs_view_from_camera(&hc, &v);
    d->W = hc.width, d->H = hc.height, d->pw = c->width, d->ph = c->height;
    cl_uint inf = 0x7f800000u;
    cl_int none = 0x7fffffff, nv = (cl_int)d->nv;
    size_t gv = d->nv, gp = px;
    return cs_buf_fill(d->cl, &d->depth, 0, 4 * px, &inf, 4) || cs_buf_fill(d->cl, &d->tri, 0, 4 * px, &none, 4) ||
                   cs_cl_run(d->cl, d->k.mesh_project, CS_MESH_PROF_STAGE, 1, &gv, &l, CS_ARG(nv), CS_ARG(d->pos.mem),
                             CS_ARG(v.cam), CS_ARG(v.intr), CS_ARG(d->uvz.mem)) ||
                   cover(d, 0) || cover(d, 1) ||
                   cs_cl_run(d->cl, d->k.mesh_weights, CS_MESH_PROF_STAGE, 1, &gp, &l, CS_ARG(d->W), CS_ARG(d->H),
                             CS_ARG(d->tris.mem), CS_ARG(d->uvz.mem), CS_ARG(d->tri.mem), CS_ARG(d->wts.mem))
               ? -1
               : 0;
}

int cs_mesh_dev_read_visibility(cs_mesh_dev *d, int32_t *tri, float *w)
{
    size_t px = (size_t)d->W * d->H;
    return cs_buf_read(d->cl, &d->tri, 0, 4 * px, tri) || cs_buf_read(d->cl, &d->wts, 0, 12 * px, w) ? -1 : 0;
}

int cs_mesh_dev_set_photo(cs_mesh_dev *d, const cs_image *photo)
{
    if (photo->width != d->pw || photo->height != d->ph || (photo->channels != 3 && photo->channels != 4))
        return cs_fail("a %dx%d photo of %d channels for a %dx%d view", photo->width, photo->height, photo->channels,
                       d->pw, d->ph);
    d->loss.gt_channels = photo->channels;
    return cs_buf_write(d->cl, &d->gt, 0, (size_t)d->pw * d->ph * (size_t)photo->channels, photo->px);
}

int cs_mesh_dev_draw(cs_mesh_dev *d)
{
    size_t gp = (size_t)d->W * d->H, l = MESH_DEV_WG;
    cl_int n = (cl_int)gp;
    return cs_cl_run(d->cl, d->k.mesh_draw, CS_MESH_PROF_STAGE, 1, &gp, &l, CS_ARG(n), CS_ARG(d->tris.mem),
                     CS_ARG(d->tri.mem), CS_ARG(d->wts.mem), CS_ARG(d->col.mem), CS_ARG(d->bg), CS_ARG(d->img.mem));
}

int cs_mesh_dev_scatter(cs_mesh_dev *d, const cs_buf *v)
{
    size_t gp = (size_t)d->W * d->H, l = MESH_DEV_WG;
    cl_int n = (cl_int)gp;
    return cs_cl_run(d->cl, d->k.mesh_color_scatter, CS_MESH_PROF_STAGE, 1, &gp, &l, CS_ARG(n), CS_ARG(d->tris.mem),
                     CS_ARG(d->tri.mem), CS_ARG(d->wts.mem), CS_ARG(v->mem), CS_ARG(d->grad.mem));
}

int cs_mesh_dev_loss(cs_mesh_dev *d, const cs_buf *img, float lambda, const cs_buf **v)
{
    if (d->S == 1) {
        *v = &d->loss.v_img;
        return cs_loss_forward_backward(&d->loss, img, &d->gt, 0, d->W, d->H, lambda, 0);
    }
    size_t lo = (size_t)d->pw * d->ph, hi = (size_t)d->W * d->H, l = MESH_DEV_WG;
    *v = &d->v_hi;
    return cs_cl_run(d->cl, d->k.mesh_box_down, CS_MESH_PROF_STAGE, 1, &lo, &l, CS_ARG(d->pw), CS_ARG(d->ph),
                     CS_ARG(d->S), CS_ARG(img->mem), CS_ARG(d->lo.mem)) ||
                   cs_loss_forward_backward(&d->loss, &d->lo, &d->gt, 0, d->pw, d->ph, lambda, 0) ||
                   cs_cl_run(d->cl, d->k.mesh_box_up, CS_MESH_PROF_STAGE, 1, &hi, &l, CS_ARG(d->pw), CS_ARG(d->ph),
                             CS_ARG(d->S), CS_ARG(d->loss.v_img.mem), CS_ARG(d->v_hi.mem))
               ? -1
               : 0;
}

int cs_mesh_dev_color_grad(cs_mesh_dev *d, const cs_image *photo, float lambda, double *loss, double *l1)
{
    const cs_buf *v;
    if (cs_mesh_dev_set_photo(d, photo) || cs_mesh_dev_draw(d) || cs_mesh_dev_loss(d, &d->img, lambda, &v) ||
        cs_mesh_dev_scatter(d, v))
        return -1;
    if (!loss && !l1) return 0;
    cs_metrics mt;
    double value;
    if (cs_loss_read(&d->loss, 0, lambda, &mt, &value)) return -1;
    if (loss) *loss = value;
    if (l1) *l1 = mt.l1;
    return 0;
}

int cs_mesh_dev_color_adam(cs_mesh_dev *d, double scale, double lr, int step)
{
    size_t g = 3 * d->nv, l = MESH_DEV_WG;
    cl_int n = (cl_int)g;
    cl_float fs = (cl_float)scale, flr = (cl_float)lr, c1 = (cl_float)(1 - pow(0.9, step)),
             c2 = (cl_float)(1 - pow(0.999, step));
    return cs_cl_run(d->cl, d->k.mesh_color_adam, CS_MESH_PROF_STAGE, 1, &g, &l, CS_ARG(n), CS_ARG(d->col.mem),
                     CS_ARG(d->grad.mem), CS_ARG(d->m1.mem), CS_ARG(d->m2.mem), CS_ARG(fs), CS_ARG(flr), CS_ARG(c1),
                     CS_ARG(c2));
}

int cs_mesh_dev_read_colors(cs_mesh_dev *d, float *col, float *grad)
{
    size_t b = 12 * d->nv;
    if (!b) return 0;
    return (col && cs_buf_read(d->cl, &d->col, 0, b, col)) || (grad && cs_buf_read(d->cl, &d->grad, 0, b, grad)) ? -1 : 0;
}

void cs_mesh_dev_close(cs_mesh_dev *d)
{
    cs_buf *bufs[] = {&d->pos,    &d->tris,  &d->uvz, &d->depth, &d->tri,   &d->wts,    &d->gt, &d->img,
                      &d->col,    &d->grad,  &d->m1,  &d->m2,    &d->nbr,   &d->edges,  &d->inv_deg,
                      &d->img_aa, &d->v_pre, &d->gv,  &d->gp,    &d->acc,   &d->pm1,    &d->pm2,
                      &d->tex,    &d->tgrad, &d->tm1, &d->tm2,   &d->lo,    &d->v_hi};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) cs_buf_free(d->cl, bufs[i]);
    cs_loss_free(&d->loss);
    cs_kernels_release(&d->k);
}
