/* fuzz_mesh_ply: cs_ply_read_mesh (mesh --from) on arbitrary bytes; every corner it returns is
 * one of the vertices. */
#include <stdlib.h>

#include "fuzz.h"
#include "ply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    float *xyz;
    uint8_t *rgb;
    uint32_t *tri;
    size_t nv, nt;
    if (cs_ply_read_mesh(fuzz_write("in.ply", data, n), &xyz, &rgb, &nv, &tri, &nt) == 0) {
        for (size_t i = 0; i < 3 * nt; i++)
            if (tri[i] >= nv) abort();
        free(xyz), free(rgb), free(tri);
    }
    return 0;
}
