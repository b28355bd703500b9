/* fuzz_ply: cs_ply_read on arbitrary bytes. */
#include "fuzz.h"
#include "ply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    cs_splats s;
    if (cs_ply_read(fuzz_write("in.ply", data, n), &s) == 0) cs_splats_free(&s);
    return 0;
}
