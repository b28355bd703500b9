/* fuzz_image: cs_image_load (PNG and JPEG) on arbitrary bytes. */
#include "fuzz.h"
#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    cs_image img;
    if (cs_image_load(fuzz_write("in.img", data, n), &img) == 0) cs_image_free(&img);
    return 0;
}
