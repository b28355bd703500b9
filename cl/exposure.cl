/* exposure.cl: a training view's exposure, the affine colour transform its photo was taken
 * under (graphdeco's per-image exposure, --train_test_exp), applied to the render before the
 * loss: out_c = A_c . img + b_c for the view's row (layout.h, CS_EXPOSURE_W). Forward, the
 * backward (the render's gradient in place, and each 16 x 16 group's share of the row's
 * gradient), the row's Adam step and the rows' mean held at the identity. Images are (3, H, W)
 * floats. */

/* out (3, H, W) = the view's transform of img (3, H, W); rows (views, 3) float4 */
__kernel __attribute__((reqd_work_group_size(CS_EXPOSURE_T, CS_EXPOSURE_T, 1)))
void exposure_fwd(__global const float *img, __global const float4 *rows, uint row, int W, int H, __global float *out)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= W || y >= H) return;
    size_t n = (size_t)W * H, p = (size_t)y * W + x;
    float3 c = (float3)(img[p], img[n + p], img[2 * n + p]);
    __global const float4 *e = rows + (size_t)row * 3;
    for (int k = 0; k < 3; k++) out[k * n + p] = dot(e[k].xyz, c) + e[k].w;
}

/* v_img (3, H, W): d loss / d out in, d loss / d img out (in place: each work-item reads its
 * pixel's three values before writing them); partials (groups, 3) float4: for output channel
 * k the group's sums of (v_k r, v_k g, v_k b, v_k), the gradient of row k (img as rendered). */
__kernel __attribute__((reqd_work_group_size(CS_EXPOSURE_T, CS_EXPOSURE_T, 1)))
void exposure_bwd(__global const float *img, __global const float4 *rows, uint row, int W, int H,
                  __global float *v_img, __global float4 *partials)
{
    __local float4 red[CS_EXPOSURE_T * CS_EXPOSURE_T];
    int x = get_global_id(0), y = get_global_id(1), lid = get_local_id(1) * CS_EXPOSURE_T + get_local_id(0);
    int in = x < W && y < H;
    size_t n = (size_t)W * H, p = in ? (size_t)y * W + x : 0;
    float3 c = in ? (float3)(img[p], img[n + p], img[2 * n + p]) : (float3)(0.f);
    float3 v = in ? (float3)(v_img[p], v_img[n + p], v_img[2 * n + p]) : (float3)(0.f);
    __global const float4 *e = rows + (size_t)row * 3;
    if (in) { /* d out_k / d img_j = A_kj: the transpose */
        float3 g = v.x * e[0].xyz + v.y * e[1].xyz + v.z * e[2].xyz;
        v_img[p] = g.x, v_img[n + p] = g.y, v_img[2 * n + p] = g.z;
    }
    size_t group = (size_t)get_group_id(1) * get_num_groups(0) + get_group_id(0);
    for (int k = 0; k < 3; k++) {
        float vk = k == 0 ? v.x : k == 1 ? v.y : v.z;
        red[lid] = (float4)(vk * c, vk);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int s = CS_EXPOSURE_T * CS_EXPOSURE_T / 2; s > 0; s >>= 1) {
            if (lid < s) red[lid] += red[lid + s];
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        if (lid == 0) partials[group * 3 + k] = red[0];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* Sums the n rows of SRC ((n, 3) float4) into RED[k * 256] for k = 0, 1, 2, in a fixed order;
 * a work-group of at most 256 items, all of which call it. */
inline void sum_rows3(__global const float4 *src, uint n, __local float4 *red)
{
    int lid = get_local_id(0), wg = get_local_size(0);
    for (int k = 0; k < 3; k++) {
        float4 a = (float4)(0.f);
        for (uint i = lid; i < n; i += wg) a += src[(size_t)i * 3 + k];
        red[k * 256 + lid] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = wg / 2; s > 0; s >>= 1) {
        for (int k = 0; k < 3 && lid < s; k++) red[k * 256 + lid] += red[k * 256 + lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
}

/* One work-group: the row's gradient summed over N_GROUPS partials (a fixed order: the same
 * bits every run), then Adam on the row (BC1, BC2: 1 - beta^t for the row's own step t). */
__kernel void exposure_adam(__global const float4 *partials, uint n_groups, __global float4 *rows, __global float4 *m,
                            __global float4 *v, uint row, float lr, float b1, float b2, float eps, float bc1,
                            float bc2)
{
    __local float4 red[3 * 256];
    int lid = get_local_id(0);
    if (get_local_size(0) > 256) return; /* the launcher asks for 256 */
    sum_rows3(partials, n_groups, red);
    if (lid >= 3) return;
    size_t i = (size_t)row * 3 + lid;
    float4 g = red[lid * 256], mm = b1 * m[i] + (1.f - b1) * g, vv = b2 * v[i] + (1.f - b2) * g * g;
    m[i] = mm, v[i] = vv;
    rows[i] -= lr * (mm / bc1) / (sqrt(vv / bc2) + eps);
}

/* One work-group: the rows' mean moved to the identity (each row less the mean's difference
 * from it). The model and the transforms can trade a common colour change (the model darker,
 * every view brighter) that the loss cannot see; the model is kept at the views' mean. */
__kernel void exposure_center(__global float4 *rows, uint n_views)
{
    __local float4 red[3 * 256];
    int lid = get_local_id(0), wg = get_local_size(0);
    if (wg > 256) return; /* the launcher asks for 256 */
    sum_rows3(rows, n_views, red);
    float4 shift[3];
    for (int k = 0; k < 3; k++)
        shift[k] = red[k * 256] / (float)n_views - (float4)(k == 0 ? 1.f : 0.f, k == 1 ? 1.f : 0.f, k == 2 ? 1.f : 0.f, 0.f);
    for (uint i = lid; i < n_views; i += wg)
        for (int k = 0; k < 3; k++) rows[(size_t)i * 3 + k] -= shift[k];
}
