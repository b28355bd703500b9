/* mesh_raster.cl: the device side of #38's mesh refinement. A vertex-coloured triangle mesh is
 * drawn through a pinhole camera into a visibility buffer (per pixel the nearest triangle and
 * its corners' perspective-correct weights) by the rule of the host rasterizer
 * (src/mesh/mesh_raster.c, the reference the tests compare with): a pixel is covered when its
 * centre lies in the triangle (edges count), triangles with a corner closer than 1e-4 to the
 * camera plane are left out, no face culling, the nearest triangle wins and of equally near
 * ones the first. With no 64-bit atomics that takes two passes over the triangles, each
 * work-item one triangle: the nearest depth a pixel sees (atomic_min on the float's bits,
 * which order as the floats do for positive values), then the first triangle at that depth.
 * The drawing is linear in the vertex colours: mesh_draw makes the image the training loss
 * (L1 + D-SSIM, cl/ssim.cl) compares with the photo, mesh_color_scatter takes the loss's image
 * gradient to the colours, mesh_color_adam steps them. */
#pragma OPENCL FP_CONTRACT OFF

#define MESH_NEAR 1e-4f
#define MESH_NO_TRI 0x7fffffff

/* every vertex in the camera's pixels and depth: (u, v, z, 0); u, v NaN when it is not in front */
__kernel void mesh_project(int nv, __global const float *pos, float16 cam, float4 intr, __global float4 *uvz)
{
    int i = get_global_id(0);
    if (i >= nv) return;
    float3 p = (float3)(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
    float x = cam.s0 * p.x + cam.s1 * p.y + cam.s2 * p.z + cam.s9;
    float y = cam.s3 * p.x + cam.s4 * p.y + cam.s5 * p.z + cam.sa;
    float z = cam.s6 * p.x + cam.s7 * p.y + cam.s8 * p.z + cam.sb;
    int front = z > 1e-6f;
    uvz[i] = (float4)(front ? intr.x * x / z + intr.z : NAN, front ? intr.y * y / z + intr.w : NAN, z, 0.f);
}

/* twice the signed area of (a, b, p) */
static inline float edge2(float2 a, float2 b, float px, float py)
{
    return (b.x - a.x) * (py - a.y) - (b.y - a.y) * (px - a.x);
}

static inline int clamp_px(float f, int n)
{
    return f < 0.f ? 0 : f > (float)(n - 1) ? n - 1 : (int)f;
}

/* a triangle's corners in pixels, their inverse depths, its doubled area and the pixels its box
   covers; 0 when it draws nothing */
typedef struct {
    float2 p[3];
    float iz[3], area;
    int x0, x1, y0, y1;
} tri_setup;

static int tri_begin(__global const float4 *uvz, __global const uint *tris, int t, int W, int H, tri_setup *s)
{
    float4 q[3];
    for (int k = 0; k < 3; k++) {
        q[k] = uvz[tris[3 * t + k]];
        if (q[k].z <= MESH_NEAR) return 0;
        s->p[k] = q[k].xy, s->iz[k] = 1.f / q[k].z;
    }
    s->area = edge2(s->p[0], s->p[1], s->p[2].x, s->p[2].y);
    if (s->area == 0.f || !isfinite(s->area)) return 0;
    float lo_u = fmin(q[0].x, fmin(q[1].x, q[2].x)), hi_u = fmax(q[0].x, fmax(q[1].x, q[2].x));
    float lo_v = fmin(q[0].y, fmin(q[1].y, q[2].y)), hi_v = fmax(q[0].y, fmax(q[1].y, q[2].y));
    if (lo_u - 0.5f > W - 1 || hi_u < 0.5f || lo_v - 0.5f > H - 1 || hi_v < 0.5f) return 0;
    /* pixel i covers [i, i + 1) with its centre at i + 0.5 */
    s->x0 = clamp_px(ceil(lo_u - 0.5f), W), s->x1 = clamp_px(floor(hi_u - 0.5f), W);
    s->y0 = clamp_px(ceil(lo_v - 0.5f), H), s->y1 = clamp_px(floor(hi_v - 0.5f), H);
    return 1;
}

/* pixel (x, y)'s corner weights (perspective-correct, summing to 1) and depth; 0 when its
   centre is outside */
static inline int tri_pixel(const tri_setup *s, int x, int y, float3 *w, float *z)
{
    float px = x + 0.5f, py = y + 0.5f;
    float b0 = edge2(s->p[1], s->p[2], px, py) / s->area, b1 = edge2(s->p[2], s->p[0], px, py) / s->area;
    float b2 = 1.f - b0 - b1;
    if (b0 < 0.f || b1 < 0.f || b2 < 0.f) return 0;
    float w0 = b0 * s->iz[0], w1 = b1 * s->iz[1], w2 = b2 * s->iz[2], sum = w0 + w1 + w2;
    *z = 1.f / sum;
    *w = (float3)(w0 * *z, w1 * *z, w2 * *z);
    return *z > 0.f;
}

/* the passes over the triangles: PASS 0 the nearest depth at each pixel (DEPTH starts at +inf's
   bits), PASS 1 the first triangle at that depth (TRI starts at MESH_NO_TRI) */
__kernel void mesh_cover(int nt, __global const uint *tris, __global const float4 *uvz, int W, int H, int pass,
                         __global uint *depth, __global int *tri)
{
    int t = get_global_id(0);
    tri_setup s;
    if (t >= nt || !tri_begin(uvz, tris, t, W, H, &s)) return;
    for (int y = s.y0; y <= s.y1; y++)
        for (int x = s.x0; x <= s.x1; x++) {
            float3 w;
            float z;
            size_t i = (size_t)y * W + x;
            if (!tri_pixel(&s, x, y, &w, &z)) continue;
            if (pass == 0) atomic_min(depth + i, as_uint(z));
            else if (as_uint(z) == depth[i]) atomic_min(tri + i, t);
        }
}

/* then per pixel: the winner's weights; TRI becomes -1 where nothing is drawn */
__kernel void mesh_weights(int W, int H, __global const uint *tris, __global const float4 *uvz, __global int *tri,
                           __global float *wts)
{
    int i = get_global_id(0);
    if (i >= W * H) return;
    int t = tri[i];
    tri_setup s;
    float3 w = (float3)(0.f);
    float z;
    if (t == MESH_NO_TRI || !tri_begin(uvz, tris, t, W, H, &s) || !tri_pixel(&s, i % W, i / W, &w, &z)) t = -1;
    tri[i] = t;
    wts[3 * i] = w.x, wts[3 * i + 1] = w.y, wts[3 * i + 2] = w.z;
}

/* per pixel: the drawing IMG (3, H, W) with the vertex colours COL (nv x 3, 0-1), BG where no
   triangle is; what the training loss (cl/ssim.cl) then compares with the photo */
__kernel void mesh_draw(int n, __global const uint *tris, __global const int *tri, __global const float *wts,
                        __global const float *col, float4 bg, __global float *img)
{
    int i = get_global_id(0);
    if (i >= n) return;
    int t = tri[i];
    float3 c = bg.xyz;
    if (t >= 0) {
        uint v0 = tris[3 * t], v1 = tris[3 * t + 1], v2 = tris[3 * t + 2];
        float w0 = wts[3 * i], w1 = wts[3 * i + 1], w2 = wts[3 * i + 2];
        c = w0 * vload3(v0, col) + w1 * vload3(v1, col) + w2 * vload3(v2, col);
    }
    img[i] = c.x, img[n + i] = c.y, img[2 * n + i] = c.z;
}

/* per pixel: the loss's gradient V_IMG (3, H, W) at a drawn pixel, through its corners' weights,
   added into the colours' gradient GRAD (nv x 3) */
__kernel void mesh_color_scatter(int n, __global const uint *tris, __global const int *tri, __global const float *wts,
                                 __global const float *v_img, __global float *grad)
{
    int i = get_global_id(0);
    if (i >= n || tri[i] < 0) return;
    int t = tri[i];
    for (int c = 0; c < 3; c++) {
        float g = v_img[(size_t)c * n + i];
        if (g == 0.f) continue;
        for (int k = 0; k < 3; k++) atomic_add_global_f(grad + 3 * tris[3 * t + k] + c, g * wts[3 * i + k]);
    }
}

/* per pixel of the photo (W x H): the mean of the S x S samples of the drawing HI (3, S H, S W)
   inside it, into LO (3, H, W): the drawing the refinement compares with the photo when it is
   supersampled (the host's --psnr-samples rule, mesh_raster.h) */
__kernel void mesh_box_down(int W, int H, int S, __global const float *hi, __global float *lo)
{
    int i = get_global_id(0);
    if (i >= W * H) return;
    int x = i % W, y = i / W, WS = W * S;
    size_t nh = (size_t)WS * (size_t)(H * S), nl = (size_t)W * H;
    float k = 1.f / (float)(S * S);
    for (int c = 0; c < 3; c++) {
        float s = 0.f;
        for (int sy = 0; sy < S; sy++)
            for (int sx = 0; sx < S; sx++) s += hi[c * nh + (size_t)(y * S + sy) * WS + x * S + sx];
        lo[c * nl + i] = s * k;
    }
}

/* its adjoint, per sample of the drawing (S W x S H): the photo pixel's gradient V_LO (3, H, W)
   over its S x S samples, into V_HI (3, S H, S W) */
__kernel void mesh_box_up(int W, int H, int S, __global const float *v_lo, __global float *v_hi)
{
    int j = get_global_id(0), WS = W * S;
    if (j >= WS * H * S) return;
    size_t nh = (size_t)WS * (size_t)(H * S), nl = (size_t)W * H, i = (size_t)(j / WS / S) * W + (j % WS) / S;
    float k = 1.f / (float)(S * S);
    for (int c = 0; c < 3; c++) v_hi[c * nh + j] = v_lo[c * nl + i] * k;
}

/* Adam on the colours (graphdeco's betas, eps 1e-15) with the gradient GRAD * SCALE, kept in
 * [0, 1]; the gradient is cleared. C1, C2: the bias corrections 1 - beta^step. */
__kernel void mesh_color_adam(int n, __global float *col, __global float *grad, __global float *m1,
                              __global float *m2, float scale, float lr, float c1, float c2)
{
    int i = get_global_id(0);
    if (i >= n) return;
    float g = grad[i] * scale;
    float a = 0.9f * m1[i] + 0.1f * g, b = 0.999f * m2[i] + 0.001f * g * g;
    m1[i] = a, m2[i] = b;
    float x = col[i] - lr * (a / c1) / (sqrt(b / c2) + 1e-15f);
    col[i] = clamp(x, 0.f, 1.f);
    grad[i] = 0.f;
}
