/* mesh_texture_dev: launchers of cl/mesh_tex.cl (mesh_texture_dev.h). */
#include "mesh_texture_dev.h"

#include <math.h>
#include <stdlib.h>

#include "mesh_tex.h"
#include "util.h"

#define MESH_TEX_WG 64

/* the texture's floats: nt x nodes x 3 */
static size_t tex_floats(const cs_mesh_dev *d)
{
    return 3 * (size_t)CS_TEX_NODES(d->tex_r) * (d->nt ? d->nt : 1);
}

int cs_mesh_dev_tex_open(cs_mesh_dev *d, const cs_mesh *m)
{
    if (!m->tex || m->tex_r < 1 || m->tex_r > CS_TEX_MAX_R) return cs_fail("the mesh has no texture to refine");
    d->tex_r = m->tex_r;
    size_t n = tex_floats(d);
    if (n > 0x7fffffff) return cs_fail("a texture of %zu values: more than the kernels index", n);
    float *f = calloc(n, sizeof(float));
    if (!f) return cs_fail("out of host memory (a texture of %zu values)", n);
    for (size_t i = 0; i < 3 * (size_t)CS_TEX_NODES(m->tex_r) * m->nt; i++) f[i] = m->tex[i] / 255.f;
    float zero = 0.f;
    int rc = cs_buf_alloc(d->cl, &d->tex, CS_MEM_OTHER, 4 * n, "mesh texture") ||
             cs_buf_alloc(d->cl, &d->tgrad, CS_MEM_OTHER, 4 * n, "mesh texture gradients") ||
             cs_buf_alloc(d->cl, &d->tm1, CS_MEM_OTHER, 4 * n, "texture Adam m") ||
             cs_buf_alloc(d->cl, &d->tm2, CS_MEM_OTHER, 4 * n, "texture Adam v") ||
             cs_buf_write(d->cl, &d->tex, 0, 4 * n, f) || cs_buf_fill(d->cl, &d->tgrad, 0, 4 * n, &zero, 4) ||
             cs_buf_fill(d->cl, &d->tm1, 0, 4 * n, &zero, 4) || cs_buf_fill(d->cl, &d->tm2, 0, 4 * n, &zero, 4);
    free(f);
    return rc ? -1 : 0;
}

int cs_mesh_dev_tex_grad(cs_mesh_dev *d, const cs_image *photo, float lambda, double *loss)
{
    size_t gp = (size_t)d->W * d->H, l = MESH_TEX_WG;
    cl_int n = (cl_int)gp, r = d->tex_r;
    const cs_buf *v;
    if (cs_mesh_dev_set_photo(d, photo) ||
        cs_cl_run(d->cl, d->k.mesh_tex_draw, CS_MESH_PROF_STAGE, 1, &gp, &l, CS_ARG(n), CS_ARG(r), CS_ARG(d->tri.mem),
                  CS_ARG(d->wts.mem), CS_ARG(d->tex.mem), CS_ARG(d->bg), CS_ARG(d->img.mem)) ||
        cs_mesh_dev_loss(d, &d->img, lambda, &v) ||
        cs_cl_run(d->cl, d->k.mesh_tex_scatter, CS_MESH_PROF_STAGE, 1, &gp, &l, CS_ARG(n), CS_ARG(r),
                  CS_ARG(d->tri.mem), CS_ARG(d->wts.mem), CS_ARG(v->mem), CS_ARG(d->tgrad.mem)))
        return -1;
    if (!loss) return 0;
    cs_metrics mt;
    return cs_loss_read(&d->loss, 0, lambda, &mt, loss);
}

int cs_mesh_dev_tex_adam(cs_mesh_dev *d, double lr, int step)
{
    size_t g = tex_floats(d), l = MESH_TEX_WG;
    cl_int n = (cl_int)g;
    cl_float one = 1.f, flr = (cl_float)lr, c1 = (cl_float)(1 - pow(0.9, step)), c2 = (cl_float)(1 - pow(0.999, step));
    return cs_cl_run(d->cl, d->k.mesh_color_adam, CS_MESH_PROF_STAGE, 1, &g, &l, CS_ARG(n), CS_ARG(d->tex.mem),
                     CS_ARG(d->tgrad.mem), CS_ARG(d->tm1.mem), CS_ARG(d->tm2.mem), CS_ARG(one), CS_ARG(flr), CS_ARG(c1),
                     CS_ARG(c2));
}

int cs_mesh_dev_tex_read(cs_mesh_dev *d, float *tex, float *grad)
{
    size_t b = 4 * tex_floats(d);
    return (tex && cs_buf_read(d->cl, &d->tex, 0, b, tex)) || (grad && cs_buf_read(d->cl, &d->tgrad, 0, b, grad)) ? -1 : 0;
}
