/* fuzz_colmap: a COLMAP model (cameras, images, points3D; binary and text) from records of
 * the input (fuzz.h), over a folder of the 32x24 images the seed models name, through
 * cs_scene_load. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "image.h"
#include "util.h"

static const char *const FILES[] = {"sparse/0/cameras.bin", "sparse/0/images.bin", "sparse/0/points3D.bin",
                                    "sparse/0/cameras.txt", "sparse/0/images.txt", "sparse/0/points3D.txt"};

static void make_images(void)
{
    static int done;
    if (done) return;
    done = 1;
    char p[1200];
    unsigned char px[32 * 24 * 3] = {0};
    cs_image img = {32, 24, 3, px};
    for (int i = 0; i < 10; i++) {
        snprintf(p, sizeof p, "%s/images/img_%02d.png", fuzz_dir(), i);
        char dir[1200];
        snprintf(dir, sizeof dir, "%s/images", fuzz_dir());
        cs_mkdirs(dir);
        cs_image_save_png(p, &img);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    make_images();
    fuzz_load_scene(data, n, FILES, 6);
    return 0;
}
