/* fuzz_splat_file: cs_splat_file_read (PLY, compressed PLY, .spz, .splat) on arbitrary bytes;
 * the first byte picks the file name's ending (.splat has no header and goes by its name). */
#include "fuzz.h"
#include "splat_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static const char *const names[4] = {"in.ply", "in.spz", "in.splat", "in.compressed.ply"};
    if (n < 1) return 0;
    cs_splats s;
    if (cs_splat_file_read(fuzz_write(names[data[0] & 3], data + 1, n - 1), &s, NULL) == 0) cs_splats_free(&s);
    return 0;
}
