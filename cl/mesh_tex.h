/* mesh_tex.h: a refined mesh's texture (#38), one definition for the kernels (mesh_tex.cl) and
 * the host (mesh_tex.c, the rasterizer the --psnr drawings use, the glTF atlas, the tests).
 * Each triangle carries its own colours on a lattice of R subdivisions an edge: node (i, j),
 * i + j <= R, sits at barycentric weights (1 - (i + j) / R, i / R, j / R) of corners 0, 1, 2;
 * (R + 1)(R + 2) / 2 nodes a triangle, row j after rows 0..j-1. A point of the triangle takes
 * the bilinear blend of the four lattice places around it (s, t) = R (w1, w2), as a GPU
 * samples a texture with the nodes at texel centres: the place (i + 1, j + 1) beyond the
 * triangle's diagonal (i + j = R - 1) stands for c(i + 1, j) + c(i, j + 1) - c(i, j), which
 * makes that square planar, so the glTF atlas (the same values at those texels) draws the same
 * colours under a viewer's bilinear filter. A point's colour is thus a weighted sum of at most
 * six nodes (cs_tex_taps): linear in the nodes, which the refinement differentiates. R = 1 is a
 * triangle's three corner colours, interpolated. Written in the subset of C that OpenCL C
 * shares, on scalars. */
#ifndef CS_MESH_TEX_H
#define CS_MESH_TEX_H

#ifdef __OPENCL_VERSION__
#define CS_TX_FN inline
#else
#define CS_TX_FN static inline
#endif

/* the lattice's largest subdivision */
#define CS_TEX_MAX_R 8
#define CS_TEX_NODES(r) (((r) + 1) * ((r) + 2) / 2)

/* node (i, j)'s place in its triangle's row of nodes */
CS_TX_FN int cs_tex_node(int r, int i, int j)
{
    return j * (r + 1) - j * (j - 1) / 2 + i;
}

/* adds lattice place (i, j) with weight W to the taps (a place past the diagonal: its three) */
CS_TX_FN int cs_tex_place(int r, int i, int j, float w, int n, int *idx, float *wt)
{
    if (w == 0.f) return n;
    if (i + j <= r) {
        idx[n] = cs_tex_node(r, i, j), wt[n] = w;
        return n + 1;
    }
    idx[n] = cs_tex_node(r, i, j - 1), wt[n] = w;
    idx[n + 1] = cs_tex_node(r, i - 1, j), wt[n + 1] = w;
    idx[n + 2] = cs_tex_node(r, i - 1, j - 1), wt[n + 2] = -w;
    return n + 3;
}

/* the nodes (IDX, at most 6) and weights (WT) whose sum draws the point of barycentric weights
   W1, W2 (of corners 1 and 2) in a triangle of R subdivisions; returns their count */
CS_TX_FN int cs_tex_taps(int r, float w1, float w2, int *idx, float *wt)
{
    float s = r * (w1 > 0.f ? w1 : 0.f), t = r * (w2 > 0.f ? w2 : 0.f);
    if (s + t > (float)r) { /* rounding past the far edge: back onto it */
        float k = (float)r / (s + t);
        s *= k, t *= k;
    }
    int i = (int)s, j = (int)t;
    i = i > r - 1 ? r - 1 : i, j = j > r - 1 ? r - 1 : j;
    float fx = s - i, fy = t - j;
    if (i + j == r) /* the corner (s, t) = (i, j) itself, a node: a square would reach past it */
        fx = fy = 0.f;
    int n = cs_tex_place(r, i, j, (1.f - fx) * (1.f - fy), 0, idx, wt);
    n = cs_tex_place(r, i + 1, j, fx * (1.f - fy), n, idx, wt);
    n = cs_tex_place(r, i, j + 1, (1.f - fx) * fy, n, idx, wt);
    return cs_tex_place(r, i + 1, j + 1, fx * fy, n, idx, wt);
}

#endif
