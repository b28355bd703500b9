/* optim: Adam launchers and schedules. */
#include "optim.h"

#include <math.h>

#include "util.h"

double cs_lr_expon(double init, double final, double delay_mult, int delay_steps, int max_steps, int step)
{
    if (step < 0 || (init == 0.0 && final == 0.0)) return 0.0;
    double delay = 1.0;
    if (delay_steps > 0) delay = delay_mult + (1 - delay_mult) * sin(0.5 * M_PI * fmin(fmax((double)step / delay_steps, 0), 1));
    double t = fmin(fmax((double)step / max_steps, 0.0), 1.0);
    return delay * exp(log(init) * (1 - t) + log(final) * t);
}

cs_adam_lrs cs_adam_lrs_of(const cs_optim_cfg *o)
{
    cs_adam_lrs l = {o->feature_lr, o->feature_rest_lr, o->opacity_lr, o->scaling_lr, o->rotation_lr};
    return l;
}

int cs_adam_step(cs_cl *cl, const cs_kernels *k, cs_model *m, const cs_adam_lrs *lrs, double lr_mean,
                 const cs_buf *visible)
{
    m->step++;
    float b1 = 0.9f, b2 = 0.999f, eps = 1e-15f;
    float bc1 = (float)(1.0 - pow(0.9, m->step)), bc2 = (float)(1.0 - pow(0.999, m->step));
    float lm = (float)lr_mean, ls = (float)lrs->scaling, lr = (float)lrs->rotation, lo = (float)lrs->opacity,
          ld = (float)lrs->feature, lrest = (float)lrs->feature_rest;
    unsigned ng = (unsigned)m->n * CS_GEO_W, ns = (unsigned)m->n * (unsigned)CS_SH_COEFFS(m->layout.sh_degree) * 3u;
    size_t g = (size_t)ng + ns, l = k->wg[CS_WG_ADAM];
    cl_uint step = (cl_uint)m->step, sparse = visible != NULL;
    cl_mem radii = visible ? visible->mem : m->geo.mem; /* not read when dense */
    /* Adam's state rows, as the schema gives them to each parameter array */
    cs_buf *m_geo = cs_model_state(m, CS_ARRAY_geo, CS_ST_MOM_M), *v_geo = cs_model_state(m, CS_ARRAY_geo, CS_ST_MOM_V);
    cs_buf *m_sh = cs_model_state(m, CS_ARRAY_sh, CS_ST_MOM_M), *v_sh = cs_model_state(m, CS_ARRAY_sh, CS_ST_MOM_V);
    if (!m_geo || !v_geo || !m_sh || !v_sh) return cs_fail("Adam: the model schema gives a parameter no m and v rows");
    return cs_cl_run(cl, k->adam_step, CS_STAGE_ADAM, 1, &g, &l, CS_ARG(ng), CS_ARG(m->geo.mem), CS_ARG(m->v_geo.mem),
                     CS_ARG(m_geo->mem), CS_ARG(v_geo->mem), CS_ARG(ns), CS_ARG(m->sh.mem), CS_ARG(m->v_sh.mem),
                     CS_ARG(m_sh->mem), CS_ARG(v_sh->mem), CS_ARG(lm), CS_ARG(ls), CS_ARG(lr), CS_ARG(lo),
                     CS_ARG(ld), CS_ARG(lrest), CS_ARG(b1), CS_ARG(b2), CS_ARG(eps), CS_ARG(bc1), CS_ARG(bc2),
                     CS_ARG(step), CS_ARG(sparse), CS_ARG(radii));
}
