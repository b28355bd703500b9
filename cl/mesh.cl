/* mesh.cl: surface extraction from rendered depth (#23). A slab of a dense voxel grid (x
 * fastest, then y, then the slab's layers) fuses one rendered view at a time into a truncated
 * signed distance (projective: the view's depth minus the voxel's camera z, over the truncation,
 * clamped to 1) and a colour, both running means. A pixel with no surface (depth 0) or one past
 * max_depth updates nothing: carving free space along such rays made a second surface under
 * the demo's ground disc, where grazing rays pass its rim (area within 0.03 of the true surfaces
 * 63% with carving, 67% without). Voxels behind a surface by more than the truncation are not
 * touched either; a voxel no view touched keeps weight 0. A voxel in front of the view's surface
 * by more than the truncation (the view sees past it) weighs 1 + CARVE (--carve), so a floater
 * that a few views see as surface and many see through can be outvoted. A negative depth is one
 * the depth check dropped with --carve-dropped: it updates only the voxels in front of -depth
 * by more than the truncation (free space), as a view that sees past them.
 * The surface is extracted by marching tetrahedra: each cell (8 neighbouring voxel centres) is
 * cut into 6 tetrahedra around its main diagonal (Freudenthal / Kuhn), which tile the grid
 * consistently, so the surface has no cracks and no ambiguous cases; cells with a corner no
 * view touched are left out. A vertex on an edge is interpolated from the edge's lower grid
 * corner to its higher one, so every cell that shares the edge computes the same bits and the
 * host welds the triangle soup by position. Triangles face the positive (empty) side.
 * The grid may be contracted (contract.h: CTC.xyz the box's centre, CTC.w its S, 0 for none;
 * CTH.xyz its half-sizes): voxel centres and vertices are grid points taken to the world by
 * cs_uncontract, and the truncation grows with the voxels' world size there, so a far wall
 * gets as many voxels of band as a near one. A vertex is placed on the world segment between
 * its edge's corners, from their distances in world units (cell_world), so the cells that share
 * the edge still compute the same bits. */

/* the voxel's centre on the grid (in the world where the grid is not contracted) */
static inline float3 voxel_centre(float4 grid, int x, int y, int z)
{
    return grid.xyz + grid.w * (float3)((float)x, (float)y, (float)z);
}

/* grid point Q in the world (contract.h); *SCALE: a grid unit's world length there */
static inline float3 to_world(float3 q, float4 ctc, float4 cth, float *scale)
{
    float x = q.x, y = q.y, z = q.z;
    *scale = cs_uncontract(&x, &y, &z, ctc.x, ctc.y, ctc.z, cth.x, cth.y, cth.z, ctc.w);
    return (float3)(x, y, z);
}

__kernel void tsdf_fuse(int nx, int ny, int nz, int z0, /* the slab: nz layers from grid layer z0 */
                        float4 grid,                     /* xyz: centre of voxel (0,0,0); w: voxel size */
                        float4 ctc, float4 cth,          /* the contraction (above) */
                        float trunc, float max_depth,
                        float carve,                     /* a free-space observation weighs 1 + this */
                        float16 cam, float4 intr, int W, int H,
                        __global const float *depth,     /* (2, H, W): expected, median depth; 0: none */
                        int plane,                       /* which of the two */
                        __global const float *img,       /* (3, H, W) */
                        __global float *tsdf,            /* (nz, ny, nx) */
                        __global float4 *colour)         /* (nz, ny, nx): r, g, b, weight */
{
    int i = get_global_id(0);
    if (i >= nx * ny * nz) return;
    int x = i % nx, y = (i / nx) % ny, z = i / (nx * ny) + z0;
    float stretch;
    float3 p = to_world(voxel_centre(grid, x, y, z), ctc, cth, &stretch);
    trunc *= stretch;
    float cx = cam.s0 * p.x + cam.s1 * p.y + cam.s2 * p.z + cam.s9;
    float cy = cam.s3 * p.x + cam.s4 * p.y + cam.s5 * p.z + cam.sa;
    float cz = cam.s6 * p.x + cam.s7 * p.y + cam.s8 * p.z + cam.sb;
    if (cz <= 1e-6f || cz > max_depth) return;
    float u = intr.x * cx / cz + intr.z, v = intr.y * cy / cz + intr.w;
    if (!(u >= 0.f && v >= 0.f && u < (float)W && v < (float)H)) return;
    int pix = (int)v * W + (int)u;
    size_t hw = (size_t)W * H;
    float d = depth[plane * hw + pix];
    int free_only = d < 0.f; /* a depth the check dropped (--carve-dropped) */
    d = fabs(d);
    if (!(d > 0.f && d <= max_depth)) return;
    float sdf = d - cz;
    if (sdf < -trunc || (free_only && sdf <= trunc)) return;
    float s = min(1.f, sdf / trunc), wn = sdf > trunc ? 1.f + carve : 1.f;
    float4 c = colour[i];
    float w = c.w + wn;
    tsdf[i] = (tsdf[i] * c.w + wn * s) / w;
    float3 rgb = (float3)(img[pix], img[hw + pix], img[2 * hw + pix]);
    colour[i] = (float4)((c.xyz * c.w + wn * rgb) / w, w);
}

/* the 6 tetrahedra of a cell: corner bits x | y << 1 | z << 2; each is 0, a, a + b, 7 */
__constant uchar TETS[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};

/* triangles of a tetrahedron whose corners have inside bits MASK (4 bits) */
static inline int tet_triangles(int mask)
{
    int n = popcount(mask);
    return n == 0 || n == 4 ? 0 : n == 2 ? 2 : 1;
}

/* corner values of cell (x, y, z) of the slab, 0 when a corner was never observed */
static inline int cell_values(int nx, int ny, int x, int y, int z, __global const float *tsdf,
                              __global const float4 *colour, float s[8])
{
    for (int c = 0; c < 8; c++) {
        size_t v = ((size_t)(z + (c >> 2)) * ny + (y + ((c >> 1) & 1))) * nx + x + (c & 1);
        if (colour[v].w <= 0.f) return 0;
        s[c] = tsdf[v];
    }
    return 1;
}

/* triangles per cell of the slab's (nx-1) x (ny-1) x (nz-1) cells */
__kernel void mc_count(int nx, int ny, int nz, __global const float *tsdf, __global const float4 *colour,
                       __global uint *count)
{
    int i = get_global_id(0), cx = nx - 1, cy = ny - 1;
    if (i >= cx * cy * (nz - 1)) return;
    int x = i % cx, y = (i / cx) % cy, z = i / (cx * cy);
    float s[8];
    uint n = 0;
    if (cell_values(nx, ny, x, y, z, tsdf, colour, s))
        for (int t = 0; t < 6; t++) {
            int mask = 0;
            for (int k = 0; k < 4; k++) mask |= (s[TETS[t][k]] < 0.f) << k;
            n += tet_triangles(mask);
        }
    count[i] = n;
}

/* the corners of the slab's cell (x, y, z) in the world (W), the slab starting at grid layer Z0,
   and their signed distances S taken to world units over the truncation (the stored value
   times the stretch there, so that corners of different stretch interpolate alike; the
   signs stay) */
static inline void cell_world(float4 grid, float4 ctc, float4 cth, int x, int y, int z, int z0, float s[8], float3 w[8])
{
    for (int c = 0; c < 8; c++) {
        float stretch;
        w[c] = to_world(voxel_centre(grid, x + (c & 1), y + ((c >> 1) & 1), z0 + z + (c >> 2)), ctc, cth, &stretch);
        s[c] *= stretch;
    }
}

/* the vertex on the edge between corners A and B of the slab's cell (x, y, z): where the
   distance crosses zero on the world segment between them, from the lower corner in grid
   order (bits grow with x, y, z) */
static inline float4 edge_vertex(int x, int y, int z, int a, int b, const float s[8], const float3 w[8], float3 *pos,
                                 __global const float4 *colour, int nx, int ny)
{
    if (a > b) { int t = a; a = b; b = t; }
    float f = s[a] / (s[a] - s[b]);
    *pos = w[a] + f * (w[b] - w[a]);
    size_t va = ((size_t)(z + (a >> 2)) * ny + (y + ((a >> 1) & 1))) * nx + x + (a & 1);
    size_t vb = ((size_t)(z + (b >> 2)) * ny + (y + ((b >> 1) & 1))) * nx + x + (b & 1);
    return colour[va] + f * (colour[vb] - colour[va]);
}

/* triangle AT, faced towards the positive side (DIR: from the inside corners to the outside
   ones), into OUT at AT - LO when it is in the pass's window [LO, HI) */
static inline void put_triangle(__global uint4 *out, uint at, uint lo, uint hi, float3 p[3], float4 c[3], float3 dir)
{
    if (at < lo || at >= hi) return;
    at -= lo;
    if (dot(cross(p[1] - p[0], p[2] - p[0]), dir) < 0.f) {
        float3 tp = p[1]; p[1] = p[2]; p[2] = tp;
        float4 tc = c[1]; c[1] = c[2]; c[2] = tc;
    }
    for (int k = 0; k < 3; k++) {
        float4 q = clamp(c[k], 0.f, 1.f) * 255.f + 0.5f;
        uint rgb = (uint)q.x | (uint)q.y << 8 | (uint)q.z << 16;
        out[3 * at + k] = (uint4)(as_uint(p[k].x), as_uint(p[k].y), as_uint(p[k].z), rgb);
    }
}

/* the slab's triangles LO .. HI - 1 (a pass: the host emits a large slab's triangles in several):
   (float bits of x, y, z; colour as 8-bit r | g << 8 | b << 16) per corner, 3 corners a
   triangle, from each cell's offset (the scanned counts, one past the last cell included) */
__kernel void mc_emit(int nx, int ny, int nz, int z0, float4 grid, float4 ctc, float4 cth, __global const float *tsdf,
                      __global const float4 *colour, __global const uint *offset, uint lo, uint hi, __global uint4 *out)
{
    int i = get_global_id(0), cx = nx - 1, cy = ny - 1;
    if (i >= cx * cy * (nz - 1)) return;
    int x = i % cx, y = (i / cx) % cy, z = i / (cx * cy);
    uint at = offset[i];
    if (at >= hi || offset[i + 1] <= lo) return; /* none of this cell's triangles in the pass */
    float s[8];
    float3 w[8];
    if (!cell_values(nx, ny, x, y, z, tsdf, colour, s)) return;
    cell_world(grid, ctc, cth, x, y, z, z0, s, w);
    for (int t = 0; t < 6; t++) {
        int in[4], outc[4], ni = 0, no = 0;
        for (int k = 0; k < 4; k++) {
            int c = TETS[t][k];
            if (s[c] < 0.f) in[ni++] = c;
            else outc[no++] = c;
        }
        if (ni == 0 || no == 0) continue;
        float3 ci = (float3)(0.f), co = (float3)(0.f);
        for (int k = 0; k < ni; k++) ci += w[in[k]] / (float)ni;
        for (int k = 0; k < no; k++) co += w[outc[k]] / (float)no;
        float3 dir = co - ci, p[3];
        float4 c[3];
        if (ni == 1 || no == 1) { /* one corner apart: a triangle on its three edges */
            int lone = ni == 1 ? in[0] : outc[0];
            int *rest = ni == 1 ? outc : in;
            for (int k = 0; k < 3; k++) c[k] = edge_vertex(x, y, z, lone, rest[k], s, w, &p[k], colour, nx, ny);
            put_triangle(out, at++, lo, hi, p, c, dir);
        } else { /* two and two: the quad in0-out0, in0-out1, in1-out1, in1-out0 */
            float3 q[4];
            float4 qc[4];
            qc[0] = edge_vertex(x, y, z, in[0], outc[0], s, w, &q[0], colour, nx, ny);
            qc[1] = edge_vertex(x, y, z, in[0], outc[1], s, w, &q[1], colour, nx, ny);
            qc[2] = edge_vertex(x, y, z, in[1], outc[1], s, w, &q[2], colour, nx, ny);
            qc[3] = edge_vertex(x, y, z, in[1], outc[0], s, w, &q[3], colour, nx, ny);
            p[0] = q[0], p[1] = q[1], p[2] = q[2], c[0] = qc[0], c[1] = qc[1], c[2] = qc[2];
            put_triangle(out, at++, lo, hi, p, c, dir);
            p[0] = q[0], p[1] = q[2], p[2] = q[3], c[0] = qc[0], c[1] = qc[2], c[2] = qc[3];
            put_triangle(out, at++, lo, hi, p, c, dir);
        }
    }
}
