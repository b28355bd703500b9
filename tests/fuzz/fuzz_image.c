/* fuzz_image: cs_image_load (PNG and JPEG) and cs_image_probe (sizes, EXIF orientation) on
 * arbitrary bytes; a decoded image is also turned by its orientation. */
#include "fuzz.h"
#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    cs_image img;
    const char *path = fuzz_write("in.img", data, n);
    int w, h, o = 1;
    if (cs_image_probe(path, &w, &h, &o) != 0) o = 1;
    if (cs_image_load(path, &img) == 0) {
        if (cs_image_orient(&img, o) == 0 && o >= 5 && (img.width != h || img.height != w)) __builtin_trap();
        cs_image_free(&img);
    }
    return 0;
}
