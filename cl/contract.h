/* contract.h: the mesh volume's contraction (#38), one definition for the kernels (mesh.cl)
 * and the host (mesher.c, the tests). The TSDF grid is laid out in contracted coordinates:
 * inside the box of centre C and half-sizes H (the model's opaque Gaussians) a grid point is
 * its world point; outside it, the point at box-distance r (the largest |p - c| / h over the
 * axes, > 1) sits at 1 + S (1 - 1 / r), so the shell of S half-sizes around the box holds
 * everything out to infinity with voxels that grow as r^2 / S (the L-infinity form of
 * mip-NeRF 360's contraction, stretched to the box). S = 0: no contraction. Written in the
 * subset of C that OpenCL C shares, on scalars. */
#ifndef CS_CONTRACT_H
#define CS_CONTRACT_H

#ifdef __OPENCL_VERSION__
#define CS_CT_FN inline
#else
#define CS_CT_FN static inline
#endif

/* the largest box-distance a grid point stands for (the grid's rim would be infinitely far) */
#define CS_CONTRACT_RMAX 1000.f

typedef struct {
    float c[3], h[3], s;
} cs_contract;

CS_CT_FN float cs_ct_absmax3(float a, float b, float c)
{
    a = a < 0.f ? -a : a, b = b < 0.f ? -b : b, c = c < 0.f ? -c : c;
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* grid point (*x, *y, *z) to its world point, in place; returns the world length of a grid
   unit there along the ray from the centre (1 in the box, r^2 / S outside), the truncation's
   scale */
CS_CT_FN float cs_uncontract(float *x, float *y, float *z, float cx, float cy, float cz, float hx, float hy, float hz,
                             float s)
{
    if (!(s > 0.f)) return 1.f;
    float ux = (*x - cx) / hx, uy = (*y - cy) / hy, uz = (*z - cz) / hz;
    float q = cs_ct_absmax3(ux, uy, uz);
    if (!(q > 1.f)) return 1.f;
    float qmax = 1.f + s * (1.f - 1.f / CS_CONTRACT_RMAX);
    float qc = q < qmax ? q : qmax;
    float r = s / (1.f + s - qc), k = r / q;
    *x = cx + hx * ux * k, *y = cy + hy * uy * k, *z = cz + hz * uz * k;
    return r * r / s;
}

#endif
