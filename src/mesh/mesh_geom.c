/* mesh_geom: the mesh's connectivity and the launchers of cl/mesh_geom.cl (mesh_geom.h). */
#include "mesh_geom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "util.h"

#define GEOM_WG 64

typedef struct {
    uint64_t key; /* low << 32 | high vertex */
    uint32_t t, k; /* the triangle, the corner the edge is opposite */
} half_edge;

static int half_cmp(const void *a, const void *b)
{
    const half_edge *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->t < y->t ? -1 : x->t > y->t;
}

/* the edge opposite corner K of triangle T runs from corner K + 1 to K + 2: two triangles share
   it with consistent windings when they run it in opposite directions */
static uint32_t from_corner(const cs_mesh *m, const half_edge *h)
{
    return m->tri[3 * (size_t)h->t + (h->k + 1) % 3];
}

void cs_mesh_topo_free(cs_mesh_topo *t)
{
    free(t->nbr), free(t->edges), free(t->inv_deg);
    memset(t, 0, sizeof *t);
}

int cs_mesh_topology(const cs_mesh *m, cs_mesh_topo *t)
{
    memset(t, 0, sizeof *t);
    size_t nh = 3 * m->nt;
    half_edge *h = malloc(sizeof *h * (nh ? nh : 1));
    t->nbr = malloc(sizeof(int32_t) * (nh ? nh : 1)), t->edges = malloc(sizeof(int32_t) * 4 * (nh ? nh : 1));
    t->inv_deg = calloc(m->nv ? m->nv : 1, sizeof(float));
    if (!h || !t->nbr || !t->edges || !t->inv_deg) {
        free(h), cs_mesh_topo_free(t);
        return cs_fail("out of host memory (the edges of %zu triangles)", m->nt);
    }
    for (size_t i = 0; i < nh; i++) {
        uint64_t a = m->tri[3 * (i / 3) + (i % 3 + 1) % 3], b = m->tri[3 * (i / 3) + (i % 3 + 2) % 3];
        h[i] = (half_edge){a < b ? a << 32 | b : b << 32 | a, (uint32_t)(i / 3), (uint32_t)(i % 3)};
        t->nbr[i] = -1;
    }
    qsort(h, nh, sizeof *h, half_cmp);
    for (size_t i = 0; i < nh;) {
        size_t j = i;
        while (j < nh && h[j].key == h[i].key) j++;
        int two = j - i == 2 && from_corner(m, &h[i]) != from_corner(m, &h[i + 1]);
        if (two) t->nbr[3 * h[i].t + h[i].k] = (int32_t)h[i + 1].t, t->nbr[3 * h[i + 1].t + h[i + 1].k] = (int32_t)h[i].t;
        int32_t *e = t->edges + 4 * t->ne++;
        e[0] = (int32_t)(h[i].key >> 32), e[1] = (int32_t)(uint32_t)h[i].key, e[2] = (int32_t)h[i].t;
        e[3] = two ? (int32_t)h[i + 1].t : -1;
        t->inv_deg[e[0]] += 1.f, t->inv_deg[e[1]] += 1.f;
        i = j;
    }
    for (size_t v = 0; v < m->nv; v++) t->inv_deg[v] = t->inv_deg[v] > 0.f ? 1.f / t->inv_deg[v] : 0.f;
    free(h);
    return 0;
}

/* the mean edge length of M, over its edges (the topology's) */
static double mean_edge(const cs_mesh *m, const cs_mesh_topo *t)
{
    double s = 0;
    for (size_t e = 0; e < t->ne; e++) {
        const float *a = m->pos + 3 * (size_t)t->edges[4 * e], *b = m->pos + 3 * (size_t)t->edges[4 * e + 1];
        s += sqrt((double)(a[0] - b[0]) * (a[0] - b[0]) + (double)(a[1] - b[1]) * (a[1] - b[1]) +
                  (double)(a[2] - b[2]) * (a[2] - b[2]));
    }
    return t->ne ? s / (double)t->ne : 1;
}

int cs_mesh_dev_geom_open(cs_mesh_dev *d, const cs_mesh *m, size_t nmove)
{
    cs_mesh_topo t;
    if (cs_mesh_topology(m, &t)) return -1;
    d->ne = t.ne, d->nmove = nmove < m->nv ? nmove : m->nv, d->edge_len = mean_edge(m, &t);
    size_t nv = m->nv ? m->nv : 1, nt = m->nt ? m->nt : 1, ne = t.ne ? t.ne : 1, hi = d->max_px * (size_t)(d->S * d->S);
    struct {
        cs_buf *b;
        size_t bytes;
        const char *what;
    } bufs[] = {
        {&d->nbr, 12 * nt, "mesh neighbours"},         {&d->edges, 16 * ne, "mesh edges"},
        {&d->inv_deg, 4 * nv, "mesh vertex degrees"},  {&d->img_aa, 12 * hi, "anti-aliased mesh drawing"},
        {&d->v_pre, 12 * hi, "mesh drawing gradient"}, {&d->gv, 16 * nv, "vertex screen gradients"},
        {&d->gp, 16 * nv, "vertex position gradients"}, {&d->acc, 16 * nv, "Laplacian sums"},
        {&d->pm1, 12 * nv, "position Adam m"},         {&d->pm2, 12 * nv, "position Adam v"},
    };
    int rc = 0;
    float zero = 0.f;
    for (size_t i = 0; !rc && i < sizeof bufs / sizeof bufs[0]; i++)
        rc = cs_buf_alloc(d->cl, bufs[i].b, CS_MEM_OTHER, bufs[i].bytes, bufs[i].what) ||
             cs_buf_fill(d->cl, bufs[i].b, 0, bufs[i].bytes, &zero, 4);
    if (!rc && m->nt) rc = cs_buf_write(d->cl, &d->nbr, 0, 12 * m->nt, t.nbr);
    if (!rc && t.ne) rc = cs_buf_write(d->cl, &d->edges, 0, 16 * t.ne, t.edges);
    if (!rc && m->nv) rc = cs_buf_write(d->cl, &d->inv_deg, 0, 4 * m->nv, t.inv_deg);
    cs_mesh_topo_free(&t);
    return rc ? -1 : 0;
}

static int copy_buf(cs_mesh_dev *d, const cs_buf *from, cs_buf *to, size_t bytes)
{
    CS_CHECK(clEnqueueCopyBuffer(d->cl->queue, from->mem, to->mem, 0, 0, bytes, 0, NULL, NULL));
    return 0;
}

int cs_mesh_dev_draw_aa(cs_mesh_dev *d)
{
    size_t px = (size_t)d->W * d->H, l = GEOM_WG;
    return cs_mesh_dev_draw(d) || copy_buf(d, &d->img, &d->img_aa, 12 * px) ||
                   cs_cl_run(d->cl, d->k.mesh_aa_fwd, CS_MESH_PROF_STAGE, 1, &px, &l, CS_ARG(d->W), CS_ARG(d->H),
                             CS_ARG(d->tris.mem), CS_ARG(d->nbr.mem), CS_ARG(d->uvz.mem), CS_ARG(d->tri.mem),
                             CS_ARG(d->depth.mem), CS_ARG(d->img.mem), CS_ARG(d->img_aa.mem))
               ? -1
               : 0;
}

int cs_mesh_dev_aa_backward(cs_mesh_dev *d, const cs_buf *v_out)
{
    size_t px = (size_t)d->W * d->H, l = GEOM_WG;
    return copy_buf(d, v_out, &d->v_pre, 12 * px) ||
                   cs_cl_run(d->cl, d->k.mesh_aa_bwd, CS_MESH_PROF_STAGE, 1, &px, &l, CS_ARG(d->W), CS_ARG(d->H),
                             CS_ARG(d->tris.mem), CS_ARG(d->nbr.mem), CS_ARG(d->uvz.mem), CS_ARG(d->tri.mem),
                             CS_ARG(d->depth.mem), CS_ARG(d->img.mem), CS_ARG(v_out->mem), CS_ARG(d->v_pre.mem),
                             CS_ARG(d->gv.mem)) ||
                   cs_cl_run(d->cl, d->k.mesh_interior_bwd, CS_MESH_PROF_STAGE, 1, &px, &l, CS_ARG(d->W), CS_ARG(d->H),
                             CS_ARG(d->tris.mem), CS_ARG(d->uvz.mem), CS_ARG(d->tri.mem), CS_ARG(d->col.mem),
                             CS_ARG(d->v_pre.mem), CS_ARG(d->gv.mem))
               ? -1
               : 0;
}

int cs_mesh_dev_project_backward(cs_mesh_dev *d, const cs_camera *c)
{
    cs_camera hc = cs_mesh_dev_camera(d, c); /* the screen gradients are the drawing's */
    cs_view v;
    cs_view_from_camera(&hc, &v);
    size_t g = d->nv, l = GEOM_WG;
    cl_int nv = (cl_int)d->nv, nm = (cl_int)d->nmove;
    return cs_cl_run(d->cl, d->k.mesh_project_bwd, CS_MESH_PROF_STAGE, 1, &g, &l, CS_ARG(nv), CS_ARG(nm),
                     CS_ARG(d->pos.mem), CS_ARG(v.cam), CS_ARG(v.intr), CS_ARG(d->gv.mem), CS_ARG(d->gp.mem));
}

int cs_mesh_dev_regularize(cs_mesh_dev *d, float kl, float kn)
{
    size_t ge = d->ne, gv = d->nv, l = GEOM_WG;
    cl_int ne = (cl_int)d->ne, nv = (cl_int)d->nv;
    float zero = 0.f;
    if (kl != 0.f &&
        (cs_buf_fill(d->cl, &d->acc, 0, 16 * d->nv, &zero, 4) ||
         cs_cl_run(d->cl, d->k.mesh_lap_gather, CS_MESH_PROF_STAGE, 1, &ge, &l, CS_ARG(ne), CS_ARG(d->edges.mem),
                   CS_ARG(d->pos.mem), CS_ARG(d->acc.mem)) ||
         cs_cl_run(d->cl, d->k.mesh_lap_delta, CS_MESH_PROF_STAGE, 1, &gv, &l, CS_ARG(nv), CS_ARG(d->pos.mem),
                   CS_ARG(d->inv_deg.mem), CS_ARG(d->acc.mem), CS_ARG(d->gp.mem), CS_ARG(kl)) ||
         cs_cl_run(d->cl, d->k.mesh_lap_scatter, CS_MESH_PROF_STAGE, 1, &ge, &l, CS_ARG(ne), CS_ARG(d->edges.mem),
                   CS_ARG(d->inv_deg.mem), CS_ARG(d->acc.mem), CS_ARG(d->gp.mem), CS_ARG(kl))))
        return -1;
    if (kn != 0.f &&
        cs_cl_run(d->cl, d->k.mesh_normal_reg, CS_MESH_PROF_STAGE, 1, &ge, &l, CS_ARG(ne), CS_ARG(d->edges.mem),
                  CS_ARG(d->tris.mem), CS_ARG(d->pos.mem), CS_ARG(d->gp.mem), CS_ARG(kn)))
        return -1;
    return 0;
}

int cs_mesh_dev_geom_step(cs_mesh_dev *d, const cs_camera *c, const cs_image *photo, float lambda,
                          const cs_mesh_geom_opts *o, int step, double *loss)
{
    size_t l = GEOM_WG, gv = d->nv;
    cl_int nv = (cl_int)d->nv;
    double e2 = d->edge_len * d->edge_len;
    float kl = (float)(o->laplacian / ((double)(d->nmove ? d->nmove : 1) * (e2 > 0 ? e2 : 1)));
    float kn = (float)(o->normal / (double)(d->ne ? d->ne : 1));
    cl_float lr = (cl_float)(o->lr * d->edge_len), c1 = (cl_float)(1 - pow(0.9, step)), c2 = (cl_float)(1 - pow(0.999, step));
    const cs_buf *v;
    if (cs_mesh_dev_set_photo(d, photo) || cs_mesh_dev_draw_aa(d) || cs_mesh_dev_loss(d, &d->img_aa, lambda, &v) ||
        cs_mesh_dev_aa_backward(d, v) || cs_mesh_dev_scatter(d, &d->v_pre) ||
        cs_mesh_dev_project_backward(d, c) || cs_mesh_dev_regularize(d, kl, kn) ||
        cs_cl_run(d->cl, d->k.mesh_pos_adam, CS_MESH_PROF_STAGE, 1, &gv, &l, CS_ARG(nv), CS_ARG(d->pos.mem),
                  CS_ARG(d->gp.mem), CS_ARG(d->pm1.mem), CS_ARG(d->pm2.mem), CS_ARG(lr), CS_ARG(c1), CS_ARG(c2)))
        return -1;
    if (!loss) return 0;
    cs_metrics mt;
    return cs_loss_read(&d->loss, 0, lambda, &mt, loss);
}

int cs_mesh_dev_read_positions(cs_mesh_dev *d, float *pos)
{
    return d->nv ? cs_buf_read(d->cl, &d->pos, 0, 12 * d->nv, pos) : 0;
}
