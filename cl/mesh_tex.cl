/* mesh_tex.cl: the texture stage of #38's refinement. Each triangle's lattice of colours
 * (mesh_tex.h) drawn through the visibility buffer of mesh_raster.cl, and the loss's image
 * gradient taken back to the lattice through the same taps; the nodes are stepped by
 * mesh_color_adam. The drawing is linear in the nodes, as the vertex colours' is. */

/* per pixel: the drawing IMG (3, H, W) with the texture TEX (nt x nodes x 3, 0-1) of R
   subdivisions, BG where no triangle is */
__kernel void mesh_tex_draw(int n, int r, __global const int *tri, __global const float *wts,
                            __global const float *tex, float4 bg, __global float *img)
{
    int i = get_global_id(0);
    if (i >= n) return;
    int t = tri[i];
    float3 c = bg.xyz;
    if (t >= 0) {
        int idx[6];
        float wt[6];
        int m = cs_tex_taps(r, wts[3 * i + 1], wts[3 * i + 2], idx, wt);
        size_t base = (size_t)t * CS_TEX_NODES(r);
        c = (float3)(0.f);
        for (int k = 0; k < m; k++) c += wt[k] * vload3(base + idx[k], tex);
    }
    img[i] = c.x, img[n + i] = c.y, img[2 * n + i] = c.z;
}

/* per pixel: the loss's gradient V_IMG (3, H, W) at a drawn pixel added into the nodes'
   gradient GRAD (nt x nodes x 3) through the same taps */
__kernel void mesh_tex_scatter(int n, int r, __global const int *tri, __global const float *wts,
                               __global const float *v_img, __global float *grad)
{
    int i = get_global_id(0);
    if (i >= n || tri[i] < 0) return;
    int idx[6];
    float wt[6];
    int m = cs_tex_taps(r, wts[3 * i + 1], wts[3 * i + 2], idx, wt);
    size_t base = (size_t)tri[i] * CS_TEX_NODES(r);
    for (int c = 0; c < 3; c++) {
        float g = v_img[(size_t)c * n + i];
        if (g == 0.f) continue;
        for (int k = 0; k < m; k++) atomic_add_global_f(grad + 3 * (base + idx[k]) + c, g * wt[k]);
    }
}
