/* psnr_dirs: mean PSNR of the same-named PNGs of two folders (export quality measurements,
 * tools/export_quality.sh; the viewer's renders in tools/check_interop.sh), over the RGB
 * channels (an RGBA PNG's alpha, as a browser's canvas writes it, is not compared).   usage: psnr_dirs DIR_A DIR_B   prints "N views, PSNR mean M dB, min L dB" */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "image.h"
#include "util.h"

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: psnr_dirs DIR_A DIR_B\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "psnr_dirs: cannot open %s\n", argv[1]);
        return 1;
    }
    int n = 0;
    double sum = 0, lo = INFINITY;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".png")) continue;
        char a[2048], b[2048];
        snprintf(a, sizeof a, "%s/%s", argv[1], e->d_name);
        snprintf(b, sizeof b, "%s/%s", argv[2], e->d_name);
        cs_image x, y;
        if (cs_image_load(a, &x) || cs_image_load(b, &y)) {
            fprintf(stderr, "psnr_dirs: %s\n", cs_last_error());
            closedir(d);
            return 1;
        }
        if (x.width != y.width || x.height != y.height) {
            fprintf(stderr, "psnr_dirs: %s and %s differ in size\n", a, b);
            closedir(d);
            return 1;
        }
        double se = 0;
        size_t px = (size_t)x.width * x.height, m = px * 3;
        for (size_t i = 0; i < px; i++)
            for (int c = 0; c < 3; c++) {
                double v = (double)x.px[i * x.channels + c] - y.px[i * y.channels + c];
                se += v * v;
            }
        double db = se == 0 ? 99.0 : 10 * log10(255.0 * 255.0 * m / se);
        sum += db, lo = fmin(lo, db), n++;
        cs_image_free(&x);
        cs_image_free(&y);
    }
    closedir(d);
    printf("%d views, PSNR mean %.2f dB, min %.2f dB\n", n, n ? sum / n : 0, n ? lo : 0);
    return n ? 0 : 1;
}
