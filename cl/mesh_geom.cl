/* mesh_geom.cl: #38's geometry stage, the vertex positions of a mesh fitted to the photos
 * (after cl/mesh_raster.cl, whose visibility buffer, edge2 and tri_begin it uses). Forward and
 * backward side by side; the host reference is tests/ref_mesh.c.
 *
 * Anti-aliasing (after nvdiffrast's analytic antialiasing, rewritten here): for each pair of
 * pixels side by side (right and down neighbours) whose triangles differ, the front pixel F
 * (the nearer depth, or the only one drawn) and the other O. If a silhouette edge of F's
 * triangle (an open edge, or one whose neighbour faces the other way in this view) crosses
 * the segment between their centres at fraction s from F, the pixel that edge cuts gets the
 * other's colour in proportion: a = |s - 1/2|, M = O when s > 1/2 (F's triangle reaches into
 * O), else M = F (F is only partly covered); out[M] += a (in[S] - in[M]) with S the other
 * pixel. s depends on the edge's two projected corners, which gives them a gradient: the
 * silhouette's. Inside a triangle the drawing depends on the corners through the
 * perspective-correct weights: that gradient goes to (u, v) and to the depth z. Both are
 * gathered per vertex as (du, dv, dz), then taken to world positions through the camera. */

/* the neighbour of triangle T across its edge opposite corner K (NBR: -1 open) is a silhouette
   in this view: none, behind the camera, or facing the other way from T (AREA: T's signed area) */
static int mesh_silhouette(__global const uint *tris, __global const int *nbr, __global const float4 *uvz, int t, int k,
                           float area)
{
    int n = nbr[3 * t + k];
    if (n < 0) return 1;
    float4 q0 = uvz[tris[3 * n]], q1 = uvz[tris[3 * n + 1]], q2 = uvz[tris[3 * n + 2]];
    if (q0.z <= MESH_NEAR || q1.z <= MESH_NEAR || q2.z <= MESH_NEAR) return 1;
    return !(edge2(q0.xy, q1.xy, q2.x, q2.y) * area > 0.f);
}

/* the blend of pixels I and J (neighbours): M gets A (in[S] - in[M]); SGN = ds/da; the edge's
   corners VA, VB; 0 when there is none */
typedef struct {
    int m, s, va, vb;
    float a, sgn;
    float2 pf, po; /* the front and other pixel centres */
} aa_blend;

static int aa_pair(int i, int j, int W, __global const uint *tris, __global const int *nbr, __global const float4 *uvz,
                   __global const int *tri, __global const uint *depth, aa_blend *b)
{
    int ti = tri[i], tj = tri[j];
    if (ti == tj) return 0;
    int f = ti < 0 ? j : tj < 0 ? i : depth[i] <= depth[j] ? i : j, o = f == i ? j : i, t = tri[f];
    float2 p[3], pf = (float2)(f % W + 0.5f, f / W + 0.5f), po = (float2)(o % W + 0.5f, o / W + 0.5f);
    for (int k = 0; k < 3; k++) p[k] = uvz[tris[3 * t + k]].xy;
    float area = edge2(p[0], p[1], p[2].x, p[2].y), best = 2.f;
    int kb = -1;
    for (int k = 0; k < 3; k++) {
        float2 a = p[(k + 1) % 3], c = p[(k + 2) % 3];
        float ef = edge2(a, c, pf.x, pf.y) * area, eo = edge2(a, c, po.x, po.y) * area;
        if (!(ef >= 0.f && eo < 0.f) || !mesh_silhouette(tris, nbr, uvz, t, k, area)) continue;
        float s = ef / (ef - eo);
        if (s < best) best = s, kb = k;
    }
    if (kb < 0) return 0;
    float al = best - 0.5f;
    b->m = al > 0.f ? o : f, b->s = al > 0.f ? f : o, b->a = fabs(al), b->sgn = al > 0.f ? 1.f : -1.f;
    b->va = tris[3 * t + (kb + 1) % 3], b->vb = tris[3 * t + (kb + 2) % 3], b->pf = pf, b->po = po;
    return 1;
}

/* the blends of pixel I with its right and its lower neighbour (0, 1 or 2, into B) */
static int aa_pairs(int i, int W, int H, __global const uint *tris, __global const int *nbr, __global const float4 *uvz,
                    __global const int *tri, __global const uint *depth, aa_blend b[2])
{
    int nb = 0;
    for (int d = 0; d < 2; d++)
        if ((d ? i / W + 1 < H : i % W + 1 < W) && aa_pair(i, d ? i + W : i + 1, W, tris, nbr, uvz, tri, depth, &b[nb]))
            nb++;
    return nb;
}

/* per pixel, its pairs with the right and the lower neighbour: OUT (a copy of IN, (3, H, W))
   gets the blends */
__kernel void mesh_aa_fwd(int W, int H, __global const uint *tris, __global const int *nbr, __global const float4 *uvz,
                          __global const int *tri, __global const uint *depth, __global const float *in,
                          __global float *out)
{
    int i = get_global_id(0), n = W * H;
    if (i >= n) return;
    aa_blend bl[2];
    int nb = aa_pairs(i, W, H, tris, nbr, uvz, tri, depth, bl);
    for (int q = 0; q < nb; q++)
        for (int c = 0; c < 3; c++)
            atomic_add_global_f(out + (size_t)c * n + bl[q].m,
                                bl[q].a * (in[(size_t)c * n + bl[q].s] - in[(size_t)c * n + bl[q].m]));
}

/* the gradient of s = e(F) / (e(F) - e(O)), e the edge function of (A, B), at (A, B) */
static void aa_edge_grad(float2 a, float2 c, float2 pf, float2 po, float g, float2 *ga, float2 *gc)
{
    float ef = edge2(a, c, pf.x, pf.y), eo = edge2(a, c, po.x, po.y), d = ef - eo;
    if (d == 0.f) {
        *ga = *gc = (float2)(0.f);
        return;
    }
    float kf = -eo / (d * d) * g, ko = ef / (d * d) * g;
    /* de(p)/da = (c.y - p.y, p.x - c.x), de(p)/dc = (p.y - a.y, a.x - p.x) */
    *ga = kf * (float2)(c.y - pf.y, pf.x - c.x) + ko * (float2)(c.y - po.y, po.x - c.x);
    *gc = kf * (float2)(pf.y - a.y, a.x - pf.x) + ko * (float2)(po.y - a.y, a.x - po.x);
}

/* the backward of mesh_aa_fwd: V_IN (a copy of V_OUT) gets the blends' colour gradients, G
   (nv x (du, dv, dz, -)) the silhouette edges' corners theirs */
__kernel void mesh_aa_bwd(int W, int H, __global const uint *tris, __global const int *nbr, __global const float4 *uvz,
                          __global const int *tri, __global const uint *depth, __global const float *in,
                          __global const float *v_out, __global float *v_in, __global float *g)
{
    int i = get_global_id(0), n = W * H;
    if (i >= n) return;
    aa_blend bl[2];
    int nb = aa_pairs(i, W, H, tris, nbr, uvz, tri, depth, bl);
    for (int q = 0; q < nb; q++) {
        aa_blend b = bl[q];
        float da = 0.f;
        for (int c = 0; c < 3; c++) {
            float vm = v_out[(size_t)c * n + b.m];
            if (vm == 0.f) continue;
            atomic_add_global_f(v_in + (size_t)c * n + b.s, b.a * vm);
            atomic_add_global_f(v_in + (size_t)c * n + b.m, -b.a * vm);
            da += vm * (in[(size_t)c * n + b.s] - in[(size_t)c * n + b.m]);
        }
        if (da == 0.f) continue;
        float2 ga, gc;
        aa_edge_grad(uvz[b.va].xy, uvz[b.vb].xy, b.pf, b.po, da * b.sgn, &ga, &gc);
        atomic_add_global_f(g + 4 * b.va, ga.x), atomic_add_global_f(g + 4 * b.va + 1, ga.y);
        atomic_add_global_f(g + 4 * b.vb, gc.x), atomic_add_global_f(g + 4 * b.vb + 1, gc.y);
    }
}

/* per drawn pixel: the gradient V (3, H, W) of its colour sum_k w_k col_k through the
 * perspective-correct weights w_k = b_k iz_k / S (S = sum_j b_j iz_j, b the screen
 * barycentrics, iz = 1 / z) to its corners' (u, v, z), added into G */
__kernel void mesh_interior_bwd(int W, int H, __global const uint *tris, __global const float4 *uvz,
                                __global const int *tri, __global const float *col, __global const float *v,
                                __global float *g)
{
    int i = get_global_id(0), n = W * H;
    tri_setup s;
    if (i >= n || tri[i] < 0 || !tri_begin(uvz, tris, tri[i], W, H, &s)) return;
    int t = tri[i];
    float px = i % W + 0.5f, py = i / W + 0.5f, e[3], b[3], G[3], gw = 0.f, S = 0.f;
    for (int k = 0; k < 3; k++) e[k] = edge2(s.p[(k + 1) % 3], s.p[(k + 2) % 3], px, py), b[k] = e[k] / s.area;
    for (int k = 0; k < 3; k++) S += b[k] * s.iz[k];
    if (!(S > 0.f)) return;
    for (int k = 0; k < 3; k++) {
        uint vk = tris[3 * t + k];
        G[k] = v[i] * col[3 * vk] + v[(size_t)n + i] * col[3 * vk + 1] + v[2 * (size_t)n + i] * col[3 * vk + 2];
        gw += G[k] * b[k] * s.iz[k] / S;
    }
    float gb[3], hb = 0.f;
    for (int k = 0; k < 3; k++) {
        gb[k] = s.iz[k] / S * (G[k] - gw);
        hb += gb[k] * b[k];
        float giz = b[k] / S * (G[k] - gw); /* d/dz = -d/diz iz^2 */
        atomic_add_global_f(g + 4 * tris[3 * t + k] + 2, -giz * s.iz[k] * s.iz[k]);
    }
    for (int m = 0; m < 3; m++) { /* b_m = e_m / A with A = e_0 + e_1 + e_2: dL = sum_m h_m de_m */
        float h = (gb[m] - hb) / s.area;
        if (h == 0.f) continue;
        float2 a = s.p[(m + 1) % 3], c = s.p[(m + 2) % 3];
        uint va = tris[3 * t + (m + 1) % 3], vc = tris[3 * t + (m + 2) % 3];
        atomic_add_global_f(g + 4 * va, h * (c.y - py)), atomic_add_global_f(g + 4 * va + 1, h * (px - c.x));
        atomic_add_global_f(g + 4 * vc, h * (py - a.y)), atomic_add_global_f(g + 4 * vc + 1, h * (a.x - px));
    }
}

/* per vertex: its (du, dv, dz) in G through camera CAM (R row-major, then t) to its world
   position, added into GP (x, y, z, and w += 1 where the view gave it a gradient) for the
   vertices below NMOVE (the others stay where they are); G is cleared */
__kernel void mesh_project_bwd(int nv, int nmove, __global const float *pos, float16 cam, float4 intr,
                               __global float *g, __global float *gp)
{
    int i = get_global_id(0);
    if (i >= nv) return;
    float gu = g[4 * i], gv = g[4 * i + 1], gz = g[4 * i + 2];
    g[4 * i] = g[4 * i + 1] = g[4 * i + 2] = 0.f;
    if (i >= nmove || (gu == 0.f && gv == 0.f && gz == 0.f)) return;
    float3 p = (float3)(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    float x = cam.s0 * p.x + cam.s1 * p.y + cam.s2 * p.z + cam.s9;
    float y = cam.s3 * p.x + cam.s4 * p.y + cam.s5 * p.z + cam.sa;
    float z = cam.s6 * p.x + cam.s7 * p.y + cam.s8 * p.z + cam.sb;
    if (!(z > 1e-6f)) return;
    float cx = gu * intr.x / z, cy = gv * intr.y / z, cz = gz - (gu * intr.x * x + gv * intr.y * y) / (z * z);
    gp[4 * i] += cam.s0 * cx + cam.s3 * cy + cam.s6 * cz;
    gp[4 * i + 1] += cam.s1 * cx + cam.s4 * cy + cam.s7 * cz;
    gp[4 * i + 2] += cam.s2 * cx + cam.s5 * cy + cam.s8 * cz;
    gp[4 * i + 3] += 1.f;
}

/* The regularisers, over the mesh's edges EDGES (va, vb, ta, tb; tb -1 where the edge has one
 * triangle, or two of opposite windings). Laplacian: sum_v |d_v|^2 with d_v = p_v - the mean
 * of its neighbours (INV_DEG: 1 / their count), times KL; three kernels: the neighbours' sums,
 * then d and its own term, then the neighbours' terms. */
__kernel void mesh_lap_gather(int ne, __global const int *edges, __global const float *pos, __global float *acc)
{
    int e = get_global_id(0);
    if (e >= ne) return;
    int a = edges[4 * e], b = edges[4 * e + 1];
    for (int k = 0; k < 3; k++) {
        atomic_add_global_f(acc + 4 * a + k, pos[3 * b + k]);
        atomic_add_global_f(acc + 4 * b + k, pos[3 * a + k]);
    }
}

/* ACC becomes d_v; GP += 2 KL d_v */
__kernel void mesh_lap_delta(int nv, __global const float *pos, __global const float *inv_deg, __global float *acc,
                             __global float *gp, float kl)
{
    int v = get_global_id(0);
    if (v >= nv) return;
    for (int k = 0; k < 3; k++) {
        float d = inv_deg[v] > 0.f ? pos[3 * v + k] - acc[4 * v + k] * inv_deg[v] : 0.f;
        acc[4 * v + k] = d;
        gp[4 * v + k] += 2.f * kl * d;
    }
}

/* GP(a) -= 2 KL d_b / deg_b and the other way: d_b's dependence on its neighbour a */
__kernel void mesh_lap_scatter(int ne, __global const int *edges, __global const float *inv_deg, __global const float *acc,
                               __global float *gp, float kl)
{
    int e = get_global_id(0);
    if (e >= ne) return;
    int a = edges[4 * e], b = edges[4 * e + 1];
    for (int k = 0; k < 3; k++) {
        atomic_add_global_f(gp + 4 * a + k, -2.f * kl * acc[4 * b + k] * inv_deg[b]);
        atomic_add_global_f(gp + 4 * b + k, -2.f * kl * acc[4 * a + k] * inv_deg[a]);
    }
}

/* triangle T's corners */
static void mesh_corners(__global const uint *tris, __global const float *pos, int t, float3 p[3], uint v[3])
{
    for (int k = 0; k < 3; k++) v[k] = tris[3 * t + k], p[k] = vload3(v[k], pos);
}

/* d(KN (1 - n_t . n_o))/dN_t scattered to T's corners: N = (p1 - p0) x (p2 - p0) */
static void normal_grad(__global const uint *tris, __global const float *pos, int t, float3 other, float kn,
                        __global float *gp)
{
    float3 p[3];
    uint v[3];
    mesh_corners(tris, pos, t, p, v);
    float3 e1 = p[1] - p[0], e2 = p[2] - p[0], N = cross(e1, e2);
    float len = length(N);
    if (!(len > 0.f)) return;
    float3 n = N / len, gN = -kn * (other - dot(n, other) * n) / len;
    float3 g1 = cross(e2, gN), g2 = cross(gN, e1), g0 = -(g1 + g2);
    float3 gs[3] = {g0, g1, g2};
    for (int k = 0; k < 3; k++)
        for (int c = 0; c < 3; c++) atomic_add_global_f(gp + 4 * v[k] + c, c == 0 ? gs[k].x : c == 1 ? gs[k].y : gs[k].z);
}

static float3 unit_normal(__global const uint *tris, __global const float *pos, int t)
{
    float3 p[3];
    uint v[3];
    mesh_corners(tris, pos, t, p, v);
    float3 N = cross(p[1] - p[0], p[2] - p[0]);
    float len = length(N);
    return len > 0.f ? N / len : (float3)(0.f);
}

/* normal consistency: KN sum over edges of two triangles of (1 - n_a . n_b) */
__kernel void mesh_normal_reg(int ne, __global const int *edges, __global const uint *tris, __global const float *pos,
                              __global float *gp, float kn)
{
    int e = get_global_id(0);
    if (e >= ne || edges[4 * e + 3] < 0) return;
    int ta = edges[4 * e + 2], tb = edges[4 * e + 3];
    float3 na = unit_normal(tris, pos, ta), nb = unit_normal(tris, pos, tb);
    normal_grad(tris, pos, ta, nb, kn, gp);
    normal_grad(tris, pos, tb, na, kn, gp);
}

/* Adam on the N positions (graphdeco's betas) where the view gave a gradient (GP's w; the
   others keep position and moments, as a sparse Adam); GP is cleared */
__kernel void mesh_pos_adam(int n, __global float *pos, __global float *gp, __global float *m1, __global float *m2,
                            float lr, float c1, float c2)
{
    int i = get_global_id(0);
    if (i >= n) return;
    int seen = gp[4 * i + 3] > 0.f;
    for (int k = 0; k < 3; k++) {
        float g = gp[4 * i + k];
        gp[4 * i + k] = 0.f;
        if (!seen) continue;
        float a = 0.9f * m1[3 * i + k] + 0.1f * g, b = 0.999f * m2[3 * i + k] + 0.001f * g * g;
        m1[3 * i + k] = a, m2[3 * i + k] = b;
        pos[3 * i + k] -= lr * (a / c1) / (sqrt(b / c2) + 1e-15f);
    }
    gp[4 * i + 3] = 0.f;
}
