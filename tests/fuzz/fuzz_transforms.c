/* fuzz_transforms: Blender (transforms_train.json, transforms_test.json) and nerfstudio
 * (transforms.json) camera files from records of the input (fuzz.h), over a few small
 * images, through cs_scene_load. */
#include <stdio.h>
#include <string.h>

#include "fuzz.h"
#include "image.h"
#include "util.h"

static const char *const FILES[] = {"transforms_train.json", "transforms_test.json", "transforms.json"};

static void make_images(void)
{
    static int done;
    if (done) return;
    done = 1;
    char p[1200], dir[1200];
    unsigned char px[16 * 12 * 4] = {0};
    cs_image img = {16, 12, 4, px};
    snprintf(dir, sizeof dir, "%s/train", fuzz_dir());
    cs_mkdirs(dir);
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/train/r_%d.png", fuzz_dir(), i);
        cs_image_save_png(p, &img);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    make_images();
    fuzz_load_scene(data, n, FILES, 3);
    return 0;
}
